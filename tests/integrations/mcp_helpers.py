"""Driving ``docgraph mcp`` in a subprocess with the SDK's own client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("DOCGRAPH_")}


def stdio_client(ws: Path, *extra: str) -> Client:
    """A client that starts ``python -m docgraph mcp -w WS`` and talks over its stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "docgraph", "mcp", "-w", str(ws), *extra], env=clean_env()
    )
    return Client(params, read_timeout_seconds=300)
