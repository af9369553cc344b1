"""Storage contracts. Every backend (embedded SQLite, PostgreSQL) implements ``Store``.

A store holds, per workspace:
- documents and their pages (with components), written page by page so an
  interrupted ingestion resumes;
- *records*: JSON values under ``(namespace, key)``, optionally owned by a document
  (methods keep page graphs, entities, chunks, build state here);
- *vectors*: float32 rows under ``(namespace, key)``, optionally owned by a document,
  with the embedding model that made them;
- a key/value *cache* (model responses, embeddings) and per-stage *usage*;
- *meta*: workspace-wide settings such as the embedding model of its vectors.

Removing a document deletes its pages, records and vectors in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..types import Document, Page, Usage


@runtime_checkable
class Store(Protocol):
    root: Path

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes; all or nothing. Nested calls join the outer transaction."""

    # documents and pages
    def find_document_by_sha(self, sha256: str) -> Document | None: ...
    def put_document(self, doc: Document) -> None:
        """Insert or update the document row (without pages)."""

    def put_page(self, page: Page) -> None: ...
    def page_numbers(self, doc_id: str) -> set[int]: ...
    def get_document(self, doc_id: str, with_pages: bool = False) -> Document | None:
        """The document; its ``pages`` (a ``types.Pages``) read now or on first use."""

    def list_documents(self, with_pages: bool = False) -> list[Document]:
        """Every document, oldest first; pages as in ``get_document``."""

    def get_page(self, doc_id: str, number: int) -> Page | None: ...
    def iter_pages(self, doc_id: str | None = None) -> Iterator[Page]: ...
    def delete_document(self, doc_id: str) -> None:
        """Delete the document, its pages, records and vectors (files are the caller's)."""

    # records
    def put_record(self, namespace: str, key: str, value: Any, doc_id: str | None = None) -> None: ...
    def put_records(self, namespace: str, items: Iterable[tuple[str, Any, str | None]]) -> None: ...
    def get_record(self, namespace: str, key: str) -> Any | None: ...
    def get_records(self, namespace: str, keys: Iterable[str]) -> dict[str, Any]:
        """The values of the keys that exist, by key (missing keys are left out)."""

    def iter_records(self, namespace: str, doc_id: str | None = None) -> Iterator[tuple[str, Any]]: ...
    def delete_records(self, namespace: str, keys: Iterable[str] | None = None, doc_id: str | None = None) -> int:
        """Delete the given keys, or all of a document's, or (neither given) the whole namespace."""

    def count_records(self, namespace: str) -> int: ...
    def record_keys(self, namespace: str) -> list[str]:
        """The keys of a namespace, sorted, without reading the values."""

    # vectors
    def put_vectors(
        self, namespace: str, keys: list[str], matrix: np.ndarray, model: str, doc_ids: list[str | None] | None = None
    ) -> None: ...
    def load_vectors(self, namespace: str) -> tuple[list[str], np.ndarray]:
        """All keys and their float32 matrix (rows in key order); empty (0, 0) when none."""

    def delete_vectors(self, namespace: str, keys: Iterable[str] | None = None, doc_id: str | None = None) -> int: ...
    def vector_models(self) -> dict[str, str]:
        """namespace -> embedding model that built it (scans the vectors: not for polled calls)."""

    def has_vectors(self, namespace: str) -> bool:
        """Whether the namespace holds any vector; cheap enough for status polls."""

    # cache, usage, meta
    def cache_get(self, namespace: str, key: str) -> bytes | None: ...
    def cache_put(self, namespace: str, key: str, value: bytes) -> None: ...
    def cache_get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The stored values of those ``keys`` that have one (a few queries, not one per key)."""

    def cache_put_many(self, namespace: str, items: Iterable[tuple[str, bytes]]) -> None:
        """Store every ``(key, value)`` in one statement batch (one transaction, or the caller's)."""

    def add_usage(self, stage: str, usage: Usage) -> None: ...
    def usage(self) -> dict[str, Usage]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...

    def close(self) -> None: ...
