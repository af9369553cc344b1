"""The embedded store: one SQLite database (``docgraph.sqlite``) in the workspace folder.

Thread-safe through one connection guarded by a re-entrant lock; WAL journaling so a
reader (the web app) never blocks behind a long build. Each public write runs in a
transaction; ``transaction()`` groups several.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..errors import StoreError
from ..types import Document, Page, Pages, Usage

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


class SQLiteStore:
    """``Store`` on a SQLite file under ``root``."""

    DB_NAME = "docgraph.sqlite"

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._depth = 0
        try:
            self._conn = sqlite3.connect(self.root / self.DB_NAME, check_same_thread=False,
                                         isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.root / self.DB_NAME}: not a readable docgraph database ({exc}); "
                             "move it away or choose another --workspace") from exc
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StoreError(f"{self.root}: workspace schema {version} is not supported by this docgraph "
                             f"(expects {SCHEMA_VERSION}); create a new workspace")

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
            except BaseException:
                self._depth -= 1
                if outer:
                    self._conn.execute("ROLLBACK")
                raise
            else:
                self._depth -= 1
                if outer:
                    self._conn.execute("COMMIT")

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def _write(self, sql: str, params: Iterable[Any] = ()) -> int:
        with self.transaction():
            return self._conn.execute(sql, tuple(params)).rowcount

    def _write_many(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        with self.transaction():
            self._conn.executemany(sql, [tuple(r) for r in rows])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ documents
    def _doc_from_row(self, row: tuple, with_pages: bool = False) -> Document:
        """A Document from its row; its pages read now (``with_pages``) or on first use."""
        doc_id, sha, title, path, kind, page_count, status, added_at = row
        pages = Pages(self.iter_pages(doc_id)) if with_pages else Pages(loader=lambda: self.iter_pages(doc_id))
        return Document(id=doc_id, sha256=sha, title=title, path=path, kind=kind,
                        page_count=page_count, status=status, added_at=added_at, pages=pages)

    _DOC_COLUMNS = "id, sha256, title, path, kind, page_count, status, added_at"

    def find_document_by_sha(self, sha256: str) -> Document | None:
        rows = self._query(f"SELECT {self._DOC_COLUMNS} FROM documents WHERE sha256 = ?", [sha256])
        return self._doc_from_row(rows[0]) if rows else None

    def put_document(self, doc: Document) -> None:
        added = doc.added_at or datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._write(
            "INSERT INTO documents (id, sha256, title, path, kind, page_count, status, added_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET title=excluded.title, "
            "path=excluded.path, kind=excluded.kind, page_count=excluded.page_count, status=excluded.status",
            [doc.id, doc.sha256, doc.title, doc.path, doc.kind, doc.page_count, doc.status, added])

    def put_page(self, page: Page) -> None:
        self._write("INSERT OR REPLACE INTO pages (doc_id, number, data) VALUES (?, ?, ?)",
                    [page.doc_id, page.number, page.model_dump_json()])

    def page_numbers(self, doc_id: str) -> set[int]:
        return {r[0] for r in self._query("SELECT number FROM pages WHERE doc_id = ?", [doc_id])}

    def get_document(self, doc_id: str, with_pages: bool = False) -> Document | None:
        rows = self._query(f"SELECT {self._DOC_COLUMNS} FROM documents WHERE id = ?", [doc_id])
        if not rows:
            return None
        return self._doc_from_row(rows[0], with_pages)

    def list_documents(self, with_pages: bool = False) -> list[Document]:
        return [self._doc_from_row(r, with_pages) for r in
                self._query(f"SELECT {self._DOC_COLUMNS} FROM documents ORDER BY added_at, id")]

    def get_page(self, doc_id: str, number: int) -> Page | None:
        rows = self._query("SELECT data FROM pages WHERE doc_id = ? AND number = ?", [doc_id, number])
        return Page.model_validate_json(rows[0][0]) if rows else None

    def iter_pages(self, doc_id: str | None = None) -> Iterator[Page]:
        if doc_id is None:
            rows = self._query("SELECT data FROM pages ORDER BY doc_id, number")
        else:
            rows = self._query("SELECT data FROM pages WHERE doc_id = ? ORDER BY number", [doc_id])
        for (data,) in rows:
            yield Page.model_validate_json(data)

    def delete_document(self, doc_id: str) -> None:
        with self.transaction():
            for table in ("records", "vectors", "pages"):
                self._conn.execute(f"DELETE FROM {table} WHERE doc_id = ?", [doc_id])
            self._conn.execute("DELETE FROM documents WHERE id = ?", [doc_id])

    # ------------------------------------------------------------------ records
    def put_record(self, namespace: str, key: str, value: Any, doc_id: str | None = None) -> None:
        self.put_records(namespace, [(key, value, doc_id)])

    def put_records(self, namespace: str, items: Iterable[tuple[str, Any, str | None]]) -> None:
        self._write_many("INSERT OR REPLACE INTO records (namespace, key, doc_id, value) VALUES (?, ?, ?, ?)",
                         ((namespace, key, doc_id, json.dumps(value, ensure_ascii=False))
                          for key, value, doc_id in items))

    def get_record(self, namespace: str, key: str) -> Any | None:
        rows = self._query("SELECT value FROM records WHERE namespace = ? AND key = ?", [namespace, key])
        return json.loads(rows[0][0]) if rows else None

    def iter_records(self, namespace: str, doc_id: str | None = None) -> Iterator[tuple[str, Any]]:
        if doc_id is None:
            rows = self._query("SELECT key, value FROM records WHERE namespace = ? ORDER BY key", [namespace])
        else:
            rows = self._query("SELECT key, value FROM records WHERE namespace = ? AND doc_id = ? ORDER BY key",
                               [namespace, doc_id])
        for key, value in rows:
            yield key, json.loads(value)

    def delete_records(self, namespace: str, keys: Iterable[str] | None = None,
                       doc_id: str | None = None) -> int:
        return self._delete_keyed("records", namespace, keys, doc_id)

    def count_records(self, namespace: str) -> int:
        return self._query("SELECT COUNT(*) FROM records WHERE namespace = ?", [namespace])[0][0]

    def record_keys(self, namespace: str) -> list[str]:
        return [key for (key,) in self._query("SELECT key FROM records WHERE namespace = ? ORDER BY key",
                                              [namespace])]

    def _delete_keyed(self, table: str, namespace: str, keys: Iterable[str] | None, doc_id: str | None) -> int:
        with self.transaction():
            if keys is not None:
                total = 0
                for key in keys:
                    total += self._conn.execute(f"DELETE FROM {table} WHERE namespace = ? AND key = ?",
                                                [namespace, key]).rowcount
                return total
            if doc_id is not None:
                return self._conn.execute(f"DELETE FROM {table} WHERE namespace = ? AND doc_id = ?",
                                          [namespace, doc_id]).rowcount
            return self._conn.execute(f"DELETE FROM {table} WHERE namespace = ?", [namespace]).rowcount

    # ------------------------------------------------------------------ vectors
    def put_vectors(self, namespace: str, keys: list[str], matrix: np.ndarray, model: str,
                    doc_ids: list[str | None] | None = None) -> None:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(keys):
            raise StoreError(f"vectors for {namespace}: {len(keys)} keys but matrix shape {matrix.shape}")
        owners = doc_ids if doc_ids is not None else [None] * len(keys)
        self._write_many(
            "INSERT OR REPLACE INTO vectors (namespace, key, doc_id, model, dim, vec) VALUES (?, ?, ?, ?, ?, ?)",
            ((namespace, key, owner, model, matrix.shape[1], matrix[i].tobytes())
             for i, (key, owner) in enumerate(zip(keys, owners))))

    def load_vectors(self, namespace: str) -> tuple[list[str], np.ndarray]:
        rows = self._query("SELECT key, dim, vec FROM vectors WHERE namespace = ? ORDER BY key", [namespace])
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        dim = rows[0][1]
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        return [r[0] for r in rows], matrix.copy()

    def delete_vectors(self, namespace: str, keys: Iterable[str] | None = None,
                       doc_id: str | None = None) -> int:
        return self._delete_keyed("vectors", namespace, keys, doc_id)

    def vector_models(self) -> dict[str, str]:
        return {ns: model for ns, model in self._query("SELECT namespace, MIN(model) FROM vectors GROUP BY namespace")}

    # ------------------------------------------------------------------ cache, usage, meta
    def cache_get(self, namespace: str, key: str) -> bytes | None:
        rows = self._query("SELECT value FROM cache WHERE namespace = ? AND key = ?", [namespace, key])
        return bytes(rows[0][0]) if rows else None

    def cache_put(self, namespace: str, key: str, value: bytes) -> None:
        self._write("INSERT OR REPLACE INTO cache (namespace, key, value) VALUES (?, ?, ?)", [namespace, key, value])

    def add_usage(self, stage: str, usage: Usage) -> None:
        with self.transaction():
            rows = self._conn.execute("SELECT data FROM usage WHERE stage = ?", [stage]).fetchall()
            total = Usage.model_validate_json(rows[0][0]).add(usage) if rows else usage
            self._conn.execute("INSERT OR REPLACE INTO usage (stage, data) VALUES (?, ?)",
                               [stage, total.model_dump_json()])

    def usage(self) -> dict[str, Usage]:
        return {stage: Usage.model_validate_json(data)
                for stage, data in self._query("SELECT stage, data FROM usage ORDER BY stage")}

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", [key])
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._write("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [key, value])
