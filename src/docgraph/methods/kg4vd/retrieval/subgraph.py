"""Step 3, the bounded subgraph: PPR around the seeds (``graph.ppr_on_subgraph``) and the
relations with both ends in it, the best ``RELATION_POOL`` × k_relations by prior."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ....graph import ppr_on_subgraph
from ....graph.subgraph import NodeScores
from ....scoring import top_k
from ....types import Relation
from ...retrieval.vector_index import VectorIndex
from ..graph_view import GraphView
from .trace import RELATION_POOL, RetrievalTrace

if TYPE_CHECKING:
    from ...base import MethodContext


@dataclass
class Neighbourhood:
    """The subgraph's candidate relations with their priors (its entities are the trace's
    ``subgraph`` nodes)."""

    relations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # view relation indices
    relation_objects: list[Relation] = field(default_factory=list)
    relation_prior: np.ndarray = field(default_factory=lambda: np.zeros(0))
    in_subgraph: int = 0  # relations with both ends in the subgraph, before the pool cut


def expansion_priority(view: GraphView, affinity_of: NodeScores) -> NodeScores:
    """Which nodes a hop ring admits first under the N_max cap: the most query-similar,
    then the best connected."""
    scale = view.max_degree if view.max_degree > 0 else 1.0
    return lambda nodes: np.maximum(affinity_of(nodes), 0.0) + 1e-6 * view.degree[nodes] / scale


def expand(
    ctx: MethodContext, view: GraphView, entity_index: VectorIndex, qvec: np.ndarray, trace: RetrievalTrace
) -> Neighbourhood:
    """PPR over the bounded subgraph around ``trace.seeds`` (fills ``trace.subgraph`` and
    ``trace.ppr``; nothing when there are no seeds) and the relation pool within it."""
    cfg, settings = ctx.settings.kg4vd, trace.settings
    if len(trace.seeds):

        def affinity(nodes: np.ndarray) -> np.ndarray:
            return view.affinity_of(entity_index, qvec, nodes)

        trace.subgraph, trace.ppr = ppr_on_subgraph(
            view.adjacency,
            trace.seeds,
            trace.seed_weights,
            affinity,
            alpha=settings.alpha,
            beta=settings.beta,
            h_max=settings.h_max,
            n_max=settings.n_max,
            priority=expansion_priority(view, affinity),
            tol=cfg.ppr_tol,
            max_iter=cfg.ppr_max_iter,
        )
    rels = view.relations_within(trace.subgraph)
    position = np.full(len(view), -1, dtype=np.int64)
    position[trace.subgraph] = np.arange(len(trace.subgraph))
    ends = position[view.endpoints[rels]].reshape(-1, 2)
    rel_prior = (trace.ppr[ends[:, 0]] + trace.ppr[ends[:, 1]]) / 2 if len(rels) else np.zeros(0)
    in_subgraph = len(rels)
    pool = top_k(rel_prior, RELATION_POOL * settings.k_relations)[0]
    rels, rel_prior = rels[pool], rel_prior[pool]
    return Neighbourhood(
        relations=rels,
        relation_objects=view.relations_of(ctx.store, rels),
        relation_prior=rel_prior,
        in_subgraph=in_subgraph,
    )
