"""KG4VD's online retrieval: page anchors → seeds → bounded subgraph + PPR → rerank → budgets.

METHODS.md "KG4VD — Query", steps 2–5 (paper Section 3.3 and Appendix B.3):

1. **Page anchors**: the top ``page_anchors`` pages by their *flat hybrid* score — a page
   scores as its best chunk, chunks scored by BM25 and dense cosine fused
   (``methods.retrieval.evidence_layer``, ``methods.retrieval.hybrid``); with a real image embedder the page
   vectors' cosine is rank-fused in (offline they are chunk means, adding nothing).
2. **Seeds**: the entities grounded on the anchor pages, weighted by their hybrid score
   (BM25 over "name, type, description" fused with the entity-index cosine, the fusion
   normalised over those entities; the paper's cosine alone with ``retrieval.seeds =
   "dense"``), normalised to a distribution s. Cosines are computed only for the entities
   a step reads (``graph.subgraph.NodeScores``), never for the whole graph.
   Ablation ``page_anchoring = false``: the mode's ``k_entities`` best entities.
3. **Bounded subgraph + PPR** (``graph.ppr_on_subgraph``): up to H_max hops and N_max
   nodes around the seeds (inside a hop ring, nodes most similar to the query are
   admitted first), then Eq. 1–2 with the mode's α and β, t(q) ∝ max(0, cos).
4. **Structural diffusion and candidates**: the subgraph's PPR mass moves onto the chunks
   its entities are grounded in (entity ↔ component edges) and joins the best hybrid
   chunks as seeds of a second PPR over the structural layer (pages, chunks, reading
   order, sections, captions, similarity links); a page's prior is
   ``flat_weight`` · flat + (1 − ``flat_weight``) · diffused mass. Candidates: the anchor
   pages plus the ``k_pages`` best pages by that prior; the subgraph's entities (≤ N_max);
   the relations with both endpoints in it (prior = mean PPR of its endpoints), at most
   ``RELATION_POOL`` × k_relations of them by prior.
5. **Rerank** every candidate text against the query with the Reranker (a page's best
   chunk; ``storage.entity_text`` "name, type, description"; ``storage.relation_text``
   "source label target: description" — the very texts the build embedded, so offline
   the fusion reranker takes their stored vectors and embeds nothing) and keep the mode's
   budgets k_entities / k_relations / k_pages. Final score of every candidate:

       score = λ · mm(rerank) + (1 − λ) · mm(graph prior),   λ = ``rerank_weight`` (0.5)

   where mm is min–max normalisation over the candidates of that kind (``models.rerank.minmax``:
   a constant column scales to 1 if positive, else 0).
   The reranker judges what the text says about the query; PPR (or the page index)
   says how central the item is to the anchored neighbourhood. Min–max keeps PPR's skew:
   in local mode (α = 0.8) the seeds hold most of the mass, so a non-seed entity needs
   a clearly better rerank score to displace one, as the narrow mode intends.
   Offline (text-fallback page vectors and the fusion reranker) pages use
   ``kg4vd.offline_page_rerank_weight`` (default 0.25, half the paper's λ): a page's rerank
   text is then its best chunk, whose fused BM25 + cosine score the prior already holds as
   its flat part, so λ = ½ counts it twice. Lower weights keep more of the graph's order;
   with the second hop in place 0.25 gains on MMLongBench-Doc per document and packed and
   keeps HotpotQA's and MuSiQue's recall (docs/results, 2026-12-03 "half the paper's λ").
6. **Second hop** (docgraph's addition, ``graph.bridges``): pages that share the rarer
   entities of the graph grounded on the best page — minus the question's own; preferred:
   the pages whose headings the best page names (``graph.name_links``) — take every
   ``retrieval.bridge_every``-th slot of the page list (slots 3, 6, … by default).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...config import PPRModeSettings, RetrievalSettings
from ...documents.page_numbers import stored_printed_numbers
from ...errors import EmbeddingMismatchError
from ...graph import ppr_on_subgraph
from ...graph.bridges import NON_BRIDGING_TYPES, EntityBridges
from ...graph.subgraph import NodeScores
from ...scoring import blend_rerank, top_k
from ...types import Chunk, Entity, Relation, ScoredEntity, ScoredPage, ScoredRelation
from ..base import not_built
from ..memo import cached
from ..retrieval.evidence_layer import EvidenceLayer, PageRanking, indexed_text, layer_shape, retrieval_settings
from ..retrieval.hybrid import fuse_scores
from ..retrieval.routing import document_router
from ..retrieval.vector_index import VectorIndex, load_index
from ..timing import Timer
from .graph_view import GraphChanged, GraphView, PageKey, load_view
from .index import page_item
from .storage import (
    LAYER,
    NS_CHUNK,
    VEC_CHUNK,
    VEC_ENTITY,
    VEC_PAGE,
    VEC_RELATION,
    embed_query,
    entity_text,
    page_key,
    parse_page_key,
    relation_text,
)

if TYPE_CHECKING:
    from ..base import MethodContext

DEFAULT_RERANK_WEIGHT = 0.5
RELATION_POOL = 3  # relations reranked: at most this many times the mode's k_relations


@dataclass
class RetrievalTrace:
    """Everything the retrieval computed, for the Evidence, tests and benchmarks."""

    mode: str
    settings: PPRModeSettings
    anchors: list[tuple[PageKey, float]] = field(default_factory=list)
    seeds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    seed_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    subgraph: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ppr: np.ndarray = field(default_factory=lambda: np.zeros(0))
    candidates: dict[str, int] = field(default_factory=dict)
    pages: list[ScoredPage] = field(default_factory=list)
    entities: list[ScoredEntity] = field(default_factory=list)
    relations: list[ScoredRelation] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ranking: PageRanking | None = None  # every page's flat, diffused and prior score (step 4)
    chunk_seeds: np.ndarray = field(default_factory=lambda: np.zeros(0))  # step 4's entity mass per layer chunk row


# ---------------------------------------------------------------------------- query vector
def query_vector(ctx: MethodContext, query: str, indexes: Sequence[VectorIndex]) -> np.ndarray:
    """The query in the image embedder's space, shared by every KG4VD vector namespace
    (``storage.embed_query``); a dimension that does not match the stored vectors means the
    workspace was built with another embedder."""
    vector = np.asarray(embed_query(ctx.models, query), dtype=np.float32).reshape(-1)
    for index in indexes:
        if len(index) and index.matrix.shape[1] != vector.shape[0]:
            raise EmbeddingMismatchError(
                f"the KG4VD vectors have dimension {index.matrix.shape[1]} but the configured image embedder "
                f"{ctx.models.image_embedder.model} embeds queries in dimension {vector.shape[0]}; configure the "
                "embedder that built the workspace or rebuild it: docgraph build --method kg4vd"
            )
    return vector


# ---------------------------------------------------------------------------- scoring helpers
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


# ---------------------------------------------------------------------------- the stages
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

    def signal_of(nodes: np.ndarray) -> np.ndarray:
        cosine = view.affinity_of(index, qvec, nodes)
        if settings.seeds != "hybrid" or not len(nodes):
            return cosine
        return fuse_scores(view.lexical(query)[nodes], cosine, settings)

    return signal_of


def expansion_priority(view: GraphView, affinity_of: NodeScores) -> NodeScores:
    """Which nodes a hop ring admits first under the N_max cap: the most query-similar,
    then the best connected."""
    scale = view.max_degree if view.max_degree > 0 else 1.0
    return lambda nodes: np.maximum(affinity_of(nodes), 0.0) + 1e-6 * view.degree[nodes] / scale


def load_layer(ctx: MethodContext, page_index: VectorIndex) -> EvidenceLayer:
    """The structural evidence layer of the workspace's KG4VD chunks (cached until chunks
    change or the layer's settings do); pages with a page vector but no chunk are in it too."""
    settings = retrieval_settings(ctx)
    shape = layer_shape(settings)

    def load() -> EvidenceLayer:
        vectors = load_index(ctx.store, VEC_CHUNK)
        records = dict(ctx.store.iter_records(NS_CHUNK))
        keys = [k for k in vectors.keys if k in records]
        chunks = [Chunk.model_validate(records[k]) for k in keys]
        matrix = vectors.matrix[[vectors.position[k] for k in keys]] if keys else np.zeros((0, 1), np.float32)
        extra = [parse_page_key(k) for k in page_index.keys]
        printed = stored_printed_numbers(ctx.store, {c.doc_id for c in chunks} | {doc for doc, _ in extra})
        return EvidenceLayer.build(chunks, matrix, settings, extra, printed)

    return cached(ctx.store, LAYER, f"layer:{shape}", load)


def page_dense_scores(
    ctx: MethodContext, layer: EvidenceLayer, page_index: VectorIndex, qvec: np.ndarray
) -> np.ndarray | None:
    """Page-vector cosines over the layer's pages when they add a signal: a real image
    embedder's page vectors, or a workspace without chunks; None offline (the page vectors
    are then means of the chunk vectors the layer already scores)."""
    if layer.chunks and getattr(ctx.models.image_embedder, "is_text_fallback", False):
        return None
    scores = page_index.scores(qvec)
    rows = [page_index.position.get(page_key(d, n)) for d, n in layer.pages]
    return np.array([0.0 if row is None else scores[row] for row in rows], dtype=np.float64)


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


def retrieve_graph(
    ctx: MethodContext,
    query: str,
    mode: str,
    *,
    k_pages: int | None = None,
    rerank_weight: float = DEFAULT_RERANK_WEIGHT,
    timings: dict[str, float] | None = None,
) -> RetrievalTrace:
    """Steps 2–5 for one query in one mode; fills a :class:`RetrievalTrace`. A build that
    changes the graph while the query reads it makes the query start over once on the new
    graph (``graph_view.GraphChanged``)."""
    try:
        return _retrieve(ctx, query, mode, k_pages, rerank_weight, timings, stale=None)
    except GraphChanged as changed:
        return _retrieve(ctx, query, mode, k_pages, rerank_weight, timings, stale=changed.view)


def _retrieve(
    ctx: MethodContext,
    query: str,
    mode: str,
    k_pages: int | None,
    rerank_weight: float,
    timings: dict[str, float] | None,
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
        flat = layer.flat(query, qvec, rs, page_dense_scores(ctx, layer, page_index, qvec), document_router(ctx.store))
        anchors = flat.top(cfg.page_anchors)
    trace.anchors = anchors

    with timer.stage("entity_retrieval"):
        trace.seeds, trace.seed_weights = seed_entities(
            view,
            seed_signal(view, entity_index, qvec, query, rs),
            [p for p, _ in anchors],
            anchored=cfg.page_anchoring,
            k_direct=settings.k_entities,
        )

    with timer.stage("subgraph_ppr"):
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
        entities = view.entities_of(ctx.store, trace.subgraph)
        relations = view.relations_of(ctx.store, rels)
    with timer.stage("structure_diffusion"):
        trace.chunk_seeds = chunk_seeds(layer, entities, trace.ppr)
        ranking = layer.propagate(query, qvec, flat, rs, trace.chunk_seeds)
        trace.ranking = ranking
        pages = list(dict.fromkeys([p for p, _ in anchors] + [p for p, _ in ranking.top(k_pages)]))
        page_prior = np.array([ranking.final[layer.page_position[p]] for p in pages], dtype=np.float64)
    trace.candidates = {
        "pages": len(pages),
        "entities": len(trace.subgraph),
        "relations": len(rels),
        "subgraph relations": in_subgraph,
    }

    with timer.stage("rerank"):
        best = layer.best_chunks(ranking.chunk_scores, pages)
        texts = [indexed_text(layer.chunks[best[p]]) if p in best else page_text(ctx, p) for p in pages]
        known = None
        if getattr(ctx.models.image_embedder, "is_text_fallback", False) and hasattr(
            ctx.models.reranker, "rerank_with_vectors"
        ):
            relation_index = load_index(ctx.store, VEC_RELATION)
            known = (
                [layer.hybrid.vectors[best[p]] if p in best else None for p in pages]
                + [entity_index.vector(e.id) for e in entities]
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
            entities,
            (rels, relations, rel_prior),
            k_pages,
            rerank_weight,
            qvec,
            known,
            ranking.routing_of(pages, layer.page_position),
        )
    with timer.stage("second_hop"):
        merged = layer.with_bridges(
            [((p.doc_id, p.page), p.score) for p in trace.pages],
            load_bridges(ctx, view, layer),
            query,
            rs,
            k_pages,
            ranking.final,
        )
        trace.pages = [ScoredPage(doc_id=d, page=n, score=s) for (d, n), s in merged]
    return trace


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
    )


def relation_vector(view: GraphView, entities: VectorIndex, relations: VectorIndex, rel: int) -> np.ndarray | None:
    """A relation's stored vector; for an unindexed one (the offline judge's bare cross-page
    edge, "A related to B") the normalised mean of its endpoints' vectors; None if unknown."""
    stored = relations.vector(view.relation_ids[rel])
    if stored is not None:
        return stored
    ends = [entities.vector(view.ids.id(int(n))) for n in view.endpoints[rel]]
    if any(e is None for e in ends):
        return None
    mean = (ends[0] + ends[1]) / 2.0
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def _rerank(
    ctx: MethodContext,
    query: str,
    view: GraphView,
    trace: RetrievalTrace,
    pages: list[PageKey],
    page_texts: list[str],
    page_prior: np.ndarray,
    entities: list[Entity],
    relation_pool: tuple[np.ndarray, list[Relation], np.ndarray],
    k_pages: int,
    weight: float,
    qvec: np.ndarray,
    known: list[np.ndarray | None] | None,
    page_routing: np.ndarray | None = None,
) -> None:
    """Step 5: one reranker call over all candidates, then budgets per kind. ``entities``:
    the subgraph's, in its order; ``relation_pool``: (relation indices, their objects, their
    priors). ``known``: the candidates' stored vectors (offline), so the fusion reranker
    embeds nothing it has. ``page_routing``: the pages' routing weights (``methods.retrieval.routing``),
    applied to their reranker scores as to their prior."""
    settings = trace.settings
    rels, relations, rel_prior = relation_pool
    texts = (
        list(page_texts)
        + [entity_text(e) for e in entities]
        + [_relation_text(view, int(r), rel) for r, rel in zip(rels, relations)]
    )
    if not texts:
        scores = np.zeros(0)
    elif known is not None:
        scores = np.asarray(ctx.models.reranker.rerank_with_vectors(query, qvec, texts, known), dtype=np.float64)
    else:
        scores = np.asarray(ctx.models.reranker.rerank(query, texts), dtype=np.float64)
    n_p, n_e = len(pages), len(trace.subgraph)
    page_weight = ctx.settings.kg4vd.offline_page_rerank_weight if known is not None else weight  # step 5's note
    page_scores = scores[:n_p] if page_routing is None else scores[:n_p] * page_routing
    page_final = blend_rerank(page_scores, page_prior, page_weight)
    ent_final = blend_rerank(scores[n_p : n_p + n_e], trace.ppr, weight)
    rel_final = blend_rerank(scores[n_p + n_e :], rel_prior, weight)

    trace.pages = [
        ScoredPage(doc_id=pages[i][0], page=pages[i][1], score=float(page_final[i]))
        for i in top_k(page_final, k_pages)[0]
    ]
    trace.entities = [
        ScoredEntity(entity=entities[i], score=float(ent_final[i])) for i in top_k(ent_final, settings.k_entities)[0]
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
