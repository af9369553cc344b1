"""Interrupted ingestion resumes without redoing stored pages; re-adding is then a no-op."""

from __future__ import annotations

import pytest
from docs_helpers import snapshot

from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.progress import RecordingProgress
from docgraph.store import SQLiteStore


class StopAfter(RecordingProgress):
    """Simulates Ctrl-C after ``k`` pages have been stored."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def advance(self, n: int = 1, **stats) -> None:
        super().advance(n, **stats)
        if self.done >= self.k:
            raise KeyboardInterrupt


def test_interrupted_ingest_resumes_where_it_stopped(tmp_path, documents_dir):
    source = documents_dir / "openstax_world_history_v1_excerpt.pdf"
    root = tmp_path / "ws"
    store = SQLiteStore(root)
    settings = IngestSettings(workers=2)
    with pytest.raises(KeyboardInterrupt):
        ingest(store, root, settings, [source], progress=StopAfter(2))
    (doc,) = store.list_documents()
    assert doc.status == "ingesting"
    stored = store.page_numbers(doc.id)
    assert len(stored) == 2
    images = {n: (root / store.get_page(doc.id, n).image_path).stat().st_mtime_ns for n in stored}

    progress = RecordingProgress()
    report = ingest(store, root, settings, [source], progress=progress)
    assert report.failures == [] and [d.id for d in report.added] == [doc.id]
    assert progress.total == progress.done == 3  # only the pages not stored before
    done = store.get_document(doc.id, with_pages=True)
    assert done.status == "ready" and [p.number for p in done.pages] == [1, 2, 3, 4, 5]
    assert {n: (root / store.get_page(doc.id, n).image_path).stat().st_mtime_ns for n in stored} == images
    assert all(c.section_path and c.section_path[0] == done.title for p in done.pages for c in p.components)
    assert list(store.iter_records("documents.heading_sizes")) == []

    before = snapshot(root)
    again = ingest(store, root, settings, [source])
    assert again.added == [] and [d.id for d in again.skipped] == [doc.id]
    assert snapshot(root) == before
    store.close()
