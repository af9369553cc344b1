"""KG4VD's query-adaptive Personalized PageRank on a bounded subgraph.

The KG4VD paper, Appendix B.3 (Eq. 1 and 2; METHODS.md "KG4VD — Query" step 4 says
the same)::

    r_{τ+1} = (1 − α) · Pᵀ · r_τ + α · p          (1)
    p       = (1 − β) · s + β · t(q)              (2)

α is the restart probability, s the seed distribution (anchor-page entities weighted by
their query similarity), t(q) ∝ max(0, cos(query, entity)) over the subgraph's nodes, β
the query-bias weight; "dangling mass is redistributed through p".

Reading of "P is the column-normalized adjacency matrix" together with "Pᵀ": taken
literally (P = A·D⁻¹, so Pᵀ = D⁻¹·A) the update would not preserve probability mass and
would not be a random walk. We implement the random walk the equation intends: the
operator applied to r is the column-normalised adjacency, r ← (1 − α)·A·D⁻¹·r + α·p
(i.e. Pᵀ with P the row-stochastic transition matrix D⁻¹·A). This is what the networkx
reference PageRank computes, with networkx's ``alpha`` = 1 − our α and
``dangling = personalization = p``. Neither the paper nor METHODS.md says how to fall
back when s or t is all zero; see :func:`personalization_vector`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from .adjacency import degrees
from .subgraph import NodeScores, bounded_subgraph, node_scores


class PPRModeLike(Protocol):
    """Anything with the Table 8 fields (``PPRModeSettings`` in docgraph.config)."""

    alpha: float
    beta: float
    h_max: int
    n_max: int


def _distribution(values: Sequence[float] | np.ndarray | None, n: int, name: str, clip: bool) -> np.ndarray:
    if values is None:
        return np.zeros(n, dtype=np.float64)
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(arr) != n:
        raise ValueError(f"{name} has {len(arr)} entries for {n} nodes")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    if clip:
        arr = np.maximum(arr, 0.0)
    elif arr.min(initial=0.0) < 0:
        raise ValueError(f"{name} must be non-negative")
    total = arr.sum()
    return arr / total if total > 0 else np.zeros(n, dtype=np.float64)


def personalization_vector(
    seed_weights: Sequence[float] | np.ndarray,
    query_affinity: Sequence[float] | np.ndarray | None = None,
    beta: float = 0.0,
) -> np.ndarray:
    """p = (1 − β)·s + β·t, Eq. 2, over the subgraph's nodes; sums to 1.

    ``seed_weights`` (non-negative, normalised here to s) and ``query_affinity`` (raw
    cosines; t = max(0, cos) normalised here) have one entry per subgraph node. Fallbacks:
    t all zero (or absent) → p = s; s all zero → p = t; both zero → uniform.
    """
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    n = len(np.asarray(seed_weights).reshape(-1))
    s = _distribution(seed_weights, n, "seed_weights", clip=False)
    t = _distribution(query_affinity, n, "query_affinity", clip=True)
    has_s, has_t = s.sum() > 0, t.sum() > 0
    if has_s and has_t:
        return (1.0 - beta) * s + beta * t
    if has_s:
        return s
    if has_t:
        return t
    return np.full(n, 1.0 / n) if n else s


def personalized_pagerank(
    adj_sub: sp.spmatrix,
    seed_weights: Sequence[float] | np.ndarray,
    query_affinity: Sequence[float] | np.ndarray | None = None,
    *,
    alpha: float,
    beta: float = 0.0,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> np.ndarray:
    """PPR scores of the subgraph's nodes (Eq. 1 with p of Eq. 2); non-negative, sums to 1.

    ``adj_sub`` is the (weighted) adjacency of the subgraph; ``adj_sub[u, v]`` is the weight
    of the edge u → v (symmetric for an undirected graph). A node without out-edges is
    dangling: the mass it holds goes back through p. Power iteration from r₀ = p until the
    L1 change is below ``tol`` or after ``max_iter`` iterations (the last iterate is returned;
    with α > 0 the error shrinks by a factor (1 − α) per step). An empty subgraph gives an
    empty array.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if tol <= 0 or max_iter < 1:
        raise ValueError("tol must be > 0 and max_iter >= 1")
    csr = sp.csr_matrix(adj_sub, dtype=np.float64)
    n = csr.shape[0]
    if csr.shape != (n, n):
        raise ValueError(f"adjacency must be square, got shape {csr.shape}")
    if len(np.asarray(seed_weights).reshape(-1)) != n:
        raise ValueError(f"seed_weights has {len(np.asarray(seed_weights).reshape(-1))} entries for {n} nodes")
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    if csr.nnz and csr.data.min() < 0:
        raise ValueError("adjacency weights must be non-negative")
    p = personalization_vector(seed_weights, query_affinity, beta)
    walk, dangling = transition(csr)
    return power_iterate(walk, dangling, p, alpha=alpha, tol=tol, max_iter=max_iter)


def transition(adj: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """(walk operator, dangling mask) of a non-negative adjacency: ``walk[v, u] = A[u, v] / out(u)``,
    so column u spreads u's mass to its neighbours; a node without out-edges is dangling.
    Compute once for a graph that many queries diffuse over."""
    csr = sp.csr_matrix(adj, dtype=np.float64)
    n = csr.shape[0]
    out_weight = np.asarray(csr.sum(axis=1)).reshape(-1)
    dangling = out_weight <= 0
    inv = np.zeros(n, dtype=np.float64)
    inv[~dangling] = 1.0 / out_weight[~dangling]
    return sp.csr_matrix(csr.multiply(inv[:, None]).T), dangling


def cached_walk(holder) -> tuple[sp.csr_matrix, np.ndarray]:
    """``transition(holder.adjacency)``, computed on first use and kept on ``holder._walk``:
    for a graph held in memory that every query diffuses over (its adjacency never changes
    in place; a changed graph is a new holder)."""
    if getattr(holder, "_walk", None) is None:
        holder._walk = transition(holder.adjacency)
    return holder._walk


def cached_spread(holder) -> sp.csr_matrix:
    """The transpose of ``cached_walk(holder)``'s operator (row u: where u's mass goes), for
    ``forward_push``; computed on first use and kept on ``holder._spread``."""
    if getattr(holder, "_spread", None) is None:
        holder._spread = sp.csr_matrix(cached_walk(holder)[0].T)
    return holder._spread


def walk_from(
    holder,
    p: np.ndarray,
    *,
    alpha: float,
    tol: float = 1e-8,
    max_iter: int = 100,
    local_above: int = 0,
    eps: float = 1e-6,
    per_edge: bool = False,
) -> np.ndarray:
    """PPR with restart ``alpha`` from ``p`` (sums to 1) over ``holder.adjacency``, whose walk is
    kept on the holder (``cached_walk``). Exact power iteration costs every edge per step; on a
    graph of more than ``local_above`` edges (0 = never) it is a ``forward_push`` with
    threshold ``eps`` (``per_edge``: per out-edge) instead, whose cost follows the seeds'
    neighbourhood, not the graph."""
    walk, dangling = cached_walk(holder)
    if 0 < local_above < holder.adjacency.nnz:
        return forward_push(cached_spread(holder), dangling, p, alpha=alpha, eps=eps, per_edge=per_edge)
    return power_iterate(walk, dangling, p, alpha=alpha, tol=tol, max_iter=max_iter)


def forward_push(
    spread: sp.csr_matrix,
    dangling: np.ndarray,
    p: np.ndarray,
    *,
    alpha: float,
    eps: float = 1e-6,
    per_edge: bool = False,
) -> np.ndarray:
    """PPR with restart ``alpha`` from ``p`` (sums to 1) by forward push (Andersen, Chung & Lang,
    2006), the local counterpart of ``power_iterate``: every node holding more than its
    threshold of not-yet-spread mass keeps ``alpha`` of it and passes the rest to its
    neighbours (``spread[u]``: u's out-neighbours and the share of u's mass each gets, the
    transpose of the walk; a dangling node's share goes back through ``p``), all such nodes at
    once, until none holds more. The threshold is ``eps``, or with ``per_edge`` ``eps`` times
    the node's out-neighbour count (ACL's own criterion, r(u) > eps·d(u)): a hub then passes
    its mass on only when each neighbour would get a share worth passing, which keeps a graph
    of phrase hubs from being swept whole on every query. Its cost follows the seeds'
    neighbourhood, not the graph; the mass left unspread is dropped. The result is
    normalised to sum 1."""
    estimate = np.zeros(len(p), dtype=np.float64)
    residual = np.asarray(p, dtype=np.float64).copy()
    restart = np.flatnonzero(residual)  # where dangling mass re-enters (p is mostly zeros)
    threshold = eps * np.maximum(np.diff(spread.indptr), 1) if per_edge else eps
    while True:
        frontier = np.flatnonzero(residual > threshold)
        if not len(frontier):
            break
        held = residual[frontier]
        residual[frontier] = 0.0
        estimate[frontier] += alpha * held
        passed = (1.0 - alpha) * held
        targets, shares, counts = _rows_of(spread, frontier)
        np.add.at(residual, targets, np.repeat(passed, counts) * shares)
        back = passed[dangling[frontier]].sum()
        if back > 0:
            residual[restart] += back * p[restart]
    total = estimate.sum()
    return estimate / total if total > 0 else np.asarray(p, dtype=np.float64)


def _rows_of(matrix: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(column indices, values, entries per row) of ``rows`` of a CSR matrix, concatenated
    in ``rows`` order — ``matrix[rows]``'s arrays without building a sparse matrix (whose
    checks cost more than the gather on a push's many small frontiers)."""
    starts = matrix.indptr[rows]
    counts = matrix.indptr[rows + 1] - starts
    offsets = np.cumsum(counts) - counts
    positions = np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))
    return matrix.indices[positions], matrix.data[positions], counts


def power_iterate(
    walk: sp.csr_matrix, dangling: np.ndarray, p: np.ndarray, *, alpha: float, tol: float = 1e-8, max_iter: int = 100
) -> np.ndarray:
    """r ← (1 − α)·(walk·r + dangling mass·p) + α·p from r₀ = p until the L1 change is below
    ``tol`` (or ``max_iter`` steps); ``p`` sums to 1; the result is normalised to sum 1."""
    r = p.copy()
    for _ in range(max_iter):
        spread = walk @ r + r[dangling].sum() * p
        nxt = (1.0 - alpha) * spread + alpha * p
        delta = np.abs(nxt - r).sum()
        r = nxt
        if delta < tol:
            break
    total = r.sum()
    return r / total if total > 0 else p


def ppr_on_subgraph(
    adj: sp.spmatrix,
    seeds: Sequence[int] | np.ndarray,
    seed_weights: Sequence[float] | np.ndarray,
    query_affinity: Sequence[float] | np.ndarray | NodeScores | None = None,
    *,
    alpha: float,
    beta: float,
    h_max: int,
    n_max: int,
    priority: Sequence[float] | np.ndarray | NodeScores | None = None,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Bounded subgraph around ``seeds`` in the full graph, then PPR on it.

    ``seed_weights`` has one weight per entry of ``seeds`` (repeated seeds add up);
    ``query_affinity`` and ``priority`` are vectors over all nodes of ``adj`` or
    ``subgraph.NodeScores`` asked only about the nodes the expansion reaches (default
    priority: seeds by weight, other nodes by degree). Returns
    ``(nodes, scores)``: the subgraph's node indices in :func:`bounded_subgraph` order and
    their PPR scores (summing to 1). Seeds dropped by the node cap lose their weight.
    """
    seed_arr = np.asarray(seeds, dtype=np.int64).reshape(-1)
    weights = np.asarray(seed_weights, dtype=np.float64).reshape(-1)
    if len(weights) != len(seed_arr):
        raise ValueError(f"{len(weights)} seed weights for {len(seed_arr)} seeds")
    n = adj.shape[0]
    if len(seed_arr) and (seed_arr.min() < 0 or seed_arr.max() >= n):
        raise ValueError(f"seed indices must be in [0, {n})")
    if len(weights) and (not np.all(np.isfinite(weights)) or weights.min() < 0):
        raise ValueError("seed_weights must be finite and non-negative")
    if priority is None:
        # Rings never mix seeds and non-seeds, so one vector can rank seeds by their weight
        # (ring 0, and the node cap) and every other node by its degree.
        priority = degrees(adj)
        weight_of = np.zeros(len(priority))
        np.add.at(weight_of, seed_arr, weights)
        priority[seed_arr] = weight_of[seed_arr]
    nodes = bounded_subgraph(adj, seed_arr, h_max, n_max, priority)
    if len(nodes) == 0:
        return nodes, np.zeros(0, dtype=np.float64)
    position = {int(node): i for i, node in enumerate(nodes)}
    s = np.zeros(len(nodes), dtype=np.float64)
    for node, weight in zip(seed_arr, weights):
        slot = position.get(int(node))
        if slot is not None:
            s[slot] += weight
    t = None
    if query_affinity is not None:
        t = np.asarray(node_scores(query_affinity, n, "query_affinity")(nodes), dtype=np.float64)
    sub = sp.csr_matrix(adj)[nodes][:, nodes]
    scores = personalized_pagerank(sub, s, t, alpha=alpha, beta=beta, tol=tol, max_iter=max_iter)
    return nodes, scores


def ppr_for_mode(
    adj: sp.spmatrix,
    seeds: Sequence[int] | np.ndarray,
    seed_weights: Sequence[float] | np.ndarray,
    query_affinity: Sequence[float] | np.ndarray | None,
    mode: PPRModeLike,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ppr_on_subgraph` with α, β, H_max, N_max taken from a mode's settings
    (``KG4VDSettings.mode(name)``, i.e. Table 8)."""
    return ppr_on_subgraph(
        adj,
        seeds,
        seed_weights,
        query_affinity,
        alpha=mode.alpha,
        beta=mode.beta,
        h_max=mode.h_max,
        n_max=mode.n_max,
        tol=tol,
        max_iter=max_iter,
    )
