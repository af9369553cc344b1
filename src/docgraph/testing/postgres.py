"""A throwaway PostgreSQL 16 + pgvector server for tests (the ``pgserver`` wheel: no system
install, works as root).

- ``postgres_url`` (session fixture, registered through ``docgraph.testing.fixtures``): the
  server's ``postgresql://`` URL; the test is skipped, with the reason, when ``pgserver`` or
  ``psycopg`` is not installed or the server cannot start.
- ``new_pg_schema()``: a fresh schema name, so each test's workspace starts empty.
- ``postgres_settings(url, schema)``: the ``overrides`` that point a ``Workspace`` at it.
- ``start_postgres(pgdata)``: the same server outside pytest (``benchmarks/scale.py``).
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def new_pg_schema() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"


def postgres_settings(url: str, schema: str) -> dict[str, Any]:
    return {"store": {"backend": "postgres", "url": url, "pg_schema": schema}}


def start_postgres(pgdata: Path) -> tuple[Any, str]:
    """Start (or reuse) a pgserver PostgreSQL with pgvector whose data lives in ``pgdata``:
    ``(server, url)``; ``server.cleanup()`` stops it. Raises ``ImportError`` without the
    pgserver/psycopg wheels, and the server's own error when it cannot start."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR not set (CI, containers)
        import pgserver
        import psycopg

        server = pgserver.get_server(pgdata, cleanup_mode="stop")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return server, url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    pgdata = Path(tempfile.mkdtemp(prefix="docgraph-pg-"))  # short: the server's socket lives here
    try:
        server, url = start_postgres(pgdata)
    except ImportError as exc:
        shutil.rmtree(pgdata, ignore_errors=True)
        pytest.skip(f"PostgreSQL tests need the pgserver and psycopg wheels ({exc}); pip install -e '.[dev]'")
    except Exception as exc:  # any reason the server cannot run here
        shutil.rmtree(pgdata, ignore_errors=True)
        pytest.skip(f"pgserver could not start PostgreSQL with pgvector: {type(exc).__name__}: {exc}")
    try:
        yield url
    finally:
        server.cleanup()
        shutil.rmtree(pgdata, ignore_errors=True)
