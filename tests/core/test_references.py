"""Labels of annual filings and papers: "Item 7A", "Note 10", "TABLE II", "Appendix B", "Part II".

A question that names a part of a document by label is answered through
``methods.retrieval.references``; these tests pin the label forms beyond figure/table/page numbers
(10-K items and notes, Roman-numbered tables and parts, lettered appendices, sub-parts),
the forms that only look like labels, and — on real pages of a 10-K and a survey paper
from the shared benchmark — that the graph methods put the page defining the label first.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docgraph.config import RetrievalSettings
from docgraph.methods.retrieval.evidence_layer import EvidenceLayer
from docgraph.methods.retrieval.references import LabelIndex, query_references
from docgraph.types import Chunk


def test_filing_and_paper_labels_are_read_with_their_numbers_normalised():
    assert query_references("What does Item 7A say, and Item 7?") == [("item", "7a"), ("item", "7")]
    assert query_references("According to Note 10, what was the effective tax rate?") == [("note", "10")]
    assert query_references("Compare TABLE IV with table II and Section XIV") == [
        ("table", "4"),
        ("table", "2"),
        ("section", "14"),
    ], "Roman numerals read as the numbers they are"
    assert query_references("What is in Appendix B and in Appendix C.2?") == [("appendix", "B"), ("appendix", "C.2")]
    assert query_references("Summarise Part II and Exhibit 10.1") == [("part", "2"), ("exhibit", "10.1")]
    assert query_references("In Part I of the report") == [("part", "1")]
    assert query_references("How many subfigures does Figure 3b have?") == [("figure", "3b")]
    assert query_references("What is on slide 14b?") == [("page", "14")], "a page has no parts"
    assert query_references("What does chapter eighteen cover, and Part Twenty-One?") == [
        ("chapter", "18"),
        ("part", "21"),
    ], "spelled numbers, as Sphinx and many books print them"


def test_what_only_looks_like_a_label_is_none():
    assert query_references("Which part I need for the repair?") == [], "a lone I after a lower-case word"
    assert query_references("What does table A list?") == [], "tables are not numbered by letters"
    assert query_references("What is the second part of the report about?") == [], "ordinals: figures, pages…"
    assert query_references("How many notes are in Table IIII?") == [], "IIII is no Roman numeral"
    assert query_references("What is on page iv?") == [], "front-matter page numbers are not resolved"
    assert query_references("How many items are listed?") == []


def _chunk(row: int, page: int, text: str) -> Chunk:
    return Chunk(id=f"d:{page}:P{row}", doc_id="d", page=page, component_ids=[f"P{row}"], text=text)


def test_a_label_resolves_to_its_parts_and_a_part_to_the_whole():
    chunks = [
        _chunk(0, 1, "Figure 3a: Revenue by region."),
        _chunk(1, 2, "Figure 3b: Revenue by product."),
        _chunk(2, 3, "Item 7. Management's Discussion"),
        _chunk(3, 4, "Item 7A. Market Risk"),
        _chunk(4, 5, "TABLE II\nSummary of datasets"),
        _chunk(5, 6, "As Table II shows, three methods…"),
    ]
    labels = LabelIndex.build(chunks)
    assert labels.rows(("figure", "3")) == [0, 1], "no Figure 3 caption: the captions of its parts"
    assert labels.rows(("figure", "3b")) == [1]
    assert labels.rows(("item", "7")) == [2], "Item 7 has its own heading: not Item 7A's"
    assert labels.rows(("item", "7a")) == [3]
    assert labels.rows(("table", "2")) == [4], "the caption defines TABLE II; the mention does not"
    whole = LabelIndex.build([_chunk(0, 1, "Figure 3: Revenue, by region (a) and product (b).")])
    assert whole.rows(("figure", "3a")) == [0], "a part no caption defines: the whole figure's page"
    layer = EvidenceLayer.build(chunks, np.eye(len(chunks), dtype=np.float32), RetrievalSettings())
    assert layer.referenced_pages("What does Item 7A cover?").tolist() == [0, 0, 0, 1.0, 0, 0]


def test_a_mention_refers_to_the_nearest_definition_of_its_label_on_another_page():
    chunks = [
        _chunk(0, 1, "Table 1: Sales by region."),
        _chunk(1, 2, "As Table 1 shows, sales rose; Figure 9 is elsewhere."),
        _chunk(2, 3, "Costs follow; see Table 1."),  # nearer the second definition than the first
        _chunk(3, 7, "Table 1: Costs by region."),  # a second part of a packed corpus defines it again
        _chunk(4, 8, "Table 1 lists the costs."),
        _chunk(5, 8, "Other document: see Table 1."),
    ]
    chunks[5] = chunks[5].model_copy(update={"doc_id": "e"})
    labels = LabelIndex.build(chunks)
    doc = np.array([0, 0, 0, 0, 0, 1])
    page = np.array([c.page for c in chunks])
    pairs = labels.cross_references(doc, page).tolist()
    assert pairs == [[1, 0], [2, 3], [4, 3]], "nearest definition, same document, other page; Figure 9 is undefined"


def test_a_line_starting_with_a_label_defines_it_only_as_a_caption_or_heading_does():
    # the two lines as the SciTab paper (2305.13186v3) prints them on its pages 13 and 15
    chunks = [
        _chunk(0, 13, "Figure 6 shows the user interface for the NEI claim verification task."),
        _chunk(1, 14, "Figure 11 and Figure 12 show six error examples."),
        _chunk(2, 15, "Figure 6: The user interface for the NEI claim verification task."),
        _chunk(3, 16, "NOTE 10 \u2014 REDEEMABLE PREFERRED STOCK"),
        _chunk(4, 17, "TABLE III\nRetrievers"),
        _chunk(5, 18, "Figure 3 Revenue by region"),
    ]
    labels = LabelIndex.build(chunks)
    assert labels.rows(("figure", "6")) == [2], "prose that starts a line with the label only mentions it"
    assert labels.rows(("figure", "11")) == [1], "no caption of Figure 11 here: its mention"
    assert labels.rows(("note", "10")) == [3] and labels.rows(("table", "3")) == [4]
    assert labels.rows(("figure", "3")) == [5], "a caption without a colon, its title capitalised"
    run_in = LabelIndex.build(
        [
            _chunk(0, 1, "As Figure 5 shows, the gap closes."),
            _chunk(
                1,
                2,
                "compute performance gap recovered (%) Figure 5: Substantially improved "
                "generalization. See Table 2: it lists the sets.",
            ),
        ]
    )
    assert run_in.rows(("figure", "5")) == [1], "a caption the layout ran into the chart's text"
    assert ("table", "2") not in run_in.defines, "a colon and a lower-case word: prose"
    spelled = LabelIndex.build([_chunk(0, 1, "CHAPTER EIGHTEEN\nLOG ANALYSIS"), _chunk(1, 2, "Part one of the series")])
    assert spelled.rows(("chapter", "18")) == [0]
    assert ("part", "1") not in spelled.defines and spelled.rows(("part", "1")) == [1], "prose: a mention"


def test_a_numbered_heading_is_its_sections_label_unless_a_line_defines_the_section():
    def under(row: int, page: int, path: list[str], text: str = "Body text.") -> Chunk:
        chunk = _chunk(row, page, text)
        return chunk.model_copy(update={"section_path": path})

    chunks = [
        under(0, 1, ["3 Method"]),
        under(1, 2, ["3 Method", "3.2 Results"]),
        under(2, 3, ["3 Method", "3.2 Results"]),
        under(3, 4, ["4 Seasons of data"]),
        under(4, 5, ["Appendix"], "Section 4. The ordinance takes effect."),
        under(5, 6, ["10-K Summary"]),
        under(6, 7, ["2019 Annual Report"]),
    ]
    labels = LabelIndex.build(chunks)
    assert labels.rows(("section", "3.2")) == [1], 'the first chunk under "3.2 Results"'
    assert labels.rows(("section", "3")) == [0]
    assert labels.rows(("section", "4")) == [4], "a line defining Section 4 comes before a heading numbered 4"
    assert not labels.headings.keys() & {("section", "10"), ("section", "20"), ("section", "2019")}


SURVEY = "2312.10997v5.pdf"  # IEEE style: captions "TABLE I" (p. 6) … "TABLE IV" (p. 15); "Table II" cited on p. 12
SURVEY_PAGES = (5, 6, 7, 12, 13, 14, 15)


@pytest.fixture(scope="module")
def survey_workspace(mmlongbench_excerpt) -> Path:
    """A workspace holding seven real pages of a survey paper, kg4vd and hvm built offline."""
    return mmlongbench_excerpt(SURVEY, SURVEY_PAGES)


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
@pytest.mark.parametrize("table", ["1", "I"])
def test_table_1_finds_the_page_captioned_table_i_in_a_real_paper(survey_workspace: Path, method: str, table: str):
    from docgraph import Workspace
    from docgraph.eval.records import ranked_pages

    question = f"What does Table {table} list?"
    captioned = SURVEY_PAGES.index(6) + 1
    with Workspace(survey_workspace, create=False) as ws:
        assert ranked_pages(ws.retrieve(question, method=method))[0].page == captioned
    with Workspace(survey_workspace, overrides={"retrieval": {"references": False}}, create=False) as ws:
        unresolved = ranked_pages(ws.retrieve(question, method=method))[0].page
    assert unresolved != captioned, "text alone ranks TABLE II's page first: the label is what finds TABLE I"
