"""Bounded neighbourhoods: breadth-first expansion from seeds with a hop and a node cap."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from .adjacency import degrees

NodeScores = Callable[[np.ndarray], np.ndarray]
"""Scores of the given nodes (an int64 index array), computed on demand: a caller whose
per-node score costs a vector product passes one, so only the nodes an expansion reaches
pay for it, not the whole graph."""


def _ranked(nodes: np.ndarray, priority_of: NodeScores) -> np.ndarray:
    """``nodes`` ordered by priority (high first), ties by smaller index."""
    if len(nodes) == 0:
        return nodes
    order = np.lexsort((nodes, -np.asarray(priority_of(nodes), dtype=np.float64)))
    return nodes[order]


def node_scores(values: Sequence[float] | np.ndarray | NodeScores, n: int, name: str) -> NodeScores:
    """``values`` as a :data:`NodeScores`: a callable as is, a vector over all ``n`` nodes
    indexed (``ValueError`` naming ``name`` when its length is not ``n``)."""
    if callable(values):
        return values
    full = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(full) != n:
        raise ValueError(f"{name} has {len(full)} entries for {n} nodes")
    return full.__getitem__


def bounded_subgraph(
    adj: sp.spmatrix,
    seeds: Sequence[int] | np.ndarray,
    h_max: int,
    n_max: int,
    priority: Sequence[float] | np.ndarray | NodeScores | None = None,
) -> np.ndarray:
    """Node indices within ``h_max`` hops of ``seeds``, at most ``n_max`` of them.

    The result lists hop ring by hop ring: first the seeds (ring 0), then the nodes first
    reached at hop 1, then hop 2, …; inside a ring nodes are ordered by ``priority``
    (higher first; a score per node of the whole graph or a :data:`NodeScores` asked
    only about the nodes reached, default: the node's number of neighbours), ties by
    smaller index. Seeds always come first and are all kept unless
    there are more than ``n_max`` of them, in which case the highest-priority seeds are
    kept. When a ring does not fit, its highest-priority nodes fill the remaining room and
    the expansion stops. Duplicate seeds count once. Edges are followed in the row
    direction (``adj[u, v] != 0`` reaches ``v`` from ``u``); for the symmetric adjacency
    of :func:`build_adjacency` that is every edge. Deterministic for equal inputs.
    """
    csr = sp.csr_matrix(adj)
    n = csr.shape[0]
    if csr.shape[0] != csr.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {csr.shape}")
    if h_max < 0:
        raise ValueError(f"h_max must be >= 0, got {h_max}")
    if n_max < 0:
        raise ValueError(f"n_max must be >= 0, got {n_max}")
    prio = node_scores(degrees(csr) if priority is None else priority, n, "priority")
    seed_arr = np.unique(np.asarray(seeds, dtype=np.int64).reshape(-1))
    if len(seed_arr) and (seed_arr[0] < 0 or seed_arr[-1] >= n):
        raise ValueError(f"seed indices must be in [0, {n}), got {seed_arr.min()}..{seed_arr.max()}")
    if n_max == 0 or len(seed_arr) == 0:
        return np.zeros(0, dtype=np.int64)

    ring = _ranked(seed_arr, prio)[:n_max]
    taken = [ring]
    count = len(ring)
    visited = np.zeros(n, dtype=bool)
    visited[ring] = True
    hop = 0
    while hop < h_max and count < n_max and len(ring):
        neighbours = np.unique(csr[ring].indices)
        fresh = neighbours[~visited[neighbours]]
        if len(fresh) == 0:
            break
        ring = _ranked(fresh, prio)[: n_max - count]
        visited[ring] = True
        taken.append(ring)
        count += len(ring)
        hop += 1
    return np.concatenate(taken).astype(np.int64)
