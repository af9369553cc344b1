"""Fixtures for the web app tests: the small workspace of ``server_workspace`` and
TestClients over it, with and without a token."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_workspace import TOKEN, write_workspace

from docgraph.api import Workspace
from docgraph.server import create_app


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = write_workspace(tmp_path / "ws")
    yield ws
    ws.close()


@pytest.fixture
def make_client(workspace: Workspace) -> Iterator[Callable[..., TestClient]]:
    """``make_client(token=None, **create_app_kwargs)`` → a started TestClient."""
    clients: list[TestClient] = []

    def make(**kwargs) -> TestClient:
        client = TestClient(create_app(workspace, **kwargs))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client) -> TestClient:
    return make_client()


@pytest.fixture
def token_client(make_client) -> TestClient:
    return make_client(token=TOKEN)
