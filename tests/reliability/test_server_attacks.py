"""Attacks on the web app (issue 15 item 6), beyond tests/server/test_server_security.py:
traversal in every path parameter of every route, expired and forged tokens in every
place a token goes, slow uploads cut half-way, and a bounded request flood — all refused
or absorbed, nothing leaked, the workspace unchanged (``docgraph.testing.server_attacks``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from docgraph import Workspace
from docgraph.server import create_app
from docgraph.testing.concurrency import TOKEN
from docgraph.testing.server_attacks import flood_case, slow_upload_case, token_case, traversal_case

DOC = "040fed959f81"


def assert_survived(result) -> None:
    assert result.leaks == [], result.leaks
    assert result.tried > 0 and result.refused + result.absorbed == result.tried
    assert (result.changed_rows, result.check_problems) == (0, 0), result.notes
    assert result.survived


@pytest.fixture
def dense_root(_dense_template: Path, tmp_path: Path) -> Path:
    root = Path(shutil.copytree(_dense_template, tmp_path / "ws"))
    (tmp_path / "secret.txt").write_text("TOP-SECRET")
    return root


def test_every_path_parameter_refuses_traversal(dense_root):
    with Workspace(dense_root) as ws, TestClient(create_app(ws, token=TOKEN)) as client:
        result = traversal_case(
            client,
            dense_root,
            {"doc_id": DOC, "number": "2", "component_id": "IM1", "job_id": "build-1"},
            secret=b"TOP-SECRET",
        )
        assert len(ws.documents()) == 1  # DELETE /api/documents/<traversal> removed nothing
    assert result.tried >= 150, result.tried  # every parameter × every payload × methods
    assert_survived(result)


def test_missing_forged_and_expired_tokens_are_refused_everywhere(dense_root):
    clients = []
    with Workspace(dense_root) as ws:

        def make(token: str) -> TestClient:
            client = TestClient(create_app(ws, token=token))
            client.__enter__()
            clients.append(client)
            return client

        try:
            result = token_case(make, dense_root, token=TOKEN, previous="tok-yesterday")
        finally:
            for client in clients:
                client.__exit__(None, None, None)
    assert result.tried >= 90 and result.absorbed == 0
    assert_survived(result)


@pytest.mark.slow
def test_slow_uploads_cut_half_way_leave_nothing_and_others_are_served(dense_root):
    result = slow_upload_case(dense_root, clients=6, seconds=6.0)
    assert result.tried >= 10
    assert_survived(result)


@pytest.mark.slow
def test_a_bounded_request_flood_is_absorbed(dense_root):
    result = flood_case(dense_root, DOC, threads=12, per_thread=25)
    assert result.tried == 300
    assert_survived(result)
