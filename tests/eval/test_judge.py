"""The judge model side, through scripted replies of the loopback stub: two judges averaged,
answer extraction, FineSurE labels, pairwise verdicts in both orders."""

from __future__ import annotations

import json

import pytest

from docgraph.eval.judge import (
    answer_sentences,
    extract_answer,
    extract_formatted_answer,
    finesure_judgement,
    judged_verdicts,
    pairwise_judgement,
)
from docgraph.eval.metrics import judged_accuracy
from docgraph.eval.metrics_judged import win_rates
from docgraph.testing.fixtures import make_hub, stub_settings


def judge_pair(stub, tmp_path):
    """Two judges on the stub's endpoint, told apart by model name (as ``--judges a,b``)."""
    judges = {}
    for name in ("judge-a", "judge-b"):
        settings = stub_settings(stub, roles=("judge",), model=name)
        judges[name] = make_hub(settings, tmp_path / name).chat("judge")
    return judges


def by_model(replies: dict[str, object]):
    return lambda request: replies[request.body["model"]]


def test_two_judges_are_averaged(openai_stub, tmp_path):
    judges = judge_pair(openai_stub, tmp_path)
    # judge-a accepts both answers; judge-b accepts only the one that names the number
    openai_stub.reply(
        lambda r: {"correct": r.body["model"] == "judge-a" or "42" in r.prompt.split("Response:")[1]},
        stage="eval.judge.accuracy",
    )
    first = judged_verdicts(judges, "How many?", "42", "There are 42 of them [1].")
    second = judged_verdicts(judges, "How many?", "42", "Several.")
    assert first == {"judge-a": True, "judge-b": True} and second == {"judge-a": True, "judge-b": False}
    by_judge = {name: [first[name], second[name]] for name in judges}
    assert judged_accuracy(by_judge) == pytest.approx((1.0 + 0.5) / 2)
    seen = openai_stub.seen("/chat/completions", stage="eval.judge.accuracy")
    assert {r.body["model"] for r in seen} == {"judge-a", "judge-b"} and len(seen) == 4
    assert "Reference answer: 42" in seen[0].prompt


def test_answer_extraction_uses_the_model_or_strips_lead_ins(openai_stub, tmp_path):
    model = make_hub(stub_settings(openai_stub, roles=("answer",)), tmp_path).chat("answer")
    openai_stub.reply({"answer": "50.19"}, stage="eval.extract_answer")
    assert extract_answer(model, "What value?", "According to the table, the value is 50.19 [2].", "Float") == "50.19"
    assert "Expected answer type: Float" in openai_stub.requests[-1].prompt
    assert extract_answer(None, "q", "The answer is Rome.") == "Rome"


def test_formatted_extraction_asks_for_the_benchmark_format(openai_stub, tmp_path):
    model = make_hub(stub_settings(openai_stub, roles=("answer",)), tmp_path).chat("answer")
    openai_stub.reply({"answer": ["Circle", " Rectangle"]}, stage="eval.extract_answer.formatted", times=1)
    shapes = extract_formatted_answer(model, "Which shapes?", "A circle and a rectangle [1].", "List")
    assert shapes == "['Circle', 'Rectangle']", "a JSON list becomes the benchmark's list literal"
    assert "The answer must have this format: List" in openai_stub.requests[-1].prompt
    openai_stub.reply({"answer": 12}, stage="eval.extract_answer.formatted")
    assert extract_formatted_answer(model, "How many?", "Twelve of them.", "Int") == "12"
    assert "format: Integer" in openai_stub.requests[-1].prompt
    calls = len(openai_stub.requests)
    assert extract_formatted_answer(model, "How many?", "  ", "Int") == "Not answerable"
    assert len(openai_stub.requests) == calls, "an empty response needs no call"


def test_finesure_labels_become_a_judgement(openai_stub, tmp_path):
    judge = judge_pair(openai_stub, tmp_path)["judge-a"]
    answer = "Softmax turns scores into probabilities. SVM is always better."
    assert len(answer_sentences(answer)) == 2
    # one stage, two prompts: route by the prompt's opening line
    openai_stub.reply(
        lambda r: (
            {
                "facts": [
                    {"fact": 1, "covered": True, "sentences": [1]},
                    {"fact": 2, "covered": False, "sentences": []},
                    {"fact": 3, "covered": True, "sentences": [9]},
                ]
            }
            if r.prompt.startswith("You check which key facts")
            else {
                "sentences": [
                    {"sentence": 1, "category": "no error"},
                    {"sentence": 2, "category": "out-of-context error"},
                ]
            }
        ),
        stage="eval.judge.finesure",
    )
    facts = ["Softmax outputs probabilities.", "SVM maximises the margin.", "Both are linear classifiers."]
    judgement = finesure_judgement(judge, "Compare softmax and SVM.", answer, "reference summary", facts)
    assert list(judgement.sentence_faithful) == [True, False]
    assert list(judgement.sentence_aligned) == [True, False]
    assert list(judgement.fact_covered) == [True, False, True], "covered even where the sentence number is bad"
    assert judgement.scores() == {"faithfulness": 0.5, "completeness": pytest.approx(2 / 3), "conciseness": 0.5}
    assert openai_stub.count(stage="eval.judge.finesure") == 2


def test_pairwise_is_judged_in_both_orders_and_needs_agreement(openai_stub, tmp_path):
    judges = judge_pair(openai_stub, tmp_path)
    detailed, short = "A detailed answer with many specifics.", "Short."

    def verdict(request):
        first = request.prompt.split("Answer 1:")[1].split("Answer 2:")[0]
        better = "1" if "detailed" in first else "2"
        return {
            "comprehensiveness": {"winner": better},
            "diversity": {"winner": "1"},  # position-biased
            "empowerment": {"winner": better if request.body["model"] == "judge-a" else "tie"},
            "overall": {"winner": better},
        }

    openai_stub.reply(verdict, stage="eval.judge.pairwise")
    judgements = [pairwise_judgement(judge, name, "Explain.", detailed, short) for name, judge in judges.items()]
    assert judgements[0].first_order["comprehensiveness"] == "1"
    assert judgements[0].second_order["comprehensiveness"] == "2"
    rates = win_rates(judgements)
    assert rates["comprehensiveness"].win == 1.0 and rates["overall"].win == 1.0
    assert rates["diversity"].tie == 1.0, "an order-dependent verdict is a tie"
    assert rates["empowerment"].win == pytest.approx(0.5), "judges averaged: one win, one tie"
    prompts = [r.prompt for r in openai_stub.seen("/chat/completions", stage="eval.judge.pairwise")]
    assert len(prompts) == 4 and json.dumps(prompts).count("A detailed answer") == 4
