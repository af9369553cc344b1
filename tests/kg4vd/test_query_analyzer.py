"""KG4VD query analyzer: offline rules, option / fixed_mode precedence."""

from __future__ import annotations

import json

import pytest

from docgraph import Workspace
from docgraph.errors import InputError
from docgraph.methods.kg4vd.analyzer import choose_mode, named_spans, rule_mode, validate_mode


@pytest.mark.parametrize(
    "question",
    [
        "Summarize the main findings of the report.",
        "What are the main themes of this textbook?",
        "How does the notion of empire develop throughout the book?",
        "Give an overview of the company's climate targets.",
        "What trends appear across the chapters on trade?",
        "Describe the overall structure of the deck.",
        "Based on the table of contents, describe the scope and structure of Unit 4 of this textbook.",
    ],
)
def test_document_cues(question):
    assert rule_mode(question)[0] == "document"


@pytest.mark.parametrize(
    "question",
    [
        "Compare the revenue of 2019 with 2020.",
        "What is the difference between supervised and unsupervised learning?",
        "Did both Kublai Khan and Marco Polo visit Beijing?",
        "Marco Polo left Venice and then where did he go?",
        "Which dynasty was established by the ruler that Marco Polo served?",
        "How did the Black Death affect trade on the Silk Road?",
        "What is the relationship between the Mongol Empire and the Silk Road?",
        "Was Genghis Khan older than Kublai Khan or Mansa Musa?",
        "Where did Genghis Khan, Kublai Khan and Marco Polo meet?",
    ],
)
def test_multi_hop_cues(question):
    assert rule_mode(question)[0] == "multi_hop"


@pytest.mark.parametrize(
    "question",
    [
        "What is the title of Unit 4 of this World History textbook?",
        "How many chapters does Unit 4 contain?",
        "Which university is OpenStax affiliated with?",
        "Under what license is this textbook published?",
        "What year is the report for?",
        "What is the value shown for 2015 in the bar chart?",
    ],
)
def test_local_lookups(question):
    assert rule_mode(question)[0] == "local"


def test_world_history_questions_follow_their_style(shared_data):
    """The test set's MMLongBench-style questions are lookups; its DLVQA-style ones are
    document-level."""
    rows = [
        json.loads(line)
        for line in (shared_data / "kg4vd_test" / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for row in rows:
        expected = "document" if row["style"] == "dlvqa" else "local"
        assert rule_mode(row["question"])[0] == expected, row["question"]


def test_named_spans_skip_the_first_word():
    assert named_spans("What did Genghis Khan found?") == ["Genghis Khan"]
    assert named_spans("Kublai Khan ruled where?") == ["Khan"]


def test_validate_mode():
    assert validate_mode(None) is None
    assert validate_mode("auto") is None
    assert validate_mode("multi_hop") == "multi_hop"
    with pytest.raises(InputError, match="unknown KG4VD mode 'global'"):
        validate_mode("global")


def test_precedence_option_then_fixed_mode_then_rules(tmp_path):
    with Workspace(tmp_path / "a") as ws:
        ctx = ws.context()
        decision = choose_mode(ctx, "Summarize the report.")
        assert (decision.mode, decision.source) == ("document", "rules")
        assert choose_mode(ctx, "Summarize the report.", "local").source == "option"
        assert choose_mode(ctx, "Summarize the report.", "local").mode == "local"
    with Workspace(tmp_path / "b", overrides={"kg4vd": {"fixed_mode": "document"}}) as ws:
        ctx = ws.context()
        decision = choose_mode(ctx, "What year is the report for?")
        assert (decision.mode, decision.source) == ("document", "config")
        assert choose_mode(ctx, "What year is the report for?", "local").mode == "local"
