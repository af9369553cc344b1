"""Fixtures for the reliability tests: the 5-page OpenStax workspace with the dense baseline built."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docgraph import Workspace
from docgraph.testing.files import checkpointed


@pytest.fixture(scope="session")
def _dense_template(_openstax_template: Path, tmp_path_factory) -> Path:
    root = Path(shutil.copytree(_openstax_template, tmp_path_factory.mktemp("dense-ws") / "ws"))
    with Workspace(root) as ws:
        ws.build("dense")
    return checkpointed(root)


@pytest.fixture()
def dense_ws(_dense_template: Path, tmp_path: Path) -> Path:
    """A private workspace: the OpenStax excerpt (5 pages) added and the dense baseline built."""
    return Path(shutil.copytree(_dense_template, tmp_path / "ws"))


@pytest.fixture(scope="session")
def _two_docs_template(_openstax_template: Path, tmp_path_factory) -> Path:
    """The OpenStax excerpt (5 pages) and the one-page Acciona report added, nothing built."""
    from conftest_paths import ACCIONA

    root = Path(shutil.copytree(_openstax_template, tmp_path_factory.mktemp("two-docs") / "ws"))
    with Workspace(root) as ws:
        ws.add([ACCIONA])
    return checkpointed(root)
