"""Exact cosine search over a store vector namespace, held in memory.

Rows are L2-normalised at write time by the embedders, so cosine = dot product. The
matrix is loaded once per (store, namespace) and reloaded only when the namespace's
version stamp (bumped by ``write_vectors``) changes. Exact search is fast enough below
about a million rows (DESIGN.md: 100k × 384 top-10 in ~7 ms).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np

from ...store.base import Store
from ..memo import StoreCache


def _version_key(namespace: str) -> str:
    return f"vectors_version:{namespace}"


def write_vectors(
    store: Store,
    namespace: str,
    keys: list[str],
    matrix: np.ndarray,
    model: str,
    doc_ids: list[str | None] | None = None,
) -> None:
    """Store rows and bump the namespace's version so cached indexes reload."""
    if not keys:
        return
    with store.transaction():
        store.put_vectors(namespace, keys, matrix, model, doc_ids)
        store.set_meta(_version_key(namespace), uuid.uuid4().hex)


def delete_vectors(store: Store, namespace: str, keys: list[str] | None = None, doc_id: str | None = None) -> int:
    with store.transaction():
        n = store.delete_vectors(namespace, keys=keys, doc_id=doc_id)
        store.set_meta(_version_key(namespace), uuid.uuid4().hex)
    return n


@dataclass
class VectorIndex:
    keys: list[str]
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalised
    position: dict[str, int]

    def __len__(self) -> int:
        return len(self.keys)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with every row (aligned with ``keys``)."""
        if not self.keys:
            return np.zeros(0, dtype=np.float32)
        return self.matrix @ np.asarray(query, dtype=np.float32).reshape(-1)

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (key, cosine), best first; ``allowed`` is an optional boolean mask over rows."""
        scores = self.scores(query)
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.keys[i], float(scores[i])) for i in top]

    def vector(self, key: str) -> np.ndarray | None:
        i = self.position.get(key)
        return None if i is None else self.matrix[i]


_INDEXES = StoreCache(48)  # namespaces; a workspace has a few per method


def load_index(store: Store, namespace: str) -> VectorIndex:
    """The in-memory index of a namespace (cached until the namespace changes; ``memo``)."""

    def load() -> VectorIndex:
        keys, matrix = store.load_vectors(namespace)
        return VectorIndex(keys=keys, matrix=matrix, position={k: i for i, k in enumerate(keys)})

    return _INDEXES.get(store, namespace, store.get_meta(_version_key(namespace)), load)
