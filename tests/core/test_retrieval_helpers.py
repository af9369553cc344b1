"""Shared method helpers: chunking, citations, the extractive answer, the vector index."""

from __future__ import annotations

import numpy as np

from docgraph.methods.answers.citations import CitationBook, marker
from docgraph.methods.answers.extractive import (
    NOTHING_FOUND,
    OFFLINE_NOTICE,
    EvidencePassage,
    extractive_answer,
    item_sentences,
    rank_sentences,
)
from docgraph.methods.building.chunking import page_chunks
from docgraph.methods.building.markdown_tables import rows_as_sentences
from docgraph.methods.retrieval.vector_index import delete_vectors, load_index, write_vectors
from docgraph.store import SQLiteStore
from docgraph.types import BBox, Component, ComponentKind, Document, Page


def _comp(cid: str, kind: ComponentKind, order: int, text: str, section=("Doc", "Intro"), y: float = 0):
    return Component(
        id=cid,
        kind=kind,
        bbox=BBox(x0=10, y0=y, x1=200, y1=y + 20),
        order=order,
        text=text,
        markdown=text if kind is ComponentKind.TABLE else None,
        section_path=list(section),
        furniture=kind.is_furniture,
    )


def _page() -> Page:
    comps = [
        _comp("H1", ComponentKind.HEADER, 0, "Running header", y=0),
        _comp("TI1", ComponentKind.TITLE, 1, "Intro", y=20),
        _comp("P1", ComponentKind.PARAGRAPH, 2, "The Nile flooded every year. Farmers planted in the silt.", y=40),
        _comp("P2", ComponentKind.PARAGRAPH, 3, "Egypt grew wheat and barley.", y=60),
        _comp("IM1", ComponentKind.IMAGE, 4, "", y=80),
        _comp("C1", ComponentKind.CAPTION, 5, "Figure 1. A map of the Nile delta.", y=100),
        _comp("T1", ComponentKind.TABLE, 6, "| crop | yield |\n|---|---|\n| wheat | 3.5 |", y=120),
        _comp("P3", ComponentKind.PARAGRAPH, 7, "Later chapters cover Rome.", section=("Doc", "Rome"), y=140),
    ]
    return Page(
        doc_id="d1", number=3, width=300, height=400, image_path="pages/d1/p0003.png", dpi=144, components=comps
    )


def test_page_chunks_by_modality_section_and_order():
    chunks = page_chunks(_page())
    assert [c.modality for c in chunks] == ["text", "image", "text", "table", "text"]
    assert chunks[0].component_ids == ["TI1", "P1", "P2"]
    assert "Figure 1. A map of the Nile delta." in chunks[1].text
    assert chunks[3].text.startswith("| crop")
    assert chunks[-1].section_path == ["Doc", "Rome"] and chunks[-1].component_ids == ["P3"]
    assert all("H1" not in c.component_ids for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks)


def _store_with_page(tmp_path) -> SQLiteStore:
    store = SQLiteStore(tmp_path)
    store.put_document(
        Document(id="d1", title="Ancient Egypt", path="e.pdf", sha256="a" * 64, kind="pdf", page_count=3)
    )
    store.put_page(_page())
    return store


def test_citation_book_numbers_dedupes_and_resolves_boxes(tmp_path):
    book = CitationBook(_store_with_page(tmp_path))
    first = book.cite("d1", 3, ["P1", "P2"], quote="q")
    assert first == 1
    assert book.cite("d1", 3, ["P1", "P2"]) == 1
    assert book.cite("d1", 3, ["T1", "NOPE"]) == 2
    assert book.cite("d1", 99, ["P1"]) is None
    cit = book.citations[1]
    assert cit.component_ids == ["T1"] and cit.bboxes[0].y0 == 120 and cit.document_title == "Ancient Egypt"
    assert marker([2, None, 1, 2]) == "[2][1]"


def test_extractive_answer_quotes_the_matching_sentence_with_its_citation(tmp_path):
    book = CitationBook(_store_with_page(tmp_path))
    passages = [
        EvidencePassage("d1", 3, ("P3",), "Later chapters cover Rome.", 0.9),
        EvidencePassage("d1", 3, ("P2",), "Egypt grew wheat and barley.", 0.5),
        EvidencePassage("d1", 3, ("P1",), "The Nile flooded every year. Farmers planted in the silt.", 0.4),
    ]
    text = extractive_answer("Which crops did Egypt grow?", passages, book, max_sentences=1)
    assert text.startswith(OFFLINE_NOTICE)
    assert "Egypt grew wheat and barley." in text and "[1]" in text
    assert book.citations[0].component_ids == ["P2"]
    ranked = rank_sentences("When did the Nile flood?", passages)
    assert ranked[0][1] == "The Nile flooded every year."
    assert extractive_answer("anything", [], CitationBook(_store_with_page(tmp_path / "b"))) == NOTHING_FOUND


BALANCE_SHEET = (
    "| (In millions) | 2021 | 2020 |\n|---|---|---|\n| Cash and equivalents | $ 9,889 | $ 8,348 |\n"
    "| Short-term investments | 3,587 | 439 |\n| Total current liabilities | 9,674 | 8,284 |"
)


def test_a_measures_items_are_quoted_by_the_rows_that_give_their_values(tmp_path):
    book = CitationBook(_store_with_page(tmp_path))
    passages = [
        EvidencePassage("d1", 3, ("P1",), "CASH AND EQUIVALENTS", 0.9),  # a note's title: no value
        EvidencePassage(
            "d1",
            3,
            ("P2",),
            "We held cash and equivalents and short-term investments "
            "of $13.5 billion, which with total current liabilities of $9.7 billion…",
            0.8,
        ),
        EvidencePassage("d1", 3, ("T1",), rows_as_sentences(BALANCE_SHEET), 0.7),
    ]
    items = ("cash and equivalents", "short-term investments", "total current liabilities", "inventories")
    quoted = [sentence for sentence, _ in item_sentences(items, passages)]
    assert quoted == [
        "Cash and equivalents — 2021: $ 9,889; 2020: $ 8,348.",
        "Short-term investments — 2021: 3,587; 2020: 439.",
        "Total current liabilities — 2021: 9,674; 2020: 8,284.",
    ], "the rows, in item order; no inventories"
    text = extractive_answer("What is the cash ratio?", passages, book, max_sentences=1, items=items)
    assert text.count("\n- ") == 3, "every item found is quoted, beyond max_sentences"
    plain = extractive_answer("What is the cash ratio?", passages, book, max_sentences=1)
    assert plain.count("\n- ") == 1 and "9,674" not in plain, "without items: the best sentence by the question"


def test_vector_index_search_and_reload_on_change(tmp_path):
    store = SQLiteStore(tmp_path)
    rows = np.eye(3, dtype=np.float32)
    write_vectors(store, "ns", ["a", "b", "c"], rows, model="m")
    index = load_index(store, "ns")
    assert index.search(np.array([0, 1, 0.5], dtype=np.float32), 2) == [("b", 1.0), ("c", 0.5)]
    assert load_index(store, "ns") is index
    delete_vectors(store, "ns", keys=["b"])
    reloaded = load_index(store, "ns")
    assert reloaded is not index and reloaded.keys == ["a", "c"]
    mask = np.array([True, False])
    assert reloaded.search(np.array([0, 0, 1], dtype=np.float32), 5, allowed=mask) == [("a", 0.0)]


def test_a_comparison_quotes_each_party_before_the_best_of_the_rest(tmp_path):
    from docgraph.methods.answers.extractive import compared_parties
    from docgraph.types import Evidence, RoutedDocument

    book = CitationBook(_store_with_page(tmp_path))
    passages = [
        EvidencePassage("d1", 3, ("P1",), "Acme's net income was $5 billion in 2022.", 0.9),
        EvidencePassage("d1", 3, ("P2",), "Acme had higher net income in 2022 than in 2021.", 0.8),
        EvidencePassage("d2", 7, ("P1",), "Globex reported a profit of $2 billion.", 0.3),
    ]
    question = "Which had higher net income in 2022, Acme or Globex?"
    plain = extractive_answer(question, passages, book, max_sentences=2)
    assert "Globex reported" not in plain, "by score alone both quotes are Acme's"
    routed = [
        RoutedDocument(doc_id="d1", weight=1.0, party=0),
        RoutedDocument(doc_id="d2", weight=1.0, party=1),
        RoutedDocument(doc_id="d3", weight=0.75),
    ]
    parties = compared_parties(Evidence(query=question, method="kg4vd", routed=routed))
    assert parties == [{"d1"}, {"d2"}]
    both = extractive_answer(question, passages, book, max_sentences=2, parties=parties)
    quotes = [line for line in both.splitlines() if line.startswith("- ")]
    assert [q.split("\u201d")[0][3:] for q in quotes] == [
        "Acme had higher net income in 2022 than in 2021.",  # each party's best, in the question's order
        "Globex reported a profit of $2 billion.",
    ]
    assert compared_parties(Evidence(query=question, method="kg4vd", routed=routed[:1])) == []


def test_a_heading_over_several_lines_is_headed_by_its_periods():
    """A statement's heading spread over the columns ("For the | Years Ended Dece | mber 31,")
    above its periods: the periods head the columns, and that row is no row of the table."""
    statement = (
        "| | For the | Years Ended Dece | mber 31, |\n|---|---|---|---|\n"
        "| In millions, except per share amounts | 2022 | 2021 | 2020 |\n| Revenues: | | | |\n"
        "| Net income attributable to CVS Health | $ 4,149 | $ 7,910 | $ 7,179 |"
    )
    assert rows_as_sentences(statement).splitlines()[-1] == (
        "Net income attributable to CVS Health — 2022: $ 4,149; 2021: $ 7,910; 2020: $ 7,179."
    )
    assert "In millions" not in rows_as_sentences(statement)
    # a table of words keeps its header; a header of periods is not replaced by the row below
    people = "| Name | Role |\n|---|---|\n| Ada | Engineer |"
    assert rows_as_sentences(people) == "Ada — Role: Engineer."
    assert rows_as_sentences(BALANCE_SHEET).startswith("Cash and equivalents — 2021: $ 9,889; 2020: $ 8,348.")


def test_a_header_whose_words_go_on_in_the_first_row_takes_them():
    """A filing's column header set over two lines ("December 31, 2018 Carrying" over
    "Value"): the second line is no row of the table, and every row reads its columns whole."""
    debt = (
        "||December Carrying|31, 2018 Fair|\n|---|---|---|\n|(Millions)|Value|Value|\n"
        "|Long-term debt, excluding current portion|$ 13,411|$ 13,586|\n|Current portion|1,211|1,190|"
    )
    assert rows_as_sentences(debt).split("\n\n") == [
        "Long-term debt, excluding current portion — December Carrying Value: $ 13,411; 31, 2018 Fair Value: $ 13,586.",
        "Current portion — December Carrying Value: 1,211; 31, 2018 Fair Value: 1,190.",
    ]
    segments = "| | Year Ended 2019 | |\n|---|---|---|\n| | Americas | EMEA |\n| Net revenues | 1,200 | 800 |"
    assert rows_as_sentences(segments) == "Net revenues — Year Ended 2019 Americas: 1,200; EMEA: 800."
    # rows of words under a header of words are data, however many
    roles = "| Name | Role | Office |\n|---|---|---|\n| Ada | Engineer | Lyon |\n| Bob | Analyst | Oslo |"
    assert rows_as_sentences(roles).split("\n\n")[0] == "Ada — Role: Engineer; Office: Lyon."


def test_a_question_that_names_documents_is_answered_from_them(tmp_path):
    from docgraph.methods.answers.extractive import named_documents
    from docgraph.types import Evidence, RoutedDocument

    book = CitationBook(_store_with_page(tmp_path))
    passages = [
        EvidencePassage("amd", 48, ("P1",), "Capital lease payments were $5 million in 2018.", 0.9),
        EvidencePassage("3m", 60, ("T1",), "Purchases of property, plant and equipment — 2018: (1,577).", 0.5),
    ]
    question = "What is the FY2018 capital expenditure amount for 3M?"
    routed = [RoutedDocument(doc_id="3m", weight=1.0, named_by=["3M COMPANY", "period 2018"])]
    named = named_documents(Evidence(query=question, method="kg4vd", routed=routed))
    assert named == {"3m"}
    text = extractive_answer(question, passages, book, max_sentences=2, named=named)
    assert "1,577" in text and "Capital lease" not in text, "another company's filing is not quoted"
    # a named document with nothing retrieved leaves every passage quotable
    assert "Capital lease" in extractive_answer(question, passages[:1], book, max_sentences=2, named=named)
