"""The structural evidence layer: chunk and page nodes joined by what ingestion already knows.

Pure arrays in, a weighted undirected graph out (no I/O, no model). Node ``i < n_chunks``
is chunk ``i``; node ``n_chunks + j`` is page ``j``. Edge types, each with a weight from
``EdgeWeightsLike`` (0 turns a type off):

- ``contains``   — a page and each chunk on it;
- ``next_chunk`` — consecutive chunks of one document in reading order (across a page
  break only within one section: a paragraph that runs on to the next page);
- ``next_page``  — consecutive pages of one document where reading continues (the last
  chunk of one and the first of the next share a section);
- ``section``    — every chunk of a section and the section's first chunk (its heading),
  across pages;
- ``caption``    — a chunk holding a caption and the table/figure chunk next to it on
  its page;
- ``similar``    — each chunk and its ``similar_top_k`` most similar chunks on *other*
  pages whose cosine is at least ``similar_threshold``;
- ``refers``     — a chunk that mentions a label ("as Table 2 shows", "see Note 10") and
  the chunk on another page that defines it (its caption or heading), given by the caller.

``diffuse`` runs Personalized PageRank from chunk seeds over the graph (transition matrix
computed once per graph) and returns the mass on each page: the page node's own plus its
chunks'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from .adjacency import build_adjacency
from .ppr import cached_walk, walk_from

EDGE_TYPES = ("contains", "next_chunk", "next_page", "section", "caption", "similar", "refers")


class EdgeWeightsLike(Protocol):
    contains: float
    next_chunk: float
    next_page: float
    section: float
    caption: float
    similar: float
    refers: float


@dataclass
class ChunkLayout:
    """Per-chunk arrays, chunks sorted by (document, page, reading order).

    ``page`` indexes the page arrays; ``section`` is a section id (-1: none); ``caption``
    and ``visual`` flag chunks holding a caption and table/figure chunks."""

    doc: np.ndarray
    page: np.ndarray
    section: np.ndarray
    caption: np.ndarray
    visual: np.ndarray
    page_doc: np.ndarray
    page_number: np.ndarray

    @property
    def n_chunks(self) -> int:
        return len(self.page)

    @property
    def n_pages(self) -> int:
        return len(self.page_doc)


@dataclass
class StructureGraph:
    n_chunks: int
    n_pages: int
    chunk_page: np.ndarray
    adjacency: sp.csr_matrix
    edge_counts: dict[str, int] = field(default_factory=dict)
    _walk: tuple[sp.csr_matrix, np.ndarray] | None = None
    _spread: sp.csr_matrix | None = None

    @property
    def n_nodes(self) -> int:
        return self.n_chunks + self.n_pages

    def walk(self) -> tuple[sp.csr_matrix, np.ndarray]:
        return cached_walk(self)


def _pairs(mask: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.stack([a[mask], b[mask]], axis=1) if mask.any() else np.zeros((0, 2), np.int64)


def _continues(layout: ChunkLayout) -> np.ndarray:
    """Per pair of consecutive pages (j, j+1): whether reading continues across the break —
    page j's last chunk and page j+1's first chunk lie in the same section, or one of the
    pages has no chunk to tell. Pages of unrelated passages (each under its own heading)
    are therefore not chained."""
    npg = layout.n_pages
    first = np.full(npg, -2, dtype=np.int64)
    last = np.full(npg, -2, dtype=np.int64)
    for row in range(layout.n_chunks - 1, -1, -1):
        first[layout.page[row]] = layout.section[row]
    for row in range(layout.n_chunks):
        last[layout.page[row]] = layout.section[row]
    unknown = (last[:-1] == -2) | (first[1:] == -2)
    return unknown | (last[:-1] == first[1:])


def similar_pairs(
    vectors: np.ndarray, chunk_page: np.ndarray, top_k: int, threshold: float, block: int = 1024
) -> np.ndarray:
    """(i, j) pairs: j among the ``top_k`` most cosine-similar chunks of i on other pages,
    cosine ≥ ``threshold``; rows of ``vectors`` are L2-normalised.

    Each row's best ``top_k`` lie in the ``top_k`` column groups with the highest maxima, so
    only those groups are searched; a full partition of every row is the cost this avoids."""
    n = len(vectors)
    if n < 2 or top_k <= 0:
        return np.zeros((0, 2), np.int64)
    k = min(top_k, n - 1)
    groups = -(-n // _GROUP)
    width = groups * _GROUP
    mat = np.zeros((width, vectors.shape[1]), dtype=np.float32)
    mat[:n] = vectors
    page = np.full(width, -1, dtype=np.int64)
    page[:n] = chunk_page
    kg = min(k, groups)
    out = []
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        sims = mat[rows] @ mat.T
        sims[(page[rows][:, None] == page[None, :]) | (page[None, :] < 0)] = -np.inf
        maxima = sims.reshape(len(rows), groups, _GROUP).max(axis=2)
        best_groups = np.argpartition(-maxima, kg - 1, axis=1)[:, :kg]
        cols = (best_groups[:, :, None] * _GROUP + np.arange(_GROUP)).reshape(len(rows), -1)
        cand = np.take_along_axis(sims, cols, axis=1)
        pick = np.argpartition(-cand, k - 1, axis=1)[:, :k]
        top = np.take_along_axis(cols, pick, axis=1)
        keep = np.take_along_axis(cand, pick, axis=1) >= threshold
        out.append(np.stack([np.repeat(rows, k).reshape(len(rows), k)[keep], top[keep]], axis=1))
    return np.concatenate(out).astype(np.int64)


_GROUP = 64  # columns per group whose maximum is taken before a row's best are picked


def build_structure(
    layout: ChunkLayout,
    weights: EdgeWeightsLike,
    vectors: np.ndarray | None = None,
    *,
    similar_top_k: int = 5,
    similar_threshold: float = 0.85,
    refers: np.ndarray | None = None,
) -> StructureGraph:
    """The structural graph of ``layout`` (see the module doc); ``vectors`` (chunk rows,
    L2-normalised) are needed only for ``similar`` edges, ``refers`` (chunk row pairs:
    mention, definition) only for ``refers`` edges."""
    nc, npg = layout.n_chunks, layout.n_pages
    idx = np.arange(nc)
    edges: list[np.ndarray] = []
    wts: list[np.ndarray] = []
    counts: dict[str, int] = {}

    def add(kind: str, pairs: np.ndarray) -> None:
        weight = float(getattr(weights, kind))
        counts[kind] = int(len(pairs)) if weight > 0 else 0
        if weight > 0 and len(pairs):
            edges.append(pairs.astype(np.int64))
            wts.append(np.full(len(pairs), weight))

    add("contains", np.stack([idx, nc + layout.page], axis=1) if nc else np.zeros((0, 2), np.int64))
    if nc > 1:
        same_doc = layout.doc[1:] == layout.doc[:-1]
        same_page = layout.page[1:] == layout.page[:-1]
        same_section = layout.section[1:] == layout.section[:-1]
        add("next_chunk", _pairs(same_doc & (same_page | same_section), idx[:-1], idx[1:]))
    if npg > 1:
        pidx = np.arange(npg)
        consecutive = (layout.page_doc[1:] == layout.page_doc[:-1]) & (
            layout.page_number[1:] == layout.page_number[:-1] + 1
        )
        add("next_page", _pairs(consecutive & _continues(layout), nc + pidx[:-1], nc + pidx[1:]))
    if nc:
        has = layout.section >= 0
        first: dict[int, int] = {}
        heads = np.array([first.setdefault(int(s), i) if s >= 0 else i for i, s in enumerate(layout.section)])
        add("section", _pairs(has & (heads != idx), idx, heads))
    if nc > 1:
        same_page = layout.page[1:] == layout.page[:-1]
        pair_a = (layout.caption[:-1] & layout.visual[1:]) | (layout.visual[:-1] & layout.caption[1:])
        add("caption", _pairs(same_page & pair_a, idx[:-1], idx[1:]))
    if vectors is not None and float(weights.similar) > 0 and len(vectors) == nc:
        add("similar", similar_pairs(vectors, layout.page, similar_top_k, similar_threshold))
    else:
        counts["similar"] = 0
    add("refers", refers if refers is not None else np.zeros((0, 2), np.int64))
    all_edges = np.concatenate(edges) if edges else np.zeros((0, 2), np.int64)
    all_w = np.concatenate(wts) if wts else np.zeros(0)
    adj = build_adjacency(nc + npg, all_edges, all_w, combine="max")
    return StructureGraph(
        n_chunks=nc, n_pages=npg, chunk_page=np.asarray(layout.page, dtype=np.int64), adjacency=adj, edge_counts=counts
    )


def diffuse(
    graph: StructureGraph,
    chunk_seeds: np.ndarray,
    *,
    alpha: float,
    page_seeds: np.ndarray | None = None,
    tol: float = 1e-6,
    max_iter: int = 50,
    local_above: int = 0,
) -> np.ndarray:
    """Page mass after PPR from non-negative ``chunk_seeds`` (one per chunk; plus optional
    ``page_seeds``, one per page) with restart ``alpha``: each page's node mass plus its
    chunks' mass. All zeros when there is no seed mass.

    Exact power iteration costs every edge per step; on a graph of more than ``local_above``
    edges (0 = never) the walk is a ``forward_push`` with threshold ``tol`` instead, whose
    cost follows the seeds' neighbourhood: slower than power iteration on a small graph, much
    faster on a large one, with the same top nodes in the same order (docs/results,
    2026-12-02 "KG4VD's local entity signals")."""
    seeds = np.zeros(graph.n_nodes, dtype=np.float64)
    seeds[: graph.n_chunks] = np.maximum(np.asarray(chunk_seeds, dtype=np.float64), 0.0)
    if page_seeds is not None:
        seeds[graph.n_chunks :] = np.maximum(np.asarray(page_seeds, dtype=np.float64), 0.0)
    total = seeds.sum()
    if total <= 0 or graph.n_pages == 0:
        return np.zeros(graph.n_pages)
    mass = walk_from(graph, seeds / total, alpha=alpha, tol=tol, max_iter=max_iter, local_above=local_above, eps=tol)
    pages = mass[graph.n_chunks :].copy()
    np.add.at(pages, graph.chunk_page, mass[: graph.n_chunks])
    return pages
