"""Step 4, structural diffusion and the page candidates: the subgraph's PPR mass moved onto
the chunks its entities are grounded in, diffused with the best hybrid chunks over the
structural layer (``EvidenceLayer.propagate``)."""

from __future__ import annotations

import numpy as np

from ....config import RetrievalSettings
from ...retrieval.evidence_layer import EvidenceLayer, PageRanking
from ..graph_view import GraphView, PageKey
from .trace import RetrievalTrace


def chunk_seeds(layer: EvidenceLayer, view: GraphView, nodes: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """PPR mass of the entity ``nodes`` moved onto the chunks their mentions are grounded in
    (split evenly over an entity's chunks, a chunk as often as mentions hit it): the entity ↔
    component edges of the layer."""
    return view.chunk_grounding(layer).spread(nodes, mass, len(layer.chunks))


def page_candidates(
    layer: EvidenceLayer,
    query: str,
    qvec: np.ndarray,
    flat: PageRanking,
    settings: RetrievalSettings,
    view: GraphView,
    trace: RetrievalTrace,
    k_pages: int,
) -> tuple[list[PageKey], np.ndarray, PageRanking]:
    """(candidate pages, their prior, the whole ranking): the anchors plus the ``k_pages``
    best pages by flat + diffused score; fills ``trace.chunk_seeds`` and ``trace.ranking``."""
    trace.chunk_seeds = chunk_seeds(layer, view, trace.subgraph, trace.ppr)
    ranking = layer.propagate(query, qvec, flat, settings, trace.chunk_seeds)
    trace.ranking = ranking
    pages = list(dict.fromkeys([p for p, _ in trace.anchors] + [p for p, _ in ranking.top(k_pages)]))
    prior = np.array([ranking.final[layer.page_position[p]] for p in pages], dtype=np.float64)
    return pages, prior, ranking
