"""The SQL both relational stores share: reads, plain deletes and batched writes over the
same tables.

``SQLiteStore`` and ``PostgresStore`` keep the same schema (documents, pages, records,
vectors, cache, usage, meta) and differ in connections, transactions, upserts and the
vector column. What does not differ lives here once: the statements are written with
``?`` and the backend's ``PARAM`` (``?`` or ``%s``) is put in. A backend provides
``_conn`` (a DB-API connection with ``execute``), ``_query(sql, params) -> rows``,
``_executemany(sql, rows)`` and a ``transaction()`` context.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from ..types import Document, Page, Pages, Usage

CACHE_BATCH = 500  # keys per cache or record lookup query (under every backend's parameter limit)
RECORD_PAGE = 2000  # rows per query when iterating a namespace
WRITE_SLICE = 1000  # rows serialised and sent at a time by one ``_write_many``


class SQLReads:
    # what a backend provides (see the module docstring)
    _conn: Any
    _query: Callable[..., list[tuple[Any, ...]]]
    _executemany: Callable[[str, list[tuple[Any, ...]]], None]
    transaction: Callable[[], AbstractContextManager[Any]]
    put_records: Callable[[str, Iterable[tuple[str, Any, str | None]]], None]  # the backend's upsert

    PARAM = "?"

    def _sql(self, statement: str) -> str:
        return statement if self.PARAM == "?" else statement.replace("?", self.PARAM)

    def _rows(self, statement: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        return self._query(self._sql(statement), list(params))

    def _exec(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Run one statement inside the current transaction; its row count."""
        return int(self._conn.execute(sql, tuple(params)).rowcount)

    def _write(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One statement in its own transaction (or the caller's); its row count."""
        with self.transaction():
            return self._exec(sql, params)

    def _write_many(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        """``sql`` once per row, all in one transaction (or the caller's), ``WRITE_SLICE`` rows
        at a time: given a generator, a write of a whole connection batch holds one slice's
        serialised rows, never all of them beside the objects they came from."""
        rows = iter(rows)
        slices = iter(lambda: [tuple(r) for r in islice(rows, WRITE_SLICE)], [])  # ends at an empty slice
        first = next(slices, None)
        if first is None:
            return
        with self.transaction():
            self._executemany(sql, first)
            for chunk in slices:
                self._executemany(sql, chunk)

    # ------------------------------------------------------------------ documents
    _DOC_COLUMNS = "id, sha256, title, path, kind, page_count, status, added_at"

    def _doc_from_row(self, row: tuple[Any, ...], with_pages: bool = False) -> Document:
        """A Document from its row; its pages read now (``with_pages``) or on first use."""
        doc_id, sha, title, path, kind, page_count, status, added_at = row
        pages = Pages(self.iter_pages(doc_id)) if with_pages else Pages(loader=lambda: self.iter_pages(doc_id))
        return Document(
            id=doc_id,
            sha256=sha,
            title=title,
            path=path,
            kind=kind,
            page_count=page_count,
            status=status,
            added_at=added_at,
            pages=pages,
        )

    def put_document(self, doc: Document) -> None:
        """Insert or update a document row (its sha256 and first ``added_at`` are kept)."""
        added = doc.added_at or datetime.now(UTC).isoformat(timespec="seconds")
        self._write(
            self._sql(
                "INSERT INTO documents (id, sha256, title, path, kind, page_count, status, added_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, "
                "path = EXCLUDED.path, kind = EXCLUDED.kind, page_count = EXCLUDED.page_count, "
                "status = EXCLUDED.status"
            ),
            [doc.id, doc.sha256, doc.title, doc.path, doc.kind, doc.page_count, doc.status, added],
        )

    def find_document_by_sha(self, sha256: str) -> Document | None:
        rows = self._rows(f"SELECT {self._DOC_COLUMNS} FROM documents WHERE sha256 = ?", [sha256])
        return self._doc_from_row(rows[0]) if rows else None

    def get_document(self, doc_id: str, with_pages: bool = False) -> Document | None:
        rows = self._rows(f"SELECT {self._DOC_COLUMNS} FROM documents WHERE id = ?", [doc_id])
        return self._doc_from_row(rows[0], with_pages) if rows else None

    def list_documents(self, with_pages: bool = False) -> list[Document]:
        return [
            self._doc_from_row(r, with_pages)
            for r in self._rows(f"SELECT {self._DOC_COLUMNS} FROM documents ORDER BY added_at, id")
        ]

    def delete_document(self, doc_id: str) -> None:
        """The document row and every page, record and vector it owns, in one transaction."""
        with self.transaction():
            for table in ("records", "vectors", "pages"):
                self._exec(self._sql(f"DELETE FROM {table} WHERE doc_id = ?"), [doc_id])
            self._exec(self._sql("DELETE FROM documents WHERE id = ?"), [doc_id])

    # ------------------------------------------------------------------ pages
    def page_numbers(self, doc_id: str) -> set[int]:
        return {r[0] for r in self._rows("SELECT number FROM pages WHERE doc_id = ?", [doc_id])}

    def get_page(self, doc_id: str, number: int) -> Page | None:
        rows = self._rows("SELECT data FROM pages WHERE doc_id = ? AND number = ?", [doc_id, number])
        return Page.model_validate_json(rows[0][0]) if rows else None

    def iter_pages(self, doc_id: str | None = None) -> Iterator[Page]:
        if doc_id is None:
            rows = self._rows("SELECT data FROM pages ORDER BY doc_id, number")
        else:
            rows = self._rows("SELECT data FROM pages WHERE doc_id = ? ORDER BY number", [doc_id])
        for (data,) in rows:
            yield Page.model_validate_json(data)

    # ------------------------------------------------------------------ records
    def put_record(self, namespace: str, key: str, value: Any, doc_id: str | None = None) -> None:
        self.put_records(namespace, [(key, value, doc_id)])

    def get_record(self, namespace: str, key: str) -> Any | None:
        rows = self._rows("SELECT value FROM records WHERE namespace = ? AND key = ?", [namespace, key])
        return json.loads(rows[0][0]) if rows else None

    def get_records(self, namespace: str, keys: Iterable[str]) -> dict[str, Any]:
        """The values of those ``keys`` that exist, by key (``CACHE_BATCH`` keys per query)."""
        return {key: json.loads(value) for key, value in self._by_keys("records", namespace, keys)}

    def _by_keys(self, table: str, namespace: str, keys: Iterable[str]) -> Iterator[tuple[str, Any]]:
        """``(key, value)`` rows of ``table`` for the given keys that exist, ``CACHE_BATCH`` per query."""
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), CACHE_BATCH):
            batch = wanted[start : start + CACHE_BATCH]
            marks = ", ".join("?" * len(batch))
            yield from self._rows(
                f"SELECT key, value FROM {table} WHERE namespace = ? AND key IN ({marks})", [namespace, *batch]
            )

    def iter_records(self, namespace: str, doc_id: str | None = None) -> Iterator[tuple[str, Any]]:
        """Records in key order, read ``RECORD_PAGE`` rows at a time (keyset pagination), so a
        namespace of any size is never held in memory whole. Rows written by the caller while
        it iterates appear only if their key is after the last row read."""
        owner = "" if doc_id is None else " AND doc_id = ?"
        extra = [] if doc_id is None else [doc_id]
        after: str | None = None
        while True:
            if after is None:
                rows = self._rows(
                    f"SELECT key, value FROM records WHERE namespace = ?{owner} ORDER BY key LIMIT {RECORD_PAGE}",
                    [namespace, *extra],
                )
            else:
                rows = self._rows(
                    f"SELECT key, value FROM records WHERE namespace = ?{owner} AND key > ? "
                    f"ORDER BY key LIMIT {RECORD_PAGE}",
                    [namespace, *extra, after],
                )
            for key, value in rows:
                yield key, json.loads(value)
            if len(rows) < RECORD_PAGE:
                return
            after = rows[-1][0]

    def delete_records(self, namespace: str, keys: Iterable[str] | None = None, doc_id: str | None = None) -> int:
        return self._delete_keyed("records", namespace, keys, doc_id)

    def count_records(self, namespace: str) -> int:
        return int(self._rows("SELECT COUNT(*) FROM records WHERE namespace = ?", [namespace])[0][0])

    def record_keys(self, namespace: str) -> list[str]:
        return [key for (key,) in self._rows("SELECT key FROM records WHERE namespace = ? ORDER BY key", [namespace])]

    def _delete_keyed(self, table: str, namespace: str, keys: Iterable[str] | None, doc_id: str | None) -> int:
        """Delete the given keys, or a document's rows, or the whole namespace; rows deleted."""
        exec_ = self._exec
        with self.transaction():
            if keys is not None:
                return sum(
                    exec_(self._sql(f"DELETE FROM {table} WHERE namespace = ? AND key = ?"), [namespace, key])
                    for key in dict.fromkeys(keys)
                )
            if doc_id is not None:
                return exec_(self._sql(f"DELETE FROM {table} WHERE namespace = ? AND doc_id = ?"), [namespace, doc_id])
            return exec_(self._sql(f"DELETE FROM {table} WHERE namespace = ?"), [namespace])

    def delete_vectors(self, namespace: str, keys: Iterable[str] | None = None, doc_id: str | None = None) -> int:
        return self._delete_keyed("vectors", namespace, keys, doc_id)

    def has_vectors(self, namespace: str) -> bool:
        """Whether the namespace holds any vector (one primary-key probe, no scan)."""
        return bool(self._rows("SELECT 1 FROM vectors WHERE namespace = ? LIMIT 1", [namespace]))

    # ------------------------------------------------------------------ cache, usage, meta
    def cache_get(self, namespace: str, key: str) -> bytes | None:
        rows = self._rows("SELECT value FROM cache WHERE namespace = ? AND key = ?", [namespace, key])
        return bytes(rows[0][0]) if rows else None

    def cache_get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        return {key: bytes(value) for key, value in self._by_keys("cache", namespace, keys)}

    def usage(self) -> dict[str, Usage]:
        return {
            stage: Usage.model_validate_json(data)
            for stage, data in self._rows("SELECT stage, data FROM usage ORDER BY stage")
        }

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", [key])
        return rows[0][0] if rows else None
