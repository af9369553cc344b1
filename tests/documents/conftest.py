"""Fixtures for the documents tests: the shared corpus ingested once per session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from docgraph.config import IngestSettings
from docgraph.documents import IngestReport, ingest
from docgraph.progress import RecordingProgress
from docgraph.store import SQLiteStore
from docgraph.types import Document


@pytest.fixture(scope="session")
def documents_dir(shared_data: Path) -> Path:
    return shared_data / "documents"


@dataclass
class Corpus:
    store: SQLiteStore
    root: Path
    report: IngestReport
    progress: RecordingProgress

    def doc(self, file_prefix: str) -> Document:
        matches = [d for d in self.report.added if Path(d.path).name.startswith(file_prefix)]
        assert len(matches) == 1, file_prefix
        return self.store.get_document(matches[0].id, with_pages=True)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory, documents_dir: Path):
    """All PDFs of shared/data/documents (~260 pages) ingested once, pages in parallel."""
    root = tmp_path_factory.mktemp("corpus")
    store = SQLiteStore(root)
    progress = RecordingProgress()
    report = ingest(store, root, IngestSettings(), sorted(documents_dir.glob("*.pdf")), progress=progress)
    yield Corpus(store, root, report, progress)
    store.close()
