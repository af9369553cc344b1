"""The PostgreSQL store: a workspace's rows in one schema of a PostgreSQL (+ pgvector) database.

``store.backend = "postgres"``, ``store.url = "postgresql://…"`` and ``store.pg_schema``
(one schema per workspace). The workspace folder still holds the files (page images, crops,
marks) and ``docgraph.toml``; every row the SQLite store keeps — documents, pages,
records, vectors, cache, usage, meta — lives in the schema's tables, with the same
semantics:

- one connection guarded by a re-entrant lock; each public write is its own transaction
  and ``transaction()`` groups several (nested calls join the outer one; an exception
  rolls the whole group back), so an interrupted build resumes and a removed document
  leaves nothing behind;
- keys, ids and namespaces compare in byte order (``COLLATE "C"``), as in SQLite, so
  ``iter_records``/``load_vectors`` return rows in the same order on both backends.

Vectors are pgvector ``vector`` columns, read and written in pgvector's binary format:
``load_vectors`` (the methods load a namespace whole into numpy, ``methods/vector_index``)
then costs one ``np.frombuffer`` over the concatenated rows, as fast as a ``bytea`` blob,
while the server can also search them: each namespace gets an HNSW index (inner product;
rows are L2-normalised) on ``vec::vector(dim)`` restricted to that namespace, which
``search_vectors`` uses for approximate top-k in SQL.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StoreError
from ..types import Page, Usage
from .sql_reads import SQLReads

SCHEMA_VERSION = "1"
HNSW_MAX_DIM = 2000  # pgvector's limit for an HNSW index on ``vector``

_C = 'TEXT COLLATE "C"'
_SCHEMA = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS {{schema}};
SET search_path TO {{schema}}, public;
CREATE TABLE IF NOT EXISTS meta (key {_C} PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id {_C} PRIMARY KEY, sha256 {_C} UNIQUE NOT NULL, title TEXT NOT NULL, path TEXT NOT NULL,
    kind TEXT NOT NULL, page_count INTEGER NOT NULL, status TEXT NOT NULL, added_at {_C} NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    doc_id {_C} NOT NULL REFERENCES documents(id) ON DELETE CASCADE, number INTEGER NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (doc_id, number));
CREATE TABLE IF NOT EXISTS records (
    namespace {_C} NOT NULL, key {_C} NOT NULL, doc_id {_C}, value TEXT NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE INDEX IF NOT EXISTS records_doc ON records(doc_id, namespace);
CREATE TABLE IF NOT EXISTS vectors (
    namespace {_C} NOT NULL, key {_C} NOT NULL, doc_id {_C}, model TEXT NOT NULL, dim INTEGER NOT NULL,
    vec vector NOT NULL, PRIMARY KEY (namespace, key));
CREATE INDEX IF NOT EXISTS vectors_doc ON vectors(doc_id, namespace);
CREATE TABLE IF NOT EXISTS cache (namespace {_C} NOT NULL, key {_C} NOT NULL, value BYTEA NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS usage (stage {_C} PRIMARY KEY, data TEXT NOT NULL);
"""


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise StoreError(
            "store.backend = \"postgres\" needs psycopg 3: pip install 'docgraph[postgres]' "
            "(or: pip install 'psycopg[binary]')"
        ) from exc
    return psycopg


class _Vector:
    """A float32 row to be sent as a pgvector ``vector`` (binary format)."""

    __slots__ = ("row",)

    def __init__(self, row: np.ndarray):
        self.row = row


def _register_vector(conn: Any) -> None:
    """Binary dumper (``_Vector``) and loader (raw bytes) for pgvector's ``vector`` type."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the pgvector extension is not installed on this server (CREATE EXTENSION vector)")

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: _Vector) -> bytes:
            row = obj.row
            return struct.pack(">HH", row.shape[0], 0) + row.astype(">f4").tobytes()

    class VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> bytes:
            return bytes(data)

    conn.adapters.register_dumper(_Vector, VectorDumper)
    conn.adapters.register_loader(info.oid, VectorLoader)


def _hnsw_name(namespace: str, dim: int) -> str:
    return "vectors_hnsw_" + hashlib.sha1(f"{namespace}\0{dim}".encode()).hexdigest()[:20]


class PostgresStore(SQLReads):
    """``Store`` on a PostgreSQL schema; files under ``root``."""

    PARAM = "%s"

    def __init__(self, root: Path | str, url: str, schema: str = "docgraph"):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.url = url
        self.schema = schema
        self._lock = threading.RLock()
        self._depth = 0
        self._indexed: set[tuple[str, int]] = set()
        self._closed = False
        self._conn = self._connect(create=True)
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            self._conn.close()
            raise StoreError(
                f"{self._safe_url()} schema {schema}: workspace schema {version} is not supported by "
                f"this docgraph (expects {SCHEMA_VERSION}); use another store.pg_schema"
            )

    def _connect(self, create: bool = False) -> Any:
        """A new autocommit connection with this schema on its search path (``create``: set the
        schema up first)."""
        psycopg = _psycopg()
        try:
            conn = psycopg.connect(self.url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot connect to the PostgreSQL store at {self._safe_url()}: {str(exc).strip()}; check store.url"
            ) from exc
        try:
            if create:
                with conn.transaction():
                    # one schema set-up at a time (two processes opening a new workspace together)
                    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"docgraph:{self.schema}"])
                    conn.execute(_SCHEMA.format(schema=self.schema))
            conn.execute(f"SET search_path TO {self.schema}, public")
            _register_vector(conn)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"cannot set up schema {self.schema!r} in {self._safe_url()}: {str(exc).strip()}") from exc
        return conn

    def _alive(self) -> None:
        """Outside a transaction, replace a connection the server dropped (restart, idle timeout)."""
        if self._depth == 0 and not self._closed and (self._conn.closed or self._conn.broken):
            self._conn = self._connect()

    def _safe_url(self) -> str:
        """The URL without its password (for messages)."""
        from urllib.parse import urlsplit, urlunsplit

        try:
            parts = urlsplit(self.url)
            if parts.password:
                netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
                return urlunsplit(parts._replace(netloc=netloc))
        except ValueError:
            return "store.url"
        return self.url

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._alive()
                self._conn.execute("BEGIN")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._rollback()
                raise
            else:
                self._depth -= 1
                if outer:
                    try:
                        self._conn.execute("COMMIT")
                    except BaseException:
                        self._rollback()
                        raise

    def _rollback(self) -> None:
        if not self._conn.closed:
            try:
                self._conn.execute("ROLLBACK")
            except Exception:  # a broken connection has nothing left to roll back
                pass

    def _query(self, sql: str, params: Iterable[Any] = (), binary: bool = False) -> list[tuple[Any, ...]]:
        with self._lock:
            self._alive()
            return list(self._conn.execute(sql, tuple(params), binary=binary).fetchall())

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(sql, rows)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._conn.close()

    # ------------------------------------------------------------------ documents
    def put_page(self, page: Page) -> None:
        self._write(
            "INSERT INTO pages (doc_id, number, data) VALUES (%s, %s, %s) "
            "ON CONFLICT (doc_id, number) DO UPDATE SET data = EXCLUDED.data",
            [page.doc_id, page.number, page.model_dump_json()],
        )

    # ------------------------------------------------------------------ records
    def put_records(self, namespace: str, items: Iterable[tuple[str, Any, str | None]]) -> None:
        self._write_many(
            "INSERT INTO records (namespace, key, doc_id, value) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (namespace, key) DO UPDATE SET doc_id = EXCLUDED.doc_id, "
            "value = EXCLUDED.value",
            ((namespace, key, doc_id, json.dumps(value, ensure_ascii=False)) for key, value, doc_id in items),
        )

    def _delete_keyed(self, table: str, namespace: str, keys: Iterable[str] | None, doc_id: str | None) -> int:
        with self.transaction():
            if keys is not None:
                return self._exec(
                    f"DELETE FROM {table} WHERE namespace = %s AND key = ANY(%s)",
                    [namespace, list(dict.fromkeys(keys))],
                )
            if doc_id is not None:
                return self._exec(f"DELETE FROM {table} WHERE namespace = %s AND doc_id = %s", [namespace, doc_id])
            return self._exec(f"DELETE FROM {table} WHERE namespace = %s", [namespace])

    # ------------------------------------------------------------------ vectors
    def put_vectors(
        self, namespace: str, keys: list[str], matrix: np.ndarray, model: str, doc_ids: list[str | None] | None = None
    ) -> None:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(keys):
            raise StoreError(f"vectors for {namespace}: {len(keys)} keys but matrix shape {matrix.shape}")
        if not keys:
            return
        dim = int(matrix.shape[1])
        owners = doc_ids if doc_ids is not None else [None] * len(keys)
        with self.transaction():
            self._ensure_hnsw(namespace, dim)
            self._write_many(
                "INSERT INTO vectors (namespace, key, doc_id, model, dim, vec) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (namespace, key) DO UPDATE SET doc_id = EXCLUDED.doc_id, model = EXCLUDED.model, "
                "dim = EXCLUDED.dim, vec = EXCLUDED.vec",
                (
                    (namespace, key, owner, model, dim, _Vector(matrix[i]))
                    for i, (key, owner) in enumerate(zip(keys, owners))
                ),
            )

    def _ensure_hnsw(self, namespace: str, dim: int) -> None:
        """The namespace's HNSW index on ``vec::vector(dim)`` (created once, inside the write's
        transaction so it rolls back with it)."""
        if (namespace, dim) in self._indexed or not 0 < dim <= HNSW_MAX_DIM:
            return
        literal = namespace.replace("'", "''")
        self._exec(
            f"CREATE INDEX IF NOT EXISTS {_hnsw_name(namespace, dim)} ON vectors "
            f"USING hnsw ((vec::vector({dim})) vector_ip_ops) "
            f"WHERE namespace = '{literal}' AND dim = {dim}"
        )
        self._indexed.add((namespace, dim))

    def load_vectors(self, namespace: str) -> tuple[list[str], np.ndarray]:
        rows = self._query(
            "SELECT key, dim, vec FROM vectors WHERE namespace = %s ORDER BY key", [namespace], binary=True
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        dim = rows[0][1]
        # each row: uint16 dim, uint16 unused (together one 4-byte cell), then dim big-endian float32
        raw = np.frombuffer(b"".join(r[2] for r in rows), dtype=">f4").reshape(len(rows), dim + 1)
        return [r[0] for r in rows], raw[:, 1:].astype(np.float32)

    def search_vectors(self, namespace: str, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Approximate top-k ``(key, inner product)`` of a namespace, best first (HNSW in SQL).

        Not part of ``Store``: the methods search exactly in memory (``vector_index``); this
        is for callers that want the server to search (large corpora, other clients)."""
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        dim = int(query.shape[0])
        # the expression and predicate match the partial index so the planner can use it
        literal = namespace.replace("'", "''")
        rows = self._query(
            f"SELECT key, -((vec::vector({dim})) <#> %s) AS score FROM vectors "
            f"WHERE namespace = '{literal}' AND dim = {dim} ORDER BY (vec::vector({dim})) <#> %s LIMIT %s",
            [_Vector(query), _Vector(query), int(k)],
        )
        return [(key, float(score)) for key, score in rows]

    def vector_models(self) -> dict[str, str]:
        return {
            ns: model
            for ns, model in self._query('SELECT namespace, MIN(model COLLATE "C") FROM vectors GROUP BY namespace')
        }

    # ------------------------------------------------------------------ cache, usage, meta
    def cache_put(self, namespace: str, key: str, value: bytes) -> None:
        self._write(
            "INSERT INTO cache (namespace, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value",
            [namespace, key, value],
        )

    def cache_put_many(self, namespace: str, items: Iterable[tuple[str, bytes]]) -> None:
        self._write_many(
            "INSERT INTO cache (namespace, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value",
            ((namespace, key, value) for key, value in items),
        )

    def add_usage(self, stage: str, usage: Usage) -> None:
        with self.transaction():
            rows = self._conn.execute("SELECT data FROM usage WHERE stage = %s FOR UPDATE", [stage]).fetchall()
            total = Usage.model_validate_json(rows[0][0]).add(usage) if rows else usage
            self._exec(
                "INSERT INTO usage (stage, data) VALUES (%s, %s) "
                "ON CONFLICT (stage) DO UPDATE SET data = EXCLUDED.data",
                [stage, total.model_dump_json()],
            )

    def set_meta(self, key: str, value: str) -> None:
        self._write(
            "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            [key, value],
        )
