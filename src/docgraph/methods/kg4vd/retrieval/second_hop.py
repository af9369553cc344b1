"""Step 6, the second hop (docgraph's addition, ``graph.bridges``): pages sharing the rarer
entities of the graph grounded on the best page take every ``retrieval.bridge_every``-th slot."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....config import RetrievalSettings
from ....graph.bridges import NON_BRIDGING_TYPES, EntityBridges
from ....types import ScoredPage
from ...memo import cached
from ...retrieval.evidence_layer import EvidenceLayer
from ..graph_view import GraphView
from ..storage import LAYER

if TYPE_CHECKING:
    from ...base import MethodContext


def load_bridges(ctx: MethodContext, view: GraphView, layer: EvidenceLayer) -> EntityBridges:
    """The graph's entities on the layer's pages, for the second hop (``graph.bridges``);
    value-like entities (dates, numbers) are left out. Cached until the graph or layer changes."""
    return cached(
        ctx.store,
        LAYER,
        f"bridges:{view.version}",
        lambda: layer.bridge_mentions(
            (doc_id, page, view.names[node])
            for node, (doc_id, page) in view.node_pages()
            if view.types[node].lower() not in NON_BRIDGING_TYPES
        ),
        persist=True,
    )


def with_second_hop(
    ctx: MethodContext,
    view: GraphView,
    layer: EvidenceLayer,
    pages: list[ScoredPage],
    query: str,
    settings: RetrievalSettings,
    k_pages: int,
    page_scores: np.ndarray,
) -> list[ScoredPage]:
    """``pages`` (reranked, best first) with the bridged pages merged in, at most ``k_pages``."""
    merged = layer.with_bridges(
        [((p.doc_id, p.page), p.score) for p in pages],
        load_bridges(ctx, view, layer),
        query,
        settings,
        k_pages,
        page_scores,
    )
    return [ScoredPage(doc_id=d, page=n, score=s) for (d, n), s in merged]
