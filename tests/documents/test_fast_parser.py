"""The ``pymupdf-fast`` parser backend: layout from text geometry only, same contract."""

from __future__ import annotations

import difflib

from docgraph.config import IngestSettings
from docgraph.documents import available_parsers, get_parser, ingest
from docgraph.store import SQLiteStore

EXCERPT = "openstax_world_history_v1_excerpt.pdf"


def page_text(parsed, number: int) -> str:
    return "\n".join(block.text for block in parsed.layout(number))


def test_fast_backend_is_registered_and_reads_the_same_text(documents_dir):
    assert {"pymupdf", "pymupdf-fast"} <= set(available_parsers())
    accurate = get_parser("pymupdf").open(documents_dir / EXCERPT)
    fast = get_parser("pymupdf-fast").open(documents_dir / EXCERPT)
    try:
        for number in range(1, accurate.page_count + 1):
            # switching models back and forth in one process keeps each backend's own model
            a, f = page_text(accurate, number), page_text(fast, number)
            assert f.strip(), f"page {number}: the fast layout found no text"
            assert difflib.SequenceMatcher(None, a, f).ratio() > 0.8, f"page {number} reads differently"
            assert page_text(accurate, number) == a, "the accurate backend's output changed after a switch"
    finally:
        accurate.close()
        fast.close()


def test_ingest_with_the_fast_backend(tmp_path, documents_dir):
    store = SQLiteStore(tmp_path)
    try:
        report = ingest(store, tmp_path, IngestSettings(parser="pymupdf-fast", workers=1), [documents_dir / EXCERPT])
        assert not report.failures and report.pages == 5
        pages = [store.get_page(doc.id, n) for doc in store.list_documents() for n in range(1, doc.page_count + 1)]
        assert all(page.components for page in pages)
        assert any(c.kind.value == "TI" for page in pages for c in page.components), "headings are still typed"
    finally:
        store.close()
