"""``benchmarks/label_questions.py``: the labels a real document defines, and the questions
asked about them (the gold pages the benchmark measures against)."""

from __future__ import annotations

from pathlib import Path

import pytest


def _document(shared_data: Path, name: str) -> Path:
    path = shared_data / "mmlongbench_doc" / "documents" / name
    if not path.is_file():
        pytest.skip("the MMLongBench-Doc documents are not in the shared data")
    return path


def test_a_filing_defines_its_notes_where_their_headings_are_not_where_they_are_listed(
    shared_data: Path, benchmark_script
):
    labels = benchmark_script("label_questions").defined_labels(_document(shared_data, "NIKE_2021_10K.pdf"))
    notes = {number: page for (kind, number), page in labels.items() if kind == "Note"}
    assert notes["10"] == 79 and notes["11"] == 79, '"NOTE 10 — REDEEMABLE PREFERRED STOCK" on p. 79'
    assert 64 not in notes.values(), "p. 64 lists Notes 1-21 (a contents page): it defines none of them"


def test_a_paper_numbering_its_tables_in_roman_numerals_gets_questions_in_both_forms(
    shared_data: Path, benchmark_script
):
    module = benchmark_script("label_questions")
    labels = module.defined_labels(_document(shared_data, "2312.10997v5.pdf"))
    assert labels[("Table", "II")] == 13 and labels[("Table", "IV")] == 15
    asked = {question: (kind, page) for kind, question, page in module.questions(labels)}
    assert asked["What does Table II show?"] == ("Table", 13)
    assert asked["What does Table 2 show?"] == ("Table (Roman, asked in Arabic)", 13)
    romans = [number for kind, number in labels if kind == "Table" and number.isalpha()]
    assert len(asked) == len(labels) + len(romans), "one question per label, two per Roman-numbered one"
