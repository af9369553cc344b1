"""The embedded store: one SQLite database (``docgraph.sqlite``) in the workspace folder.

Thread-safe: one writer connection guarded by a re-entrant lock, WAL journaling. A read
from a thread that finds the writer busy (another thread's build transaction, say) does not
wait for it: it runs on that thread's own read-only connection and sees the last committed
state, so the web app's document list and status answer while a build writes. Reads inside
a transaction's own thread use the writer and see its uncommitted rows. Each public write
runs in a transaction; ``transaction()`` groups several. A full disk rolls the transaction back and
raises ``DiskFullError`` (``diskspace``), which says to free space and run again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StoreError
from ..types import Page, Usage
from .diskspace import disk_full_error, is_disk_full
from .sql_reads import SQLReads

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, sha256 TEXT UNIQUE NOT NULL, title TEXT NOT NULL, path TEXT NOT NULL,
    kind TEXT NOT NULL, page_count INTEGER NOT NULL, status TEXT NOT NULL, added_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE, number INTEGER NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (doc_id, number));
CREATE TABLE IF NOT EXISTS records (
    namespace TEXT NOT NULL, key TEXT NOT NULL, doc_id TEXT, value TEXT NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE INDEX IF NOT EXISTS records_doc ON records(doc_id, namespace);
CREATE TABLE IF NOT EXISTS vectors (
    namespace TEXT NOT NULL, key TEXT NOT NULL, doc_id TEXT, model TEXT NOT NULL, dim INTEGER NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (namespace, key));
CREATE INDEX IF NOT EXISTS vectors_doc ON vectors(doc_id, namespace);
CREATE TABLE IF NOT EXISTS cache (namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS usage (stage TEXT PRIMARY KEY, data TEXT NOT NULL);
"""


class SQLiteStore(SQLReads):
    """``Store`` on a SQLite file under ``root``."""

    DB_NAME = "docgraph.sqlite"

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._depth = 0
        self._readers = threading.local()
        self._reader_connections: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        try:
            self._conn = sqlite3.connect(
                self.root / self.DB_NAME, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.root / self.DB_NAME}: not a readable docgraph database ({exc}); "
                "move it away or choose another --workspace"
            ) from exc
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.root}: workspace schema {version} is not supported by this docgraph "
                f"(expects {SCHEMA_VERSION}); create a new workspace"
            )

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException as exc:
                self._depth -= 1
                if outer:
                    self._rollback()
                    if is_disk_full(exc):
                        raise disk_full_error(self.root) from exc
                raise
            else:
                self._depth -= 1
                if outer:
                    try:
                        self._conn.execute("COMMIT")
                    except sqlite3.OperationalError as exc:
                        self._rollback()
                        if is_disk_full(exc):
                            raise disk_full_error(self.root) from exc
                        raise

    def _rollback(self) -> None:
        """Roll back the open transaction (if SQLite has not already done so after an error)."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        if self._lock.acquire(blocking=False):  # free, or held by this thread (its own transaction)
            try:
                return list(self._conn.execute(sql, tuple(params)).fetchall())
            finally:
                self._lock.release()
        return list(self._reader().execute(sql, tuple(params)).fetchall())

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection (opened on first use, closed with the store)."""
        conn = getattr(self._readers, "conn", None)
        if conn is None:
            with self._readers_lock:
                if self._closed:
                    raise StoreError(f"{self.root / self.DB_NAME}: the store is closed")
                conn = sqlite3.connect(
                    self.root / self.DB_NAME, check_same_thread=False, isolation_level=None, timeout=30
                )
                conn.execute("PRAGMA query_only=ON")
                self._reader_connections.append(conn)
            self._readers.conn = conn
        return conn

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self._conn.executemany(sql, rows)

    def close(self) -> None:
        with self._lock, self._readers_lock:
            self._closed = True
            for conn in self._reader_connections:
                conn.close()
            self._reader_connections.clear()
            self._conn.close()

    # ------------------------------------------------------------------ documents
    def put_page(self, page: Page) -> None:
        self._write(
            "INSERT OR REPLACE INTO pages (doc_id, number, data) VALUES (?, ?, ?)",
            [page.doc_id, page.number, page.model_dump_json()],
        )

    # ------------------------------------------------------------------ records
    def put_records(self, namespace: str, items: Iterable[tuple[str, Any, str | None]]) -> None:
        self._write_many(
            "INSERT OR REPLACE INTO records (namespace, key, doc_id, value) VALUES (?, ?, ?, ?)",
            ((namespace, key, doc_id, json.dumps(value, ensure_ascii=False)) for key, value, doc_id in items),
        )

    # ------------------------------------------------------------------ vectors
    def put_vectors(
        self, namespace: str, keys: list[str], matrix: np.ndarray, model: str, doc_ids: list[str | None] | None = None
    ) -> None:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(keys):
            raise StoreError(f"vectors for {namespace}: {len(keys)} keys but matrix shape {matrix.shape}")
        owners = doc_ids if doc_ids is not None else [None] * len(keys)
        self._write_many(
            "INSERT OR REPLACE INTO vectors (namespace, key, doc_id, model, dim, vec) VALUES (?, ?, ?, ?, ?, ?)",
            (
                (namespace, key, owner, model, matrix.shape[1], matrix[i].tobytes())
                for i, (key, owner) in enumerate(zip(keys, owners))
            ),
        )

    def load_vectors(self, namespace: str) -> tuple[list[str], np.ndarray]:
        rows = self._query("SELECT key, dim, vec FROM vectors WHERE namespace = ? ORDER BY key", [namespace])
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        dim = rows[0][1]
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        return [r[0] for r in rows], matrix.copy()

    def vector_models(self) -> dict[str, str]:
        return {ns: model for ns, model in self._query("SELECT namespace, MIN(model) FROM vectors GROUP BY namespace")}

    # ------------------------------------------------------------------ cache, usage, meta
    def cache_put(self, namespace: str, key: str, value: bytes) -> None:
        self._write("INSERT OR REPLACE INTO cache (namespace, key, value) VALUES (?, ?, ?)", [namespace, key, value])

    def cache_put_many(self, namespace: str, items: Iterable[tuple[str, bytes]]) -> None:
        self._write_many(
            "INSERT OR REPLACE INTO cache (namespace, key, value) VALUES (?, ?, ?)",
            ((namespace, key, value) for key, value in items),
        )

    def add_usage(self, stage: str, usage: Usage) -> None:
        with self.transaction():
            rows = self._conn.execute("SELECT data FROM usage WHERE stage = ?", [stage]).fetchall()
            total = Usage.model_validate_json(rows[0][0]).add(usage) if rows else usage
            self._conn.execute(
                "INSERT OR REPLACE INTO usage (stage, data) VALUES (?, ?)", [stage, total.model_dump_json()]
            )

    def set_meta(self, key: str, value: str) -> None:
        self._write("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [key, value])
