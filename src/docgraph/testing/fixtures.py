"""pytest fixtures and helpers for model-driven tests (``pytest_plugins = ["docgraph.testing.fixtures"]``
in the root conftest, or import the fixtures into a conftest).

Fixtures:
- ``private_table_cache`` (session, automatic): the tables ``methods.disk_memo`` keeps
  between processes go to a session folder (``DOCGRAPH_TABLE_CACHE``), never the user's.
- ``openai_stub``: a started ``OpenAIStub`` (stopped after the test).
- ``stub_hub``: a ``ModelHub`` on a fresh workspace in ``tmp_path`` whose build/answer/judge
  roles point at ``openai_stub`` (fast backoff, short timeout).

Helpers (plain functions, usable without pytest):
- ``stub_settings(stub, ...)``: ``Settings`` pointing the chat roles (and optionally the
  embedding, image-embedding and rerank endpoints) at the stub.
- ``make_hub(settings, root)``: a ``ModelHub`` over a new SQLite workspace store in ``root``.
- ``replay_hub(root, entries)``: a hub whose every role replays ``entries`` — ``(stage,
  reply)`` pairs or dicts, see ``docgraph.models.chat.replay`` — through the real
  structured/cache/usage wrappers, no HTTP at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..config import Settings, load_settings
from ..methods.disk_memo import CACHE_ENV
from ..models.chat.replay import write_replay
from ..models.hub import ROLES, ModelHub
from .openai_stub import OpenAIStub
from .postgres import postgres_url  # noqa: F401  (session fixture: a throwaway PostgreSQL server)

FAST_CHAT = {
    "model": "stub-model",
    "timeout_s": 2.0,
    "max_retries": 2,
    "backoff_base_s": 0.01,
    "backoff_max_s": 0.05,
    "max_concurrency": 4,
}


@pytest.fixture(scope="session", autouse=True)
def private_table_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("table-cache")
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before


def _merge(base: dict, extra: Mapping) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), dict) else value
    return out


def stub_settings(
    stub: OpenAIStub,
    *,
    roles: Sequence[str] = ROLES,
    embeddings: bool = False,
    image_embeddings: bool = False,
    rerank: bool = False,
    overrides: Mapping[str, Any] | None = None,
    **chat: Any,
) -> Settings:
    """Settings whose chat ``roles`` (and the chosen embedding/rerank endpoints) use ``stub``.

    ``chat`` overrides the fast test defaults (``FAST_CHAT``) for every role; ``overrides``
    is a nested dict applied last. The process environment is ignored.
    """
    role_settings = {**FAST_CHAT, **chat, "base_url": stub.url}
    models: dict[str, Any] = {role: dict(role_settings) for role in roles}
    if embeddings:
        models["embedding"] = {"backend": "openai", "base_url": stub.url, "model": "stub-embed"}
    if image_embeddings:
        models["image_embedding"] = {"backend": "openai", "base_url": stub.url, "model": "stub-gme"}
    if rerank:
        models["reranker"] = {"backend": "endpoint", "base_url": stub.url, "model": "stub-rerank"}
    return load_settings(None, environ={}, overrides=_merge({"models": models}, overrides or {}))


def make_hub(settings: Settings, root: Path | str, **kwargs: Any) -> ModelHub:
    """A ModelHub over a new (or existing) SQLite workspace store at ``root``."""
    from ..store.sqlite import SQLiteStore

    return ModelHub(settings.models, SQLiteStore(root), Path(root), **kwargs)


def replay_hub(
    root: Path | str, entries: Iterable[Mapping[str, Any] | tuple[str, Any]], overrides: Mapping[str, Any] | None = None
) -> ModelHub:
    """A hub whose chat roles answer from ``entries`` (written to ``root/replay.jsonl``)."""
    root = Path(root)
    path = write_replay(root / "replay.jsonl", entries)
    settings = load_settings(
        None, environ={}, overrides=_merge({"models": {"replay_file": str(path)}}, overrides or {})
    )
    return make_hub(settings, root)


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture
def stub_hub(openai_stub: OpenAIStub, tmp_path: Path) -> Iterator[ModelHub]:
    hub = make_hub(stub_settings(openai_stub), tmp_path / "ws")
    yield hub
    hub.store.close()
