"""Offline extraction of MMLongBench-Doc short answers, and the scores they get."""

from __future__ import annotations

import pytest

from docgraph.eval.answer_format import extract_in_format, response_body
from docgraph.eval.metrics import mmlongbench_score
from docgraph.methods.answers.extractive import NOTHING_FOUND, OFFLINE_NOTICE

OFFLINE = (
    f"{OFFLINE_NOTICE}\n- \u201cIn 2018, 1,234 adults (18.29%) said their finances were poor.\u201d [1]\n"
    "- \u201cOther evidence follows here.\u201d [2]"
)


def test_body_drops_notice_bullets_quotes_and_citations():
    body = response_body(OFFLINE)
    assert body.splitlines() == [
        "In 2018, 1,234 adults (18.29%) said their finances were poor.",
        "Other evidence follows here.",
    ]
    assert response_body("It is 5 [1, 2].") == "It is 5."


@pytest.mark.parametrize(
    "fmt, question, expected",
    [
        ("Int", "How many adults in 2018 said so?", "1234"),  # the year the question states is skipped
        ("Float", "What share of adults?", "18.29%"),
        ("Str", "Who said so?", "In 2018, 1,234 adults (18.29%) said their finances were poor"),
    ],
)
def test_offline_quotes(fmt, question, expected):
    assert extract_in_format(OFFLINE, fmt, question) == expected


def test_offline_quotes_are_not_refusals_but_finding_nothing_is():
    assert (
        extract_in_format(f"{OFFLINE_NOTICE}\n- \u201cThe report does not mention costs.\u201d [1]", "Str")
        == "The report does not mention costs"
    )
    assert extract_in_format(NOTHING_FOUND, "Int") == "Not answerable"
    assert extract_in_format("", "Str") == "Not answerable"


@pytest.mark.parametrize(
    "response, fmt, question, expected",
    [
        ("The answer is 42 [1].", "Int", "", "42"),
        ("There are three cameras on the back.", "Int", "", "3"),
        ("It rose 12.7 times, to $3,400.50.", "Float", "", "12.7"),
        ("It grew by 4.5 percent.", "Float", "", "4.5%"),
        ("The shapes are: Circle, Rectangle and Triangle [2].", "List", "", "['Circle', 'Rectangle', 'Triangle']"),
        ("- White\n- 10%", "List", "", "['White', '10%']"),
        ("Yes, the chart shows growth [3].", "Str", "Does the chart show growth?", "Yes"),
        ("The document does not mention the price.", "Float", "", "Not answerable"),
        ("I cannot determine this from the pages.", "List", "", "Not answerable"),
        ("No figures here", "Int", "", "No figures here"),  # nothing numeric: the text itself (scores 0)
    ],
)
def test_model_style_responses(response, fmt, question, expected):
    assert extract_in_format(response, fmt, question) == expected


def test_extracted_answers_score_under_the_benchmark_rules():
    assert (
        mmlongbench_score(
            "['Circle', 'Rectangle', 'Triangle']",
            extract_in_format("Shapes: circle, triangle and rectangle.", "List"),
            "List",
        )
        == 1.0
    )
    assert mmlongbench_score("18.29%", extract_in_format(OFFLINE, "Float"), "Float") == 1.0
    assert mmlongbench_score("Not answerable", extract_in_format(NOTHING_FOUND, "None"), "None") == 1.0
