"""Shared test helpers: where the shared data lives (CI clones the repo beside ``shared/``),
and the shared PDFs ingested once per session.

``shared_corpus``: every PDF of ``shared/data/documents`` (~260 pages) ingested once with
default settings (the ingest report and recorded progress kept). Tests that only read it
use it directly (tests/documents); tests that build on it take ``shared_corpus_copy(dest)``,
a private copy of the folder, so ingestion — minutes on two cores — is paid once.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from docgraph.config import IngestSettings
from docgraph.documents import IngestReport, ingest
from docgraph.progress import RecordingProgress
from docgraph.store import SQLiteStore
from docgraph.testing.data import shared_data_dir
from docgraph.testing.files import checkpointed
from docgraph.types import Document

pytest_plugins = ["docgraph.testing.fixtures"]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_dir()


@dataclass
class IngestedCorpus:
    store: SQLiteStore
    root: Path
    report: IngestReport
    progress: RecordingProgress

    def doc(self, file_prefix: str) -> Document:
        matches = [d for d in self.report.added if Path(d.path).name.startswith(file_prefix)]
        assert len(matches) == 1, file_prefix
        return self.store.get_document(matches[0].id, with_pages=True)


@pytest.fixture(scope="session")
def shared_corpus(tmp_path_factory, shared_data: Path):
    """All PDFs of shared/data/documents ingested once, pages in parallel (read-only use)."""
    root = tmp_path_factory.mktemp("shared-corpus")
    store = SQLiteStore(root)
    progress = RecordingProgress()
    report = ingest(store, root, IngestSettings(), sorted((shared_data / "documents").glob("*.pdf")), progress=progress)
    yield IngestedCorpus(store, root, report, progress)
    store.close()


@pytest.fixture(scope="session")
def shared_corpus_copy(shared_corpus: IngestedCorpus) -> Callable[[Path], Path]:
    """``copy(dest)``: a private copy of the ingested corpus folder at ``dest`` (returned)."""

    def copy(dest: Path) -> Path:
        shutil.copytree(checkpointed(shared_corpus.root), dest)  # the copy then needs no -wal file
        return dest

    return copy


OPENSTAX_EXCERPT = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="session")
def _openstax_template(tmp_path_factory, shared_data: Path) -> Path:
    """A workspace folder with only the 5-page OpenStax excerpt added (once per session)."""
    from docgraph import Workspace

    root = tmp_path_factory.mktemp("openstax-ws") / "ws"
    with Workspace(root) as ws:
        ws.add([shared_data / "documents" / OPENSTAX_EXCERPT])
    return checkpointed(root)


@pytest.fixture()
def openstax_ws(_openstax_template: Path, tmp_path: Path) -> Path:
    """A private workspace folder holding the OpenStax excerpt (5 pages), ingested, nothing built."""
    return Path(shutil.copytree(_openstax_template, tmp_path / "ws"))


@pytest.fixture(scope="session")
def mmlongbench_excerpt(tmp_path_factory, shared_data: Path) -> Callable[[str, tuple[int, ...]], Path]:
    """``make(file, pages)``: a workspace holding those pages (1-based, in that order) of an
    MMLongBench-Doc PDF, kg4vd and hvm built offline; skips when the documents are absent."""
    from docgraph.testing.files import built_library

    def make(file: str, pages: tuple[int, ...]) -> Path:
        source = shared_data / "mmlongbench_doc" / "documents" / file
        if not source.is_file():
            pytest.skip("the MMLongBench-Doc documents are not in the shared data")
        return built_library({source: pages}, tmp_path_factory.mktemp("excerpt"))

    return make
