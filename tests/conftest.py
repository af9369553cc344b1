"""Shared test helpers: where the shared data lives (CI clones the repo beside ``shared/``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.testing.data import shared_data_dir

pytest_plugins = ["docgraph.testing.fixtures"]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_dir()
