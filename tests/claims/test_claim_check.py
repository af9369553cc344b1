"""The claim check without a model (issue 57): numbers in any scale or unit, dates, years
and names against the evidence each sentence cites; statuses and the drop mode."""

from __future__ import annotations

import pytest

from docgraph.methods.answers.answer_sentences import answer_sentences, markers
from docgraph.methods.answers.claims import Support, check_text
from docgraph.methods.answers.figures import EvidenceFigures, claim_figures
from docgraph.methods.answers.names import claim_names

FILING = Support(
    "Consolidated statements (in millions)\nNet sales | 1,076 | 982\nOperating margin 12.5% in 2022, "
    "up from 11.9% in 2021. As of December 31, 2022 Acme Robotics employed three thousand people.",
    "Acme Robotics annual report 2022",
)
OTHER = Support("Our offices are in Lyon. Weather was mild in 2020.", "Travel notes")


@pytest.mark.parametrize(
    "stated",
    [
        "$1,076M",
        "1,076 million",
        "$1.076 billion",
        "1076000000",
        "USD 1,076 mn",
        "$1.08 billion",
        "$1.1 billion",
        "1,076",
    ],
)
def test_one_value_in_any_scale_is_found(stated):
    figures, _ = claim_figures(f"Net sales were {stated} [1].")
    assert len(figures) == 1 and EvidenceFigures(FILING.cited).has_figure(figures[0]), stated


@pytest.mark.parametrize(
    "stated", ["$1,067M", "$10.76 billion", "$1.2 billion", "$2 billion", "13.5%", "1,706 million"]
)
def test_a_changed_number_is_not_found(stated):
    figures, _ = claim_figures(f"Net sales were {stated} [1].")
    assert figures and not EvidenceFigures(FILING.cited).has_figure(figures[0]), stated


def test_references_to_the_document_and_markers_are_not_claims():
    figures, dates = claim_figures("See Item 7 and Note 5 of the Form 10-K, page 12 [3].")
    assert figures == [] and dates == []
    figures, dates = claim_figures("It closed on March 31, 2023, in FY23 and Q4 2022.")
    assert [d.text for d in dates] == ["March 31, 2023"]
    assert sorted(int(f.value) for f in figures if f.kind == "year") == [2022, 2023]


def test_names():
    assert claim_names("The CEO, Tim Cook, met JPMorgan Chase & Co. in Paris.") == [
        "CEO",
        "Tim Cook",
        "JPMorgan Chase & Co",
        "Paris",
    ]
    assert claim_names("However, revenue rose.") == []
    assert claim_names("3M grew; it earned $3M.") == ["3M"]


def test_sentences_keep_their_offsets_and_markers():
    text = "- **Revenue** was $5M [1][2]. Acme Inc. grew, e.g. in Lyon.[3]\n1. Third? Yes!"
    spans = answer_sentences(text)
    assert [s.text for s in spans] == [
        "Revenue** was $5M [1][2].",
        "Acme Inc. grew, e.g. in Lyon.[3]",
        "Third?",
        "Yes!",
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)
    assert markers(spans[0].text) == [1, 2] and markers("[4, 5]") == [4, 5]


def statuses(text: str, supports=None) -> list[tuple[str, list[str]]]:
    return [
        (c.status, c.missing)
        for c in check_text(text, supports or {1: FILING, 2: OTHER}, question="What were Acme's net sales?")
    ]


def test_statuses():
    # (a) a correct quote
    assert statuses("Net sales were $1,076 million in 2022 [1].") == [("supported", [])]
    # (b) a changed number
    assert statuses("Net sales were $1,067 million in 2022 [1].") == [("unsupported", ["$1,067 million"])]
    # (c) the right sentence citing the wrong page
    assert statuses("Net sales were $1,076 million [2].") == [("unsupported", ["$1,076 million"])]
    # (d) citing nothing
    assert statuses("Net sales were $1,076 million.") == [("uncited", ["$1,076 million"])]
    # (e) another scale and unit
    assert statuses("Acme Robotics sold $1.076 billion, a 12.5 percent margin [1].") == [("supported", [])]
    # figures found, a name or a year not: partly
    assert statuses("Tim Cook said net sales were 1,076 million in 2019 [1].") == [("partly", ["2019", "Tim Cook"])]
    # a date the evidence does not hold
    assert statuses("As of June 30, 2022, sales were $1,076M [1].")[0][0] == "unsupported"
    # nothing to check and no marker: not a claim; nothing to check but cited: supported
    assert statuses("Here is what the filing says:") == []
    assert statuses("The filing discusses sales [1].") == [("supported", [])]
    # a marker the answer does not list counts as no citation
    assert statuses("Net sales were $1,076 million [9].") == [("uncited", ["$1,076 million"])]


def test_a_sentence_may_use_several_citations():
    assert statuses("Sales were $1,076M [1] and offices are in Lyon [2].") == [("supported", [])]


def test_a_sentence_naming_a_table_row_takes_its_numbers_from_that_row():
    from docgraph.methods.answers.named_rows import table_rows

    table = (
        "| (in millions) | 2022 | 2021 |\n| --- | --- | --- |\n| Net sales | 1,076 | 982 |\n"
        "| Purchases of property, plant and equipment | (1,577) | (1,464) |"
    )
    support = {1: Support(table, "Acme annual report 2022", prose="", rows=tuple(table_rows(table)))}
    assert statuses("Net sales were $1,076 million in 2022 [1].", support) == [("supported", [])]
    assert statuses("Net sales were $982 million in 2021 [1].", support) == [("supported", [])]
    # a number of another row, stated as the named row's
    assert statuses("Net sales were $1,577 million in 2022 [1].", support) == [("unsupported", ["$1,577 million"])]
    # a paraphrase that names no row is held against the whole table
    assert statuses("Capital expenditure was $1,577 million in 2022 [1].", support) == [("supported", [])]


def test_a_row_is_stated_with_its_columns_header():
    """A sentence that states a row's value with its column's heading ("December 31, 2018"
    split by the layout into "December" and "31, 2018") rests on that row."""
    from docgraph.methods.answers.named_rows import table_rows

    table = (
        "||December Carrying|31, 2018 Fair|\n|---|---|---|\n|(Millions)|Value|Value|\n"
        "|Long-term debt, excluding current portion|$ 13,411|$ 13,586|"
    )
    support = {1: Support(table, "3M 10-K 2018", prose="", rows=tuple(table_rows(table)))}
    quote = (
        "Long-term debt, excluding current portion — December Carrying Value: $ 13,411; "
        "31, 2018 Fair Value: $ 13,586 [1]."
    )
    assert statuses(quote, support) == [("supported", [])]
    assert statuses("Long-term debt, excluding current portion was $13,600 million [1].", support) == [
        ("unsupported", ["$13,600 million"])
    ]
