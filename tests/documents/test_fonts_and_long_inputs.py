"""Bad inputs of issue 15 item 3: PDFs with broken or missing fonts, and a very long PDF.

A real PDF of the shared data with its fonts damaged (``testing.files.damaged_fonts_pdf``) is
added — it renders — with one note naming the file, its pages and what to do; a long PDF
(``testing.files.long_pdf``; the 5,000-page run is in ``benchmarks/faults.py``) is added with
progress naming the file, and an add interrupted part-way resumes to every page stored once.
Nothing else in the workspace changes.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from docs_helpers import snapshot

from docgraph.config import IngestSettings
from docgraph.documents import ingest, pages
from docgraph.documents.fonts import page_ranges, unreadable_share
from docgraph.progress import RecordingProgress
from docgraph.store import SQLiteStore
from docgraph.testing.files import damaged_fonts_pdf, long_pdf

SETTINGS = IngestSettings(workers=1)
OPENSTAX = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, documents_dir):
    root = tmp_path_factory.mktemp("fonts") / "ws"
    store = SQLiteStore(root)
    assert ingest(store, root, SETTINGS, [documents_dir / "acciona_sustainability_report_2020_p1.pdf"]).added
    yield store, root
    store.close()


def remove(store: SQLiteStore, root: Path, doc_id: str) -> None:
    store.delete_document(doc_id)
    for folder in ("pages", "crops"):
        shutil.rmtree(root / folder / doc_id, ignore_errors=True)


def test_unreadable_share_and_page_ranges():
    assert unreadable_share("Plain text, readable.") == (0, 0.0)
    assert unreadable_share("ab\ufffd\x0f\ue000 \n") == (3, 0.6)
    assert page_ranges([4]) == "page 4" and page_ranges([7, 1, 2, 3, 9, 10]) == "pages 1-3, 7, 9-10"


@pytest.mark.parametrize(
    "how, phrase, readable",
    [
        ("corrupt-program", "are damaged; the page images use a substitute font", True),
        ("missing-font", "the text cannot be read", False),
    ],
)
def test_a_pdf_with_broken_fonts_is_added_with_one_note_naming_file_and_pages(
    how, phrase, readable, workspace, tmp_path, documents_dir
):
    store, root = workspace
    path = damaged_fonts_pdf(documents_dir / OPENSTAX, tmp_path / f"{how}.pdf", how)
    before = snapshot(root)
    progress = RecordingProgress()
    report = ingest(store, root, SETTINGS, [path], progress=progress)
    assert report.failures == [] and len(report.added) == 1
    [note] = [n for n in report.notes if n.startswith(f"{how}.pdf (page")]
    assert phrase in note and "re-export the PDF" in note and "\n" not in note and note in progress.notes
    doc = store.get_document(report.added[0].id, with_pages=True)
    assert doc.status == "ready" and len(doc.pages) == 5 and all((root / p.image_path).is_file() for p in doc.pages)
    assert ("Pax Mongolica" in doc.pages[0].text) is readable
    remove(store, root, doc.id)
    assert snapshot(root) == before  # nothing else changed


def test_a_long_pdf_reports_progress_per_page_and_resumes_after_an_interruption(workspace, tmp_path, monkeypatch):
    """300 pages (the fast parser, low resolution: seconds); interrupted at page 120 as a
    Ctrl-C or a killed process would, then added again."""
    store, root = workspace
    n = 300
    path = long_pdf(tmp_path / "long.pdf", n)
    settings = IngestSettings(workers=1, parser="pymupdf-fast", dpi=36, crop_dpi=36)
    before = snapshot(root)
    real = pages.process_page

    def interrupted(job):
        if job.number == 120:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(pages, "process_page", interrupted)
    first = RecordingProgress()
    with pytest.raises(KeyboardInterrupt):
        ingest(store, root, settings, [path], progress=first)
    assert (first.total, first.done, first.stats["doc"]) == (n, 119, "long.pdf")
    [partial] = [d for d in store.list_documents() if d.status == "ingesting"]
    assert store.page_numbers(partial.id) == set(range(1, 120))
    monkeypatch.setattr(pages, "process_page", real)
    second = RecordingProgress()
    report = ingest(store, root, settings, [path], progress=second)
    assert report.failures == [] and [d.id for d in report.added] == [partial.id]
    assert (second.total, second.done, report.pages) == (n - 119, n - 119, n - 119)
    doc = store.get_document(partial.id, with_pages=True)
    assert doc.status == "ready" and [p.number for p in doc.pages] == list(range(1, n + 1))
    assert "Paragraph on page 300" in doc.pages[-1].text
    with sqlite3.connect(root / SQLiteStore.DB_NAME) as db:
        [(rows, distinct)] = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT number) FROM pages WHERE doc_id = ?", [doc.id]
        ).fetchall()
    assert rows == distinct == n
    remove(store, root, doc.id)
    assert snapshot(root) == before
