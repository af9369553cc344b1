"""``docgraph mcp --http``: streamable HTTP behind the same token rule as ``docgraph serve``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_helpers import clean_env

from docgraph.testing.ports import free_port

TOKEN = "s3cret-token"


@pytest.fixture()
def http_server(example_ws):
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "docgraph",
            "mcp",
            "--http",
            "--port",
            str(port),
            "--token",
            TOKEN,
            "-w",
            str(example_ws),
        ],
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp"
    server.terminate()
    server.wait(timeout=30)


def initialize() -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
    }


def test_requests_without_the_token_are_refused(http_server):
    headers = {"accept": "application/json, text/event-stream"}
    for extra in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}):
        refused = httpx.post(http_server, json=initialize(), headers={**headers, **extra}, timeout=30)
        assert refused.status_code == 401 and "Bearer TOKEN" in refused.json()["error"]
    accepted = httpx.post(
        http_server, json=initialize(), headers={**headers, "authorization": f"Bearer {TOKEN}"}, timeout=30
    )
    assert accepted.status_code == 200


def test_the_sdk_client_searches_with_the_token(http_server):
    async def session():
        transport = streamable_http_client(
            http_server, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        )
        async with Client(transport, read_timeout_seconds=300) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "search" in names and "build" not in names
            found = await client.call_tool("search", {"query": "Creative Commons license", "top_pages": 1})
            assert found.structured_content["pages"][0]["page"] == 2

    anyio.run(session)
