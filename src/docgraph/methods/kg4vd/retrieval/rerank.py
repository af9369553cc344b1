"""Step 5, rerank: every candidate page, entity and relation judged against the question by
the Reranker in one call, blended with its graph prior, cut to the mode's budgets.

Offline (text-fallback page vectors and the fusion reranker) each candidate's stored vector
goes with its text, so reranking embeds nothing the build embedded.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ....scoring import blend_rerank, top_k
from ....types import Relation, ScoredEntity, ScoredPage, ScoredRelation
from ...retrieval.evidence_layer import EvidenceLayer, PageRanking, indexed_text
from ...retrieval.vector_index import VectorIndex, load_index
from ..graph_view import GraphView, PageKey
from ..index import page_item
from ..storage import VEC_RELATION, relation_text
from .subgraph import Neighbourhood
from .trace import RetrievalTrace

if TYPE_CHECKING:
    from ...base import MethodContext


@runtime_checkable
class VectorReranker(Protocol):
    """A reranker that takes the candidates' stored vectors (``models.rerank``'s fusion reranker)."""

    def rerank_with_vectors(
        self, query: str, query_vector: np.ndarray, documents: Sequence[str], vectors: Sequence[np.ndarray | None]
    ) -> list[float]: ...


_PAGE_TEXT: OrderedDict[tuple[str, str, int], str] = OrderedDict()
_PAGE_TEXT_MAX = 4096


def page_text(ctx: MethodContext, key: PageKey) -> str:
    """A page's text for reranking: the text its page vector was built from
    (``index.page_item``); LRU-cached, pages do not change once ingested."""
    cache_key = (str(ctx.store.root), key[0], key[1])
    hit = _PAGE_TEXT.get(cache_key)
    if hit is not None:
        _PAGE_TEXT.move_to_end(cache_key)
        return hit
    page = ctx.store.get_page(*key)
    _PAGE_TEXT[cache_key] = "" if page is None else page_item(ctx, page).text
    if len(_PAGE_TEXT) > _PAGE_TEXT_MAX:
        _PAGE_TEXT.popitem(last=False)
    return _PAGE_TEXT[cache_key]


def _relation_text(view: GraphView, rel: int, relation: Relation) -> str:
    s, t = view.endpoints[rel]
    return relation_text(relation, view.names[s], view.names[t])


def relation_vector(view: GraphView, entities: VectorIndex, relations: VectorIndex, rel: int) -> np.ndarray | None:
    """A relation's stored vector; for an unindexed one (the offline judge's bare cross-page
    edge, "A related to B") the normalised mean of its endpoints' vectors; None if unknown."""
    stored = relations.vector(view.relation_ids[rel])
    if stored is not None:
        return stored
    source, target = (entities.vector(view.ids.id(int(n))) for n in view.endpoints[rel])
    if source is None or target is None:
        return None
    mean = (source + target) / 2.0
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def rerank_candidates(
    ctx: MethodContext,
    query: str,
    qvec: np.ndarray,
    view: GraphView,
    layer: EvidenceLayer,
    entity_index: VectorIndex,
    trace: RetrievalTrace,
    ranking: PageRanking,
    candidates: tuple[list[PageKey], np.ndarray],
    neighbourhood: Neighbourhood,
    k_pages: int,
    weight: float,
) -> None:
    """Fills ``trace.pages``, ``trace.entities`` and ``trace.relations``: ``candidates`` are the
    pages and their prior (step 4); a page is judged by its best chunk (its page text when it
    has none), weighed by its document's routing weight like its prior."""
    pages, page_prior = candidates
    rels = neighbourhood.relations
    best = layer.best_chunks(ranking.chunk_scores, pages)
    texts = [indexed_text(layer.chunks[best[p]]) if p in best else page_text(ctx, p) for p in pages]
    known = None
    if getattr(ctx.models.image_embedder, "is_text_fallback", False) and isinstance(
        ctx.models.reranker, VectorReranker
    ):
        relation_index = load_index(ctx.store, VEC_RELATION)
        known = (
            [layer.hybrid.vectors[best[p]] if p in best else None for p in pages]
            + [entity_index.vector(view.ids.id(int(n))) for n in trace.subgraph]
            + [relation_vector(view, entity_index, relation_index, int(r)) for r in rels]
        )
    _rerank(
        ctx,
        query,
        view,
        trace,
        pages,
        texts,
        page_prior,
        (rels, neighbourhood.relation_objects, neighbourhood.relation_prior),
        k_pages,
        weight,
        qvec,
        known,
        candidate_routing(view, layer, ranking, pages, trace.subgraph, neighbourhood.relation_objects),
    )


def candidate_routing(
    view: GraphView,
    layer: EvidenceLayer,
    ranking: PageRanking,
    pages: list[PageKey],
    nodes: np.ndarray,
    relations: Sequence[Relation],
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The routing weights (``methods.retrieval.routing``) of the candidates, or None without
    routing: a page's is its document's; an entity's or a relation's the mean over its
    mentions of their pages' weights — "stock units", named in every filing of a library,
    weighs little for a question about one of them."""
    if ranking.routing is None:
        return None
    chunk_routing = ranking.routing[layer.chunk_page]
    entities = view.chunk_grounding(layer).mean(nodes, chunk_routing)
    per_mention = [ranking.routing_of([(m.doc_id, m.page) for m in r.mentions], layer.page_position) for r in relations]
    return (
        ranking.routing_of(pages, layer.page_position),
        entities,
        np.array([float(w.mean()) if len(w) else 1.0 for w in per_mention], dtype=np.float64),
    )


def _rerank(
    ctx: MethodContext,
    query: str,
    view: GraphView,
    trace: RetrievalTrace,
    pages: list[PageKey],
    page_texts: list[str],
    page_prior: np.ndarray,
    relation_pool: tuple[np.ndarray, list[Relation], np.ndarray],
    k_pages: int,
    weight: float,
    qvec: np.ndarray,
    known: list[np.ndarray | None] | None,
    routing: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> None:
    """Step 5: one reranker call over all candidates, then budgets per kind: the pages, the
    subgraph's entities (``trace.subgraph``; by their indexed text, the objects of the kept
    ones read from the store) and ``relation_pool``: (relation indices, their objects, their
    priors). ``known``: the candidates' stored vectors (offline), so the fusion reranker
    embeds nothing it has. ``routing``: the pages', entities' and relations' routing weights
    (``candidate_routing``), applied to their reranker scores as to their priors (a page's
    prior holds its weight already)."""
    settings = trace.settings
    rels, relations, rel_prior = relation_pool
    texts = (
        list(page_texts)
        + [view.texts[int(n)] for n in trace.subgraph]
        + [_relation_text(view, int(r), rel) for r, rel in zip(rels, relations)]
    )
    if not texts:
        scores = np.zeros(0)
    elif known is not None:
        reranker = ctx.models.reranker
        assert isinstance(reranker, VectorReranker)  # known vectors come only with one (rerank_candidates)
        scores = np.asarray(reranker.rerank_with_vectors(query, qvec, texts, known), dtype=np.float64)
    else:
        scores = np.asarray(ctx.models.reranker.rerank(query, texts), dtype=np.float64)
    n_p, n_e = len(pages), len(trace.subgraph)
    page_weight = ctx.settings.kg4vd.offline_page_rerank_weight if known is not None else weight  # step 5's note
    page_scores, ent_scores, rel_scores = scores[:n_p], scores[n_p : n_p + n_e], scores[n_p + n_e :]
    ent_prior = trace.ppr
    if routing is not None:
        page_routing, ent_routing, rel_routing = routing
        page_scores, ent_scores = page_scores * page_routing, ent_scores * ent_routing
        rel_scores = rel_scores * rel_routing
        ent_prior, rel_prior = ent_prior * ent_routing, rel_prior * rel_routing
    page_final = blend_rerank(page_scores, page_prior, page_weight)
    ent_final = blend_rerank(ent_scores, ent_prior, weight)
    rel_final = blend_rerank(rel_scores, rel_prior, weight)

    trace.pages = [
        ScoredPage(doc_id=pages[i][0], page=pages[i][1], score=float(page_final[i]))
        for i in top_k(page_final, k_pages)[0]
    ]
    kept_entities = top_k(ent_final, settings.k_entities)[0]
    entities = view.entities_of(ctx.store, trace.subgraph[kept_entities])
    trace.entities = [
        ScoredEntity(entity=entity, score=float(ent_final[i])) for i, entity in zip(kept_entities, entities)
    ]
    kept = []
    for i in top_k(rel_final, settings.k_relations)[0]:
        s, t = view.endpoints[int(rels[i])]
        kept.append(
            ScoredRelation(
                relation=relations[i], score=float(rel_final[i]), source_name=view.names[s], target_name=view.names[t]
            )
        )
    trace.relations = kept
