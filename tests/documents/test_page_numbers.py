"""Printed page numbers (``documents.page_numbers``): detected from the page margins at
ingest, kept with the document, read back for retrieval."""

from __future__ import annotations

from pathlib import Path

from docgraph.documents.page_numbers import PRINTED_NUMBERS_NAMESPACE, printed_page_numbers, stored_printed_numbers
from docgraph.types import BBox, Component, ComponentKind, Page


def _page(number: int, *lines: tuple[str, bool, float]) -> Page:
    """A 100×100 page; each line is (text, furniture, top y)."""
    components = [
        Component(
            id=f"P{i}",
            kind=ComponentKind.FOOTER if furniture else ComponentKind.PARAGRAPH,
            bbox=BBox(x0=10, y0=y, x1=90, y1=y + 3),
            order=i,
            text=text,
            furniture=furniture,
        )
        for i, (text, furniture, y) in enumerate(lines)
    ]
    return Page(doc_id="d", number=number, width=100, height=100, image_path="", dpi=72, components=components)


def test_a_manual_numbered_from_its_fifth_page_maps_every_numbered_page():
    pages = [_page(1, ("Product Introduction", False, 40))]
    pages += [
        _page(n, ("Contents", False, 20), ("Issue 26 (2024-02-28)", True, 95), (roman, True, 97))
        for n, roman in ((2, "i"), (3, "ii"), (4, "iii"))
    ]
    pages += [
        _page(n, ("Body text of the page.", False, 40), ("Copyright © 2024", True, 95), (str(n - 4), True, 97))
        for n in range(5, 12)
    ]
    pages[8] = _page(9, ("A chapter opener without a footer", False, 40))
    numbers = printed_page_numbers(pages)
    assert numbers == {n: n - 4 for n in range(5, 12)}, "a year or an issue number does not move with the page"


def test_numbers_in_the_margin_count_without_furniture_and_forms_like_page_n_of_m():
    pages = [_page(n, ("Text", False, 40), (f"Page {n - 1} of 9", False, 92)) for n in range(2, 6)]
    assert printed_page_numbers(pages) == {n: n - 1 for n in range(2, 6)}
    mid_page = [_page(n, (str(n - 1), False, 50)) for n in range(2, 6)]
    assert printed_page_numbers(mid_page) == {}, "a bare number in the body is a value, not a page number"


def test_no_numbering_restarting_numbers_and_agreeing_numbers_give_nothing():
    assert printed_page_numbers([_page(n, ("Slide title", False, 10)) for n in range(1, 6)]) == {}
    restarting = [_page(n, (f"{1 + (n - 1) % 2}/2", True, 97)) for n in range(1, 9)]  # web printouts: 1/2, 2/2
    assert printed_page_numbers(restarting) == {}
    assert printed_page_numbers([_page(n, (str(n), True, 97)) for n in range(1, 6)]) == {}, (
        "printed numbers that equal the file's need no map"
    )


def test_a_file_bound_from_parts_keeps_each_parts_numbering_and_spreads_give_none():
    part = [_page(n, ("Text", False, 40), (str(n - 1), True, 97)) for n in range(2, 8)]  # printed 1..6
    second = [_page(n, ("Text", False, 40), (str(n - 8), True, 97)) for n in range(9, 14)]  # printed 1..5 again
    numbers = printed_page_numbers([_page(1, ("Cover", False, 40)), *part, _page(8, ("Part two", False, 40)), *second])
    assert numbers == {**{n: n - 1 for n in range(2, 8)}, **{n: n - 8 for n in range(9, 14)}}
    spreads = [
        _page(n, ("Text", False, 40), (str(2 * n - 2), True, 97), (str(2 * n - 1), True, 97)) for n in range(2, 12)
    ]
    assert printed_page_numbers(spreads) == {}, "two facing pages printed on one file page"


def test_ingest_keeps_a_reports_printed_numbers_with_it(corpus):
    jstor = corpus.doc("jstor_open_access_latin_america_report")
    stored = corpus.store.get_record(PRINTED_NUMBERS_NAMESPACE, jstor.id)
    numbers = {int(k): v for k, v in stored.items()}
    assert numbers and all(printed == page - 1 for page, printed in numbers.items()), (
        "the JSTOR report prints 1 on its second page (after the cover)"
    )
    assert len(numbers) >= len(jstor.pages) - 2
    grammar = corpus.doc("grammar_matters_textbook")
    assert corpus.store.get_record(PRINTED_NUMBERS_NAMESPACE, grammar.id) == {}, (
        "a textbook whose printed numbers equal the file's"
    )
    assert stored_printed_numbers(corpus.store, [jstor.id, grammar.id]) == {jstor.id: numbers, grammar.id: {}}


def test_a_document_ingested_before_the_record_existed_is_read_from_its_pages(shared_corpus_copy, tmp_path: Path):
    from docgraph.store.sqlite import SQLiteStore

    store = SQLiteStore(shared_corpus_copy(tmp_path / "ws"))
    try:
        jstor = next(d for d in store.list_documents() if Path(d.path).name.startswith("jstor"))
        expected = {int(k): v for k, v in store.get_record(PRINTED_NUMBERS_NAMESPACE, jstor.id).items()}
        store.delete_records(PRINTED_NUMBERS_NAMESPACE, [jstor.id])
        assert stored_printed_numbers(store, [jstor.id]) == {jstor.id: expected}
        assert store.get_record(PRINTED_NUMBERS_NAMESPACE, jstor.id) is None, "reading writes nothing"
        grammar = next(d for d in store.list_documents() if Path(d.path).name.startswith("grammar"))
        before = store.count_records(PRINTED_NUMBERS_NAMESPACE)
        store.delete_document(grammar.id)
        assert store.get_record(PRINTED_NUMBERS_NAMESPACE, grammar.id) is None, "the record goes with its document"
        assert store.count_records(PRINTED_NUMBERS_NAMESPACE) == before - 1
    finally:
        store.close()
