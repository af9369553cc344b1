"""Undirected weighted adjacency matrices (scipy CSR) and the string-id ↔ index map.

Contract: node indices are ``0 … n-1``; an adjacency is a square ``csr_matrix`` of float64
that is symmetric (``A[i, j] == A[j, i]``), has no explicit zeros, and sorted indices.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

import numpy as np
import scipy.sparse as sp


class IdIndex:
    """A stable map between string ids and ``0 … n-1`` indices, in first-seen order.

    Adding an id that is already present is a no-op and returns its existing index.
    """

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        for item in ids:
            self.add(item)

    def add(self, item: str) -> int:
        """The index of ``item``, adding it at the end when new."""
        found = self._index.get(item)
        if found is not None:
            return found
        self._index[item] = len(self._ids)
        self._ids.append(item)
        return len(self._ids) - 1

    def index(self, item: str) -> int:
        """The index of a known id; ``KeyError`` naming the id otherwise."""
        try:
            return self._index[item]
        except KeyError:
            raise KeyError(f"unknown node id {item!r}") from None

    def indices(self, items: Iterable[str]) -> np.ndarray:
        """Indices of known ids, as an int64 array in the given order."""
        return np.fromiter((self.index(i) for i in items), dtype=np.int64)

    def id(self, index: int) -> str:
        return self._ids[index]

    def ids(self, indices: Iterable[int]) -> list[str]:
        """The ids of the given indices, in the given order."""
        return [self._ids[int(i)] for i in indices]

    def get(self, item: str) -> int | None:
        return self._index.get(item)

    def __contains__(self, item: object) -> bool:
        return item in self._index

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __repr__(self) -> str:
        return f"IdIndex({len(self)} ids)"


def build_adjacency(
    n_nodes: int,
    edges: Sequence[Sequence[int]] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None = None,
    *,
    combine: Literal["max", "sum"] = "max",
    self_loops: bool = False,
) -> sp.csr_matrix:
    """A symmetric ``n_nodes × n_nodes`` CSR adjacency from undirected edges.

    ``edges`` is a sequence of ``(u, v)`` index pairs (or an ``(m, 2)`` array); ``weights``
    gives one positive weight per edge (default 1). ``(u, v)`` and ``(v, u)`` are the same
    edge; duplicates are de-duplicated by ``combine``: ``"max"`` keeps the largest weight,
    ``"sum"`` adds them up. Self-loops are dropped unless ``self_loops`` is true (then kept
    once, on the diagonal). Raises ``ValueError`` for out-of-range indices, a weight count
    that does not match the edges, or non-positive / non-finite weights.
    """
    if n_nodes < 0:
        raise ValueError(f"n_nodes must be >= 0, got {n_nodes}")
    pairs = np.asarray(edges, dtype=np.int64).reshape(-1, 2) if len(edges) else np.zeros((0, 2), np.int64)
    if weights is None:
        w = np.ones(len(pairs), dtype=np.float64)
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if len(w) != len(pairs):
            raise ValueError(f"{len(w)} weights for {len(pairs)} edges")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= n_nodes):
        bad = pairs[(pairs < 0).any(axis=1) | (pairs >= n_nodes).any(axis=1)][0]
        raise ValueError(f"edge {tuple(int(x) for x in bad)} is out of range for {n_nodes} nodes")
    if len(w) and (not np.all(np.isfinite(w)) or w.min() <= 0):
        raise ValueError("edge weights must be finite and > 0")
    if combine not in ("max", "sum"):
        raise ValueError(f"combine must be 'max' or 'sum', got {combine!r}")

    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    if not self_loops:
        keep = lo != hi
        lo, hi, w = lo[keep], hi[keep], w[keep]
    keys = lo * max(n_nodes, 1) + hi
    uniq, inverse = np.unique(keys, return_inverse=True)
    merged = np.zeros(len(uniq), dtype=np.float64)
    if combine == "max":
        np.maximum.at(merged, inverse, w)
    else:
        np.add.at(merged, inverse, w)
    u = uniq // max(n_nodes, 1)
    v = uniq % max(n_nodes, 1)
    off = u != v
    rows = np.concatenate([u, v[off]])
    cols = np.concatenate([v, u[off]])
    vals = np.concatenate([merged, merged[off]])
    adj = sp.csr_matrix((vals, (rows, cols)), shape=(n_nodes, n_nodes), dtype=np.float64)
    adj.sort_indices()
    return adj


def degrees(adj: sp.spmatrix, weighted: bool = False) -> np.ndarray:
    """Per-node degree: number of neighbours, or the sum of edge weights when ``weighted``."""
    csr = sp.csr_matrix(adj)
    if weighted:
        return np.asarray(csr.sum(axis=1)).reshape(-1)
    return np.diff(csr.indptr).astype(np.float64)
