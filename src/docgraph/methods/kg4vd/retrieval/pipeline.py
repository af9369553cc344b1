"""KG4VD's retrieval as its stages, in order (see the package docstring for each step)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....types import ScoredPage
from ...base import not_built
from ...retrieval.evidence_layer import retrieval_settings
from ...retrieval.vector_index import load_index
from ...timing import Timer
from ..graph_view import GraphChanged, GraphView, load_view
from ..storage import VEC_ENTITY, VEC_PAGE
from .anchors import flat_pages, load_layer, query_vector
from .diffusion import page_candidates
from .rerank import rerank_candidates
from .second_hop import with_second_hop
from .seeds import seed_entities, seed_signal
from .subgraph import expand
from .trace import DEFAULT_RERANK_WEIGHT, RetrievalTrace

if TYPE_CHECKING:
    from ...base import MethodContext


def retrieve_graph(
    ctx: MethodContext,
    query: str,
    mode: str,
    *,
    k_pages: int | None = None,
    rerank_weight: float = DEFAULT_RERANK_WEIGHT,
    timings: dict[str, float] | None = None,
    scope: frozenset[str] | None = None,
) -> RetrievalTrace:
    """Steps 2–5 for one query in one mode; fills a :class:`RetrievalTrace`. A build that
    changes the graph while the query reads it makes the query start over once on the new
    graph (``graph_view.GraphChanged``)."""
    try:
        return _retrieve(ctx, query, mode, k_pages, rerank_weight, timings, scope, stale=None)
    except GraphChanged as changed:
        return _retrieve(ctx, query, mode, k_pages, rerank_weight, timings, scope, stale=changed.view)


def _retrieve(
    ctx: MethodContext,
    query: str,
    mode: str,
    k_pages: int | None,
    rerank_weight: float,
    timings: dict[str, float] | None,
    scope: frozenset[str] | None,
    stale: GraphView | None,
) -> RetrievalTrace:
    cfg = ctx.settings.kg4vd
    rs = retrieval_settings(ctx)
    settings = cfg.mode(mode)
    trace = RetrievalTrace(mode=mode, settings=settings, timings=timings if timings is not None else {})
    timer = Timer(trace.timings)
    k_pages = settings.k_pages if k_pages is None else k_pages

    page_index = load_index(ctx.store, VEC_PAGE)
    if not len(page_index):
        raise not_built(ctx, "kg4vd")
    entity_index = load_index(ctx.store, VEC_ENTITY)
    with timer.stage("graph_load"):
        view = load_view(ctx.store, stale)
        layer = load_layer(ctx, page_index)
    with timer.stage("query_embedding"):
        qvec = query_vector(ctx, query, [page_index, entity_index])
    with timer.stage("page_retrieval"):
        flat = flat_pages(ctx, layer, page_index, query, qvec, rs, scope)
        trace.anchors = flat.top(cfg.page_anchors)
    with timer.stage("entity_retrieval"):
        trace.seeds, trace.seed_weights = seed_entities(
            view,
            seed_signal(view, entity_index, qvec, query, rs),
            [p for p, _ in trace.anchors],
            anchored=cfg.page_anchoring,
            k_direct=settings.k_entities,
        )
    with timer.stage("subgraph_ppr"):
        neighbourhood = expand(ctx, view, entity_index, qvec, trace)
    with timer.stage("structure_diffusion"):
        pages, prior, ranking = page_candidates(layer, query, qvec, flat, rs, view, trace, k_pages)
    trace.candidates = {
        "pages": len(pages),
        "entities": len(trace.subgraph),
        "relations": len(neighbourhood.relations),
        "subgraph relations": neighbourhood.in_subgraph,
    }
    with timer.stage("rerank"):
        rerank_candidates(
            ctx,
            query,
            qvec,
            view,
            layer,
            entity_index,
            trace,
            ranking,
            (pages, prior),
            neighbourhood,
            k_pages,
            rerank_weight,
        )
    with timer.stage("second_hop"):
        trace.pages = with_second_hop(ctx, view, layer, trace.pages, query, rs, k_pages, ranking.final)
    if ranking.parties:  # a question comparing companies: each one's pages take turns
        turns = layer.take_turns([((p.doc_id, p.page), p.score) for p in trace.pages], ranking, k_pages)
        trace.pages = [ScoredPage(doc_id=d, page=n, score=s) for (d, n), s in turns]
    return trace
