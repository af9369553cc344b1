"""``docgraph serve``: options, and a real server on 127.0.0.1 with the token from the environment."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from server_workspace import DOC_ID, write_workspace

from docgraph.cli import build_parser
from docgraph.cli.serve import is_loopback
from docgraph.testing.ports import free_port


def test_serve_options(monkeypatch):
    monkeypatch.delenv("DOCGRAPH_TOKEN", raising=False)
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.token, args.cors_origin) == ("127.0.0.1", 8000, None, [])
    args = build_parser().parse_args(
        [
            "serve",
            "--port",
            "9001",
            "--token",
            "t",
            "--cors-origin",
            "http://a:1",
            "--cors-origin",
            "http://b:2",
            "--max-upload-mb",
            "5",
        ]
    )
    assert (args.port, args.token, args.cors_origin, args.max_upload_mb) == (9001, "t", ["http://a:1", "http://b:2"], 5)
    monkeypatch.setenv("DOCGRAPH_TOKEN", "from-env")
    assert build_parser().parse_args(["serve"]).token == "from-env"


@pytest.mark.parametrize(
    "host, loopback",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_serve_runs_a_server_that_needs_the_token(tmp_path):
    write_workspace(tmp_path / "ws").close()
    port = free_port()
    env = {**os.environ, "DOCGRAPH_TOKEN": "tok-123"}
    command = [sys.executable, "-m", "docgraph", "-w", str(tmp_path / "ws"), "serve", "--port", str(port)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                first = httpx.get(f"{base}/api/documents", timeout=2)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"server did not start: {proc.stdout.read() if proc.stdout else ''}") from None
                time.sleep(0.2)
        assert first.status_code == 401
        auth = {"Authorization": "Bearer tok-123"}
        docs = httpx.get(f"{base}/api/documents", headers=auth, timeout=5).json()
        assert [d["id"] for d in docs["documents"]] == [DOC_ID]
        assert httpx.get(f"{base}/", headers=auth, timeout=5).status_code == 200
        # a loopback server accepts only loopback Host names (DNS rebinding guard)
        rebound = httpx.get(f"{base}/api/documents", headers={**auth, "Host": "attacker.example"}, timeout=5)
        assert rebound.status_code == 400
    finally:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert f"http://127.0.0.1:{port}/" in out and "token required" in out
