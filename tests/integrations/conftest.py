"""The bundled example (``examples/world_history_excerpt.pdf``, 5 pages) added once per session
and built offline with kg4vd and hybrid; tests take a private copy of the folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docgraph import Workspace
from docgraph.testing.files import checkpointed

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "world_history_excerpt.pdf"


@pytest.fixture(scope="session")
def _built_example(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("integrations") / "ws"
    with Workspace(root, settings=None) as ws:
        ws.add([EXAMPLE])
        ws.build("kg4vd")
        ws.build("hybrid")
    return checkpointed(root)


@pytest.fixture()
def example_ws(_built_example: Path, tmp_path: Path) -> Path:
    """A private workspace folder: the bundled example, kg4vd and hybrid built offline."""
    return Path(shutil.copytree(_built_example, tmp_path / "ws"))
