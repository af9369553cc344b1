"""Fixtures for the documents tests: the shared corpus ingested once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def documents_dir(shared_data: Path) -> Path:
    return shared_data / "documents"


@pytest.fixture(scope="session")
def corpus(shared_corpus):
    """All PDFs of shared/data/documents (~260 pages), ingested once per session (tests/conftest.py)."""
    return shared_corpus
