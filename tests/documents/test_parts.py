"""Parts of a document (``documents.parts``): where a file's pieces begin — a new sheet size or
orientation, a new printed numbering — found at ingest, kept with the document, read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.documents.parts import PARTS_NAMESPACE, part_ranges, part_starts, stored_parts
from docgraph.types import Page


def _page(number: int, width: float = 612, height: float = 792) -> Page:
    return Page(doc_id="d", number=number, width=width, height=height, image_path="", dpi=72)


def test_one_sheet_and_one_numbering_are_one_part():
    pages = [_page(n) for n in range(1, 9)]
    assert part_starts(pages, {}) == [1]
    assert part_ranges([1], 8) == [(1, 8)] and part_ranges([1, 5, 8], 9) == [(1, 4), (5, 7), (8, 9)]
    assert part_starts(pages, {n: n - 2 for n in range(3, 9)}) == [1]  # front matter unnumbered
    assert part_starts(reversed(pages), {}) == [1], "pages in any order"
    assert part_starts([], {}) == []


def test_a_new_sheet_size_or_orientation_starts_a_part():
    report = [_page(n) for n in range(1, 5)]
    deck = [_page(n, 720, 405) for n in range(5, 8)]  # landscape slides
    a4 = [_page(n, 595.3, 841.9) for n in range(8, 10)]
    assert part_starts([*report, *deck, *a4], {}) == [1, 5, 8]
    assert part_starts([_page(1, 612.2, 791.8), _page(2)], {}) == [1], "sizes compared in whole points"


def test_a_numbering_that_goes_back_starts_a_part_and_one_that_jumps_ahead_does_not():
    printed = {**{n: n - 1 for n in range(2, 7)}, **{n: n - 7 for n in range(8, 13)}}  # 1..5, cover, 1..5
    pages = [_page(n) for n in range(1, 13)]
    assert part_starts(pages, printed) == [1, 8], "the second piece's title page 7 is unnumbered"
    # a chapter opener without a number inside one numbering is no new part
    assert part_starts(pages, {n: n + 10 for n in range(1, 13) if n != 6}) == [1]
    # nor are numbers that jump ahead: pages printed without one (a full-page chart)
    assert part_starts(pages, {**{n: n for n in range(1, 7)}, **{n: n + 3 for n in range(7, 13)}}) == [1]


@pytest.fixture(scope="module")
def binder(tmp_path_factory, shared_data: Path) -> Path:
    """Three real documents' pages in one PDF, as a scanned binder or a packed corpus holds
    them: six pages of the JSTOR report (printed 1–6), six of the grammar textbook (printed
    3–8, on the same Letter sheet) and three landscape lecture slides (unnumbered)."""
    import pymupdf

    source = shared_data / "documents"
    out = tmp_path_factory.mktemp("binder") / "binder.pdf"
    with pymupdf.open() as binder:
        for name, pages in (
            ("jstor_open_access_latin_america_report.pdf", range(2, 8)),
            ("grammar_matters_textbook.pdf", range(3, 9)),
            ("dl_comp_mech_slides_ch3_1.pdf", range(1, 4)),
        ):
            with pymupdf.open(source / name) as whole:
                for page in pages:
                    binder.insert_pdf(whole, from_page=page - 1, to_page=page - 1)
        binder.save(out)
    return out


def test_ingest_keeps_a_binders_parts_with_it_and_a_reader_finds_them_without_the_record(
    binder: Path, tmp_path, capsys
):
    from docgraph import Workspace
    from docgraph.cli import main

    with Workspace(tmp_path / "ws") as ws:
        ws.add([binder])
        store = ws.context().store
        doc = store.list_documents()[0]
        # the report, then the textbook (its numbering goes back, on the same sheet), then the slides
        assert store.get_record(PARTS_NAMESPACE, doc.id) == [1, 7, 13]
        assert ws.parts("binder.pdf") == [(1, 6), (7, 12), (13, 15)]
        assert main(["meta", "binder.pdf", "--workspace", str(tmp_path / "ws")]) == 0
        assert "parts         3: pages 1–6, 7–12, 13–15" in capsys.readouterr().out
        store.delete_records(PARTS_NAMESPACE, [doc.id])
        assert stored_parts(store, [doc.id]) == {doc.id: [1, 7, 13]}
        assert store.get_record(PARTS_NAMESPACE, doc.id) is None, "reading writes nothing"
        ws.remove(doc.id)
        assert store.count_records(PARTS_NAMESPACE) == 0, "the record goes with its document"
