"""Shared test helpers: where the shared data lives (CI clones the repo beside ``shared/``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["docgraph.testing.fixtures"]

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    env = os.environ.get("DOCGRAPH_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data", Path("/work/shared/data")]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise RuntimeError("shared/data not found beside the repo; set DOCGRAPH_SHARED_DATA")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_dir()
