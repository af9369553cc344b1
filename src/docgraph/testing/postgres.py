"""A throwaway PostgreSQL 16 + pgvector server for tests (the ``pgserver`` wheel: no system
install, works as root).

- ``postgres_url`` (session fixture, registered through ``docgraph.testing.fixtures``): the
  server's ``postgresql://`` URL; the test is skipped, with the reason, when ``pgserver`` or
  ``psycopg`` is not installed or the server cannot start.
- ``new_pg_schema()``: a fresh schema name, so each test's workspace starts empty.
- ``postgres_settings(url, schema)``: the ``overrides`` that point a ``Workspace`` at it.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest


def new_pg_schema() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"


def postgres_settings(url: str, schema: str) -> dict[str, Any]:
    return {"store": {"backend": "postgres", "url": url, "pg_schema": schema}}


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR not set (CI, containers)
            import pgserver
        import psycopg
    except ImportError as exc:
        pytest.skip(f"PostgreSQL tests need the pgserver and psycopg wheels ({exc}); pip install -e '.[dev]'")
    pgdata = Path(tempfile.mkdtemp(prefix="docgraph-pg-"))  # short: the server's socket lives here
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR not set (CI, containers)
            server = pgserver.get_server(pgdata, cleanup_mode="stop")
        url = server.get_uri()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # any reason the server cannot run here
        shutil.rmtree(pgdata, ignore_errors=True)
        pytest.skip(f"pgserver could not start PostgreSQL with pgvector: {type(exc).__name__}: {exc}")
    try:
        yield url
    finally:
        server.cleanup()
        shutil.rmtree(pgdata, ignore_errors=True)
