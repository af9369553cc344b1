"""Fixtures for the KG4VD build tests: real documents ingested once per session, copied per test.

- ``wh_ingested``: a workspace folder holding the 5-page World History excerpt, ingested
  and built offline once, then reset (``reset_graph``): no graph, but the embedding
  cache is warm, so the copies below rebuild in seconds with the real offline embedder.
- ``wh_built``: a copy built offline (open Workspace, BuildReport); read-only use.
- ``wh_workspace(settings=None, name="ws", **overrides)``: a fresh copy of ``wh_ingested``
  opened with hermetic settings (the process environment is ignored) plus ``overrides``.
- ``all_docs_built``: every PDF of ``shared/data/documents`` (~260 pages), a copy of the
  session's ``shared_corpus`` (tests/conftest.py; adding the files again is a no-op), built
  offline once (open Workspace, BuildReport). Its embeddings come from the stub
  server's hashed embedder, so the session pays for ingestion and extraction but not for
  ~7,000 CPU embeddings; the offline strategies and judge are the ones under test.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docgraph import Workspace
from docgraph.config import Settings, load_settings
from docgraph.methods.kg4vd.lifecycle import reset_graph
from docgraph.testing.openai_stub import OpenAIStub

WORLD_HISTORY = "kg4vd_test/world_history_p10-15.pdf"


def hermetic_settings(root: Path, overrides: dict[str, Any] | None = None) -> Settings:
    return load_settings(root, environ={}, overrides=overrides or {})


def open_workspace(root: Path, overrides: dict[str, Any] | None = None, settings: Settings | None = None) -> Workspace:
    return Workspace(root, settings=settings or hermetic_settings(root, overrides))


@pytest.fixture(scope="session")
def wh_pdf(shared_data: Path) -> Path:
    return shared_data / WORLD_HISTORY


@pytest.fixture(scope="session")
def wh_ingested(tmp_path_factory: pytest.TempPathFactory, wh_pdf: Path) -> Path:
    root = tmp_path_factory.mktemp("wh-ingested") / "ws"
    with open_workspace(root) as ws:
        docs = ws.add(wh_pdf)
        assert len(docs) == 1 and docs[0].page_count == 5
        ws.build("kg4vd")  # warms the embedding cache
        reset_graph(ws.context())
    return root


@pytest.fixture(scope="session")
def wh_built(wh_ingested: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("wh-built") / "ws"
    shutil.copytree(wh_ingested, root)
    ws = open_workspace(root)
    report = ws.build("kg4vd")
    yield ws, report
    ws.close()


@pytest.fixture
def wh_workspace(wh_ingested: Path, tmp_path: Path) -> Iterator[Callable[..., Workspace]]:
    opened: list[Workspace] = []

    def make(settings: Settings | None = None, name: str = "ws", **overrides: Any) -> Workspace:
        root = tmp_path / name
        shutil.copytree(wh_ingested, root)
        ws = open_workspace(root, overrides, settings)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()


@pytest.fixture(scope="session")
def all_docs_built(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, shared_corpus_copy):
    root = shared_corpus_copy(tmp_path_factory.mktemp("all-docs") / "ws")  # ingested once per session
    with OpenAIStub() as stub:
        embedding = {"backend": "openai", "base_url": stub.url, "model": "stub-embed", "batch_size": 256}
        ws = open_workspace(root, {"models": {"embedding": embedding}})
        ws.add(sorted((shared_data / "documents").glob("*.pdf")))
        report = ws.build("kg4vd")
        yield ws, report
        ws.close()
