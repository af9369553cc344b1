"""Metrics on hand-computed cases: normalisation, EM/F1/containment, refusals, retrieval, categories."""

from __future__ import annotations

import math

import pytest

from docgraph.eval.metrics import (
    containment,
    exact_match,
    is_refusal,
    is_unanswerable_gold,
    judged_accuracy,
    mean_by_category,
    recall_at_k,
    reciprocal_rank,
    retrieval_summary,
    score_short_answer,
    token_f1,
    valid_gold_pages,
)
from docgraph.eval.normalize import answer_tokens, normalize_answer, strip_answer_prefix


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  An   apple, a day ", "apple day"),
        ("1,234,567 dollars", "1234567 dollars"),
        ("50.190%", "50.19"),
        ("3.0", "3"),
        ("$2.50", "2.5"),
        ("COVID-19", "covid 19"),
        ("1200–1500 CE", "1200 1500 ce"),
        ("U.S.", "us"),
        ("don't", "dont"),
        ("Ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
        ("", ""),
    ],
)
def test_normalize_answer(raw, expected):
    assert normalize_answer(raw) == expected


def test_strip_answer_prefix():
    assert strip_answer_prefix("The answer is C") == "C"
    assert strip_answer_prefix("So, the final answer is: 42.") == "42"
    assert strip_answer_prefix("Answer: Rice University") == "Rice University"
    assert strip_answer_prefix("Rice University") == "Rice University"


def test_exact_match():
    assert exact_match("the Rice University.", "Rice University") == 1.0
    assert exact_match("Rice", "Rice University") == 0.0
    assert exact_match("1,000", "1000") == 1.0
    assert exact_match("Stanley Hall", ["G. Stanley Hall", "Stanley Hall"]) == 1.0


def test_token_f1_hand_computed():
    # pred tokens: [new, york, city]; gold: [new, york]; common 2 → P = 2/3, R = 1, F1 = 0.8
    assert token_f1("New York City", "new york") == pytest.approx(0.8)
    # multiset: pred [a1, a1, b] vs gold [a1, c]: common 1 → P = 1/3, R = 1/2, F1 = 0.4
    assert token_f1("x x y", "x z") == pytest.approx(0.4)
    assert token_f1("nothing shared", "else") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "a thing") == 0.0
    # best over alternatives: 0.8 vs 1.0
    assert token_f1("new york", ["New York City", "New York"]) == 1.0
    assert answer_tokens("The New-York city") == ["new", "york", "city"]


def test_containment_uses_whole_tokens_of_the_raw_response():
    assert containment("According to the table, the value is 50.19.", "50.19") == 1.0
    assert containment("The value is 150.19", "50.19") == 0.0
    assert containment("It happened in 2015", "5") == 0.0
    assert containment("Rice University, in Houston", ["Harvard", "rice university"]) == 1.0
    assert containment("", "the") == 1.0 and containment("something", "the") == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "Not answerable",
        "This question is unanswerable.",
        "The document does not mention the revenue in 2019.",
        "There is insufficient information to answer.",
        "I don't know.",
        "It is not specified in the report.",
        "The answer cannot be determined from the provided pages.",
        "No relevant information was found.",
        "The paper doesn’t mention the dataset size",
        "",
        "   ",
    ],
)
def test_refusals_detected(text):
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "No",
        "None",
        "0",
        "Yes",
        "No, the table does not list Nike.",
        "Trained without manually labeled data",
        "The revenue was not reported as a loss.",
        "Less well-off",
        "Not at all likely",
    ],
)
def test_plain_answers_are_not_refusals(text):
    assert not is_refusal(text)


def test_unanswerable_scoring_mmlongbench_style():
    assert is_unanswerable_gold("Not answerable") and is_unanswerable_gold(["Unanswerable"])
    assert not is_unanswerable_gold(["Unanswerable", "Yes"])
    right = score_short_answer("The report does not provide this information.", "Not answerable")
    assert (right.em, right.f1, right.acc, right.unanswerable) == (1.0, 1.0, 1.0, True)
    wrong = score_short_answer("The answer is 42", "Not answerable")
    assert (wrong.em, wrong.f1, wrong.acc) == (0.0, 0.0, 0.0)
    # a refusal on an answerable question scores nothing, even if it contains gold tokens
    declined = score_short_answer("There is no information about answerable questions", "answerable questions")
    assert (declined.em, declined.f1, declined.acc) == (0.0, 0.0, 0.0)


def test_score_short_answer_extracted_vs_raw():
    raw = "According to the table, the value is 50.19."
    score = score_short_answer(raw, "50.19", extracted="50.19")
    assert (score.em, score.f1, score.acc) == (1.0, 1.0, 1.0)
    raw_only = score_short_answer(raw, "50.19")
    assert raw_only.em == 0.0 and raw_only.acc == 1.0
    # raw tokens [according, to, table, value, is, 50.19] vs [50.19] → P = 1/6, R = 1 → F1 = 2/7
    assert raw_only.f1 == pytest.approx(2 / 7)


def test_judged_accuracy_averages_judges():
    assert judged_accuracy({"gpt": [True, False, True, True], "gemini": [True, False, False, True]}) == 0.625
    with pytest.raises(ValueError):
        judged_accuracy({"gpt": [True], "gemini": [True, False]})


def test_recall_and_mrr_hand_computed():
    ranked = [("d", 3), ("d", 7), ("d", 3), ("d", 1), ("d", 9)]
    gold = [("d", 1), ("d", 7), ("d", 2)]
    assert recall_at_k(ranked, gold, 1) == 0.0
    assert recall_at_k(ranked, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, gold, 3) == pytest.approx(2 / 3)  # the repeated page does not take a slot
    assert reciprocal_rank(ranked, gold) == 0.5
    assert reciprocal_rank(["x"], ["y"]) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 5)


def test_retrieval_summary_excludes_questions_without_gold():
    counts = {"a.pdf": 10}
    golds = [
        valid_gold_pages([("a.pdf", 2), ("a.pdf", 14)], counts),  # page 14 is past the end
        valid_gold_pages([("a.pdf", 11)], counts),  # nothing valid → excluded
        [("a.pdf", 5), ("a.pdf", 6)],
    ]
    assert golds[0] == [("a.pdf", 2)] and golds[1] == []
    rankings = [[("a.pdf", 1), ("a.pdf", 2)], [("a.pdf", 11)], [("a.pdf", 6), ("a.pdf", 9), ("a.pdf", 5)]]
    summary = retrieval_summary(rankings, golds, ks=(1, 2))
    assert summary.n_evaluated == 2 and summary.n_excluded == 1 and summary.excluded == [1]
    # q0: r@1 = 0, r@2 = 1, rr = 1/2;  q2: r@1 = 1/2, r@2 = 1/2, rr = 1
    assert summary.recall[1] == pytest.approx(0.25)
    assert summary.recall[2] == pytest.approx(0.75)
    assert summary.mrr == pytest.approx(0.75)
    assert summary.as_dict()["n_excluded"] == 1
    empty = retrieval_summary([[]], [[]])
    assert empty.n_evaluated == 0 and math.isnan(empty.mrr)


def test_mean_by_category_counts_multi_source_questions_in_each():
    values = [1.0, 0.0, 0.5, 1.0, float("nan")]
    sources = [["chart", "text"], ["text"], [], "table", ["chart"]]
    out = mean_by_category(values, sources)
    assert out["overall"].mean == pytest.approx(2.5 / 4) and out["overall"].count == 4
    assert out["chart"].mean == 1.0 and out["chart"].count == 1  # NaN skipped
    assert out["text"].mean == 0.5 and out["text"].count == 2
    assert out["none"].mean == 0.5 and out["table"].count == 1
    assert list(out) == ["overall", "chart", "none", "table", "text"]
    with pytest.raises(ValueError):
        mean_by_category([1.0], [])
