"""Step 4, structural diffusion and the page candidates: the subgraph's PPR mass moved onto
the chunks its entities are grounded in, diffused with the best hybrid chunks over the
structural layer (``EvidenceLayer.propagate``)."""

from __future__ import annotations

import numpy as np

from ....config import RetrievalSettings
from ....types import Entity
from ...retrieval.evidence_layer import EvidenceLayer, PageRanking
from ..graph_view import PageKey
from .trace import RetrievalTrace


def chunk_seeds(layer: EvidenceLayer, entities: list[Entity], mass: np.ndarray) -> np.ndarray:
    """PPR mass of ``entities`` moved onto the chunks their mentions are grounded in (split
    evenly over an entity's chunks): the entity ↔ component edges of the layer."""
    out = np.zeros(len(layer.chunks))
    for entity, value in zip(entities, mass):
        if value <= 0:
            continue
        rows = layer.grounding_rows(
            (entity.id, len(entity.mentions)), ((m.doc_id, m.page, m.component_ids) for m in entity.mentions)
        )
        if len(rows):
            np.add.at(out, rows, float(value) / len(rows))
    return out


def page_candidates(
    layer: EvidenceLayer,
    query: str,
    qvec: np.ndarray,
    flat: PageRanking,
    settings: RetrievalSettings,
    entities: list[Entity],
    trace: RetrievalTrace,
    k_pages: int,
) -> tuple[list[PageKey], np.ndarray, PageRanking]:
    """(candidate pages, their prior, the whole ranking): the anchors plus the ``k_pages``
    best pages by flat + diffused score; fills ``trace.chunk_seeds`` and ``trace.ranking``."""
    trace.chunk_seeds = chunk_seeds(layer, entities, trace.ppr)
    ranking = layer.propagate(query, qvec, flat, settings, trace.chunk_seeds)
    trace.ranking = ranking
    pages = list(dict.fromkeys([p for p, _ in trace.anchors] + [p for p, _ in ranking.top(k_pages)]))
    prior = np.array([ranking.final[layer.page_position[p]] for p in pages], dtype=np.float64)
    return pages, prior, ranking
