"""Step 2, seeds: the entities grounded on the anchor pages, weighted by how well they match
the question (or, for the ablation, the best entities of the whole graph)."""

from __future__ import annotations

import numpy as np

from ....config import RetrievalSettings
from ....graph.subgraph import NodeScores
from ....scoring import top_k
from ...retrieval.hybrid import fuse_scores
from ...retrieval.question import read_question
from ...retrieval.vector_index import VectorIndex
from ..graph_view import GraphView, PageKey


def seed_entities(
    view: GraphView, signal_of: NodeScores, anchors: list[PageKey], *, anchored: bool, k_direct: int
) -> tuple[np.ndarray, np.ndarray]:
    """(seed nodes, seed distribution s) — step 2: the entities on the anchor pages weighted
    by ``signal_of`` them; or, for the ablation, the ``k_direct`` best entities by the signal
    of every entity (the one path that scores the whole graph)."""
    if anchored:
        nodes = view.nodes_on_pages(anchors)
        signal = np.asarray(signal_of(nodes), dtype=np.float64)
    else:
        everything = signal_of(np.arange(len(view), dtype=np.int64))
        nodes = top_k(everything, min(k_direct, len(everything)))[0]
        signal = everything[nodes]
        if np.any(signal > 0):
            nodes, signal = nodes[signal > 0], signal[signal > 0]
    if not len(nodes):
        return nodes.astype(np.int64), np.zeros(0)
    weights = np.maximum(signal, 0.0)
    total = weights.sum()
    weights = weights / total if total > 0 else np.full(len(nodes), 1.0 / len(nodes))
    return nodes.astype(np.int64), weights


def seed_signal(
    view: GraphView, index: VectorIndex, qvec: np.ndarray, query: str, settings: RetrievalSettings
) -> NodeScores:
    """The seed score of given entities: BM25 over "name, type, description" fused with the
    entity-index cosine (``retrieval.seeds = "hybrid"``, the fusion's normalisation over the
    entities scored — the candidates the seeds are picked from), or the cosine alone."""
    tokens = read_question(query, settings).tokens

    def signal_of(nodes: np.ndarray) -> np.ndarray:
        cosine = view.affinity_of(index, qvec, nodes)
        if settings.seeds != "hybrid" or not len(nodes):
            return cosine
        return fuse_scores(view.lexical(tokens)[nodes], cosine, settings)

    return signal_of
