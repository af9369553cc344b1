"""Office inputs go through LibreOffice headless; without it, the error names the Debian package.

Both branches run everywhere: absence is simulated by an empty PATH entry, presence by a stand-in
``soffice`` script; a real conversion runs too when LibreOffice is installed.
"""

from __future__ import annotations

import shutil
import sys

import pytest
from docs_helpers import FAKE_SOFFICE, minimal_docx, snapshot

from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.store import SQLiteStore

SETTINGS = IngestSettings(workers=1)
TEXT = ["Office documents are converted to PDF before parsing.", "The converted pages keep the kind office."]


@pytest.fixture
def workspace(tmp_path):
    store = SQLiteStore(tmp_path / "ws")
    yield store, tmp_path / "ws"
    store.close()


def test_without_libreoffice_the_error_names_the_debian_package(workspace, tmp_path, monkeypatch):
    store, root = workspace
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    docx = minimal_docx(tmp_path / "memo.docx", TEXT)
    pptx = tmp_path / "deck.pptx"
    pptx.write_bytes(docx.read_bytes())
    before = snapshot(root)
    report = ingest(store, root, SETTINGS, [docx, pptx])
    messages = [str(f) for f in report.failures]
    assert report.added == [] and len(messages) == 2
    assert messages[0].startswith(str(docx)) and "apt-get install libreoffice-writer-nogui" in messages[0]
    assert messages[1].startswith(str(pptx)) and "apt-get install libreoffice-impress-nogui" in messages[1]
    assert snapshot(root) == before


def test_with_libreoffice_a_docx_becomes_an_office_document(workspace, tmp_path, monkeypatch):
    store, root = workspace
    fake = tmp_path / "bin" / "soffice"
    fake.parent.mkdir()
    fake.write_text(FAKE_SOFFICE.format(python=sys.executable))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    docx = minimal_docx(tmp_path / "memo.docx", TEXT)
    report = ingest(store, root, SETTINGS, [docx])
    assert report.failures == []
    doc = store.get_document(report.added[0].id, with_pages=True)
    assert (doc.kind, doc.path, doc.page_count) == ("office", str(docx.resolve()), 1)
    assert "converted to PDF before parsing" in doc.pages[0].text


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_real_libreoffice_conversion(workspace, tmp_path):
    store, root = workspace
    report = ingest(store, root, SETTINGS, [minimal_docx(tmp_path / "memo.docx", TEXT)])
    assert report.failures == [] and report.added[0].kind == "office"
    assert "keep the kind office" in store.get_page(report.added[0].id, 1).text
