"""HVM-GraphRAG retrieval: concept anchors → similarity-based propagation → evidence → organisation.

METHODS.md, HVM query, with every budget a config value (``HVMSettings``):
1. Concept anchors A_q: the top-``k_c`` concepts by cos(Enc(q), Enc(c)), kept if ≥ ``theta``.
2. Propagation (``propagate``): the top-``k_r`` relation labels by similarity to q (the
   paper's R_q); of their E_con edges, those touching A_q (R̂_q), best first — by the
   label's similarity, then by the mean similarity of the edge's two concepts — and at
   most ``k_r`` of them: the paper bounds propagation to k_r relations, so a label shared
   by hundreds of edges does not pull in hundreds of concepts. Their other endpoints join
   → Â_q. One step, no multi-hop traversal. When the cut drops edges, a note counts them.
3. Evidence: B_graph = ∪ I_con(c), c ∈ Â_q, cut to its top-``K`` chunks by s(q, b);
   B_rag = the top-``k_b`` chunks over all chunks; their union. s(q, b) is the hybrid
   (BM25 + dense, ``methods.retrieval.hybrid``) chunk score, and anchors are ranked by the hybrid
   concept score among concepts whose cosine reaches ``theta`` (``retrieval.seeds =
   "dense"``: cosine only, the paper's form).
5. Pages: every page ranked (the first ``top_pages``) by the structural evidence layer
   (``methods.retrieval.evidence_layer``): flat hybrid page scores fused with diffusion seeded by
   the best hybrid chunks and by B_graph, so the page list no longer stops where the
   chunk budget does; the 2 × ``top_pages`` best reranked by their best chunks, the
   reranker weighing ``page_rerank_weight`` (``methods.retrieval.page_rerank``; offline the fusion
   reranker, whose BM25 over the candidates alone adds what the prior lacks); then the
   second hop (``graph.bridges``): pages sharing the rarer
   entities grounded on the best page (preferably those whose headings it names,
   ``graph.name_links``) take every ``retrieval.bridge_every``-th slot.
4. Organisation: grouped by modality, at most ``k_text`` / ``k_table`` / ``k_image`` each
   (best first), sections in that order. Ablation ``modality_aware = false``: the union's
   best ``k_text + k_table + k_image`` chunks by score, interleaved.
Ablation ``concept_graph = false``: anchors are entities (top-``k_c``, ≥ ``theta``) whose
I_fac chunks form B_graph; no propagation.

Everything but the query embedding is numpy over an in-memory index (``HVMIndex``),
loaded once per store and rebuilt only when a build or removal changes the method's data.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from ...config import HVM_PROFILES, HVMSettings
from ...documents.page_numbers import stored_printed_numbers
from ...errors import InputError, NotBuiltError
from ...graph.bridges import EntityBridges
from ...models.bm25 import BM25
from ...scoring import top_k
from ...store.base import Store
from ...types import Chunk, Entity, Evidence, Relation, ScoredChunk, ScoredEntity, ScoredPage, ScoredRelation
from ..base import MethodContext, check_options, not_built
from ..memo import cached
from ..retrieval.evidence_layer import EvidenceLayer, PageRanking, layer_shape, retrieval_settings
from ..retrieval.hybrid import fuse_scores
from ..retrieval.page_rerank import rerank_pages
from ..retrieval.routing import document_router
from ..retrieval.vector_index import VectorIndex, load_index
from ..timing import Timer
from .state import NS_CHUNK, NS_CONCEPT, NS_EDGE, NS_ENTITY, VEC_CHUNK, VEC_CONCEPT, VEC_ENTITY, VEC_RELATION

METHOD = "hvm"
MODALITIES = ("text", "table", "image")


@dataclass
class HVMIndex:
    """Chunks, concepts, relation labels and I_con as arrays (rows aligned with their vectors)."""

    chunks: list[Chunk]
    chunk_vectors: VectorIndex
    modality: np.ndarray  # per chunk row: index into MODALITIES
    concept_vectors: VectorIndex
    concept_info: list[dict]  # per concept row: {"name", "entities", "chunks"}
    icon: list[np.ndarray]  # per concept row: chunk rows of I_con(c)
    relation_vectors: VectorIndex
    edges: dict[str, list[tuple[int, int]]]  # relation label → (head row, tail row) of E_con
    entity_vectors: VectorIndex | None = None
    entity_rows: list[dict] = field(default_factory=list)
    entity_support: list[np.ndarray] = field(default_factory=list)
    layer: EvidenceLayer | None = None  # structural layer over ``chunks`` (same settings as built)
    bridges: EntityBridges | None = None  # entities on the layer's pages (second hop, graph.bridges)
    concept_bm25: BM25 | None = None  # BM25 over concept names (hybrid concept anchors)

    def chunk_scores(self, ranking: PageRanking) -> np.ndarray:
        """The ranking's fused chunk scores in this index's chunk order."""
        out = np.zeros(len(self.chunks))
        out[self.layer.source_rows] = ranking.chunk_scores
        return out


def _rows(positions: Mapping[str, int], keys: list[str]) -> np.ndarray:
    return np.fromiter((positions[k] for k in keys if k in positions), dtype=np.int64)


def load_hvm_index(ctx: MethodContext) -> HVMIndex:
    """Read the index from the store (use ``hvm_index`` for the cached one)."""
    store = ctx.store
    ctx.models.check_embedding_model(METHOD)
    chunk_vectors = load_index(store, VEC_CHUNK)
    records = {k: v for k, v in store.iter_records(NS_CHUNK)}
    chunks = [Chunk.model_validate(records[k]["chunk"]) if k in records else None for k in chunk_vectors.keys]
    if any(c is None for c in chunks):  # vectors of chunks whose records are gone: leave them out
        keep = [i for i, c in enumerate(chunks) if c is not None]
        chunk_vectors = VectorIndex(
            keys=[chunk_vectors.keys[i] for i in keep],
            matrix=chunk_vectors.matrix[keep],
            position={chunk_vectors.keys[i]: j for j, i in enumerate(keep)},
        )
        chunks = [chunks[i] for i in keep]
    modality = np.array([MODALITIES.index(c.modality) for c in chunks], dtype=np.int8)
    concept_vectors = load_index(store, VEC_CONCEPT)
    rows = dict(store.iter_records(NS_CONCEPT))
    info, icon = [], []
    for key in concept_vectors.keys:
        docs = (rows.get(key) or {}).get("docs", {})
        chunk_ids = [c for part in docs.values() for c in part["chunks"]]
        info.append({"name": key, "entities": sum(p["entities"] for p in docs.values()), "chunks": len(chunk_ids)})
        icon.append(np.unique(_rows(chunk_vectors.position, chunk_ids)))
    edges: dict[str, list[tuple[int, int]]] = {}
    for _, row in store.iter_records(NS_EDGE):
        head, tail = concept_vectors.position.get(row["head"]), concept_vectors.position.get(row["tail"])
        if head is not None and tail is not None:
            edges.setdefault(row["relation"], []).append((head, tail))
    index = HVMIndex(
        chunks=chunks,
        chunk_vectors=chunk_vectors,
        modality=modality,
        concept_vectors=concept_vectors,
        concept_info=info,
        icon=icon,
        relation_vectors=load_index(store, VEC_RELATION),
        edges=edges,
    )
    entity_vectors = load_index(store, VEC_ENTITY)
    if len(entity_vectors):
        entities = dict(store.iter_records(NS_ENTITY))
        index.entity_vectors = entity_vectors
        index.entity_rows = [entities.get(k, {"name": k, "concept": "", "support": []}) for k in entity_vectors.keys]
        index.entity_support = [
            np.unique(_rows(chunk_vectors.position, r.get("support", []))) for r in index.entity_rows
        ]
    settings = retrieval_settings(ctx)
    index.layer = EvidenceLayer.build(
        chunks, chunk_vectors.matrix, settings, printed=stored_printed_numbers(store, {c.doc_id for c in chunks})
    )
    index.bridges = index.layer.bridge_mentions(entity_mentions(store, chunks, chunk_vectors))
    index.concept_bm25 = BM25(list(concept_vectors.keys))
    return index


def entity_mentions(store: Store, chunks: list[Chunk], chunk_vectors: VectorIndex) -> Iterator[tuple[str, int, str]]:
    """``(doc_id, page, name)`` of every extracted entity on the pages of the chunks that
    support it (the entity level of the graph, below its concepts): the second hop's bridges."""
    for _, row in store.iter_records(NS_ENTITY):
        for r in _rows(chunk_vectors.position, row.get("support", [])):
            yield chunks[int(r)].doc_id, chunks[int(r)].page, str(row.get("name", ""))


def hvm_index(ctx: MethodContext) -> HVMIndex:
    """The cached in-memory index (reloaded when the method's data or the layer's settings change)."""
    shape = layer_shape(retrieval_settings(ctx))
    return cached(ctx.store, METHOD, f"index:{shape}", lambda: load_hvm_index(ctx))


def settings_for(ctx: MethodContext, options: Mapping[str, Any]) -> HVMSettings:
    """The workspace's HVM settings; a per-call ``profile`` option then sets its values, and the
    other ``options`` (any ``HVMSettings`` field) win over both."""
    data = ctx.settings.hvm.with_profile().model_dump()
    options = dict(options)
    check_options(METHOD, options, HVMSettings.model_fields)
    profile = options.pop("profile", None)
    if profile is not None:
        if profile not in HVM_PROFILES:
            raise InputError(f"unknown hvm profile {profile!r}; use one of {', '.join(HVM_PROFILES)}")
        data.update(HVM_PROFILES[profile], profile=profile)
    try:
        return HVMSettings.model_validate({**data, **options})
    except ValidationError as exc:
        raise InputError(f"invalid hvm option(s): {exc}") from exc


def anchors(
    scores: np.ndarray, k: int, theta: float, rank_by: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows with score ≥ ``theta``, ranked by ``rank_by`` (hybrid scores) when given,
    else by ``scores``; returns (rows, scores)."""
    if rank_by is None:
        rows, values = top_k(scores, k)
        keep = values >= theta
        return rows[keep], values[keep]
    eligible = np.flatnonzero(scores >= theta)
    rows, _ = top_k(np.asarray(rank_by, dtype=np.float64), k, eligible)
    return rows, scores[rows]


def organise(rows: np.ndarray, scores: np.ndarray, modality: np.ndarray, settings: HVMSettings) -> list[int]:
    """Modality-aware organisation (or the plain ablation) of candidate chunk rows."""
    rows = np.asarray(sorted(set(int(r) for r in rows)), dtype=np.int64)
    if not len(rows):
        return []
    if not settings.modality_aware:
        budget = settings.k_text + settings.k_table + settings.k_image
        return [int(r) for r in top_k(scores, budget, rows)[0]]
    out: list[int] = []
    for code, budget in enumerate((settings.k_text, settings.k_table, settings.k_image)):
        out.extend(int(r) for r in top_k(scores, budget, rows[modality[rows] == code])[0])
    return out


@dataclass
class Propagation:
    """R̂_q cut to ``k_r`` edges: (head row, label, tail row, label score), best first; the
    concepts they bring in (not anchors; row → label that reached it), in order; and the
    number of edges of the chosen labels that touched an anchor (before the cut)."""

    relations: list[tuple[int, str, int, float]]
    reached: dict[int, str]
    anchored: int


def propagate(
    anchor_rows: set[int],
    label_scores: np.ndarray,
    labels: list[str],
    edges: Mapping[str, list[tuple[int, int]]],
    concept_scores: np.ndarray,
    k_r: int,
) -> Propagation:
    """One step of similarity-based propagation (module docstring, step 2): the top-``k_r``
    labels by ``label_scores``, their edges touching ``anchor_rows``, the best ``k_r`` of those."""
    label_rows, top_scores = top_k(label_scores, k_r)
    touching: list[tuple[float, float, int, tuple[int, str, int, float]]] = []
    for row, score in zip(label_rows, top_scores):
        label = labels[int(row)]
        for head, tail in edges.get(label, []):
            if head in anchor_rows or tail in anchor_rows:
                both = (float(concept_scores[head]) + float(concept_scores[tail])) / 2
                touching.append((-float(score), -both, len(touching), (head, label, tail, float(score))))
    kept = [edge for *_, edge in sorted(touching)[: max(0, k_r)]]
    reached: dict[int, str] = {}
    for head, label, tail, _ in kept:
        for other in (head, tail):
            if other not in anchor_rows and other not in reached:
                reached[other] = label
    return Propagation(relations=kept, reached=reached, anchored=len(touching))


def _concept_entity(index: HVMIndex, row: int, score: float, via: str = "") -> ScoredEntity:
    info = index.concept_info[row]
    description = f"concept with {info['entities']} entities, {info['chunks']} supporting chunks"
    return ScoredEntity(
        entity=Entity(
            id=f"concept:{info['name']}",
            name=info["name"],
            type="concept",
            description=description + (f"; reached through {via}" if via else ""),
        ),
        score=float(score),
    )


def retrieve(ctx: MethodContext, query: str, **options: Any) -> Evidence:
    """Evidence for ``query`` (see module docstring); ``options`` override ``HVMSettings`` fields."""
    settings = settings_for(ctx, options)
    timer = Timer()
    index = hvm_index(ctx)
    timer.lap("index")
    if not index.chunks:
        raise not_built(ctx, METHOD)
    evidence = Evidence(query=query, method=METHOD)
    rs = retrieval_settings(ctx)
    q = np.asarray(ctx.models.text_embedder.embed_queries([query])[0], dtype=np.float32)
    timer.lap("embed")
    flat = index.layer.flat(query, q, rs, documents=document_router(ctx.store))
    chunk_scores = index.chunk_scores(flat)
    graph_rows = np.zeros(0, dtype=np.int64)
    if settings.concept_graph:
        concept_scores = index.concept_vectors.scores(q) if len(index.concept_vectors) else np.zeros(0)
        a_rows, a_scores = anchors(
            concept_scores,
            settings.k_c,
            settings.theta,
            fuse_scores(index.concept_bm25.scores(query), concept_scores, rs)
            if rs.seeds == "hybrid" and len(concept_scores)
            else None,
        )
        evidence.entities = [_concept_entity(index, int(r), s) for r, s in zip(a_rows, a_scores)]
        timer.lap("anchors")
        anchor_set = set(int(r) for r in a_rows)
        expanded = dict.fromkeys(anchor_set)
        if anchor_set and len(index.relation_vectors):
            step = propagate(
                anchor_set,
                index.relation_vectors.scores(q),
                index.relation_vectors.keys,
                index.edges,
                concept_scores,
                settings.k_r,
            )
            for head, label, tail, score in step.relations:
                h_name, t_name = index.concept_info[head]["name"], index.concept_info[tail]["name"]
                evidence.relations.append(
                    ScoredRelation(
                        relation=Relation(
                            id=f"{h_name}\t{label}\t{t_name}",
                            source=f"concept:{h_name}",
                            target=f"concept:{t_name}",
                            label=label,
                        ),
                        score=score,
                        source_name=h_name,
                        target_name=t_name,
                    )
                )
            for other, label in step.reached.items():
                expanded[other] = None
                evidence.entities.append(_concept_entity(index, other, concept_scores[other], label))
            if step.anchored > len(step.relations):
                evidence.notes.append(
                    f"propagation: {len(step.relations)} of {step.anchored} relations touching "
                    f"the anchors kept (k_r={settings.k_r})"
                )
        if expanded:
            graph_rows = np.unique(np.concatenate([index.icon[c] for c in expanded]))
        timer.lap("propagate")
        if not len(a_rows):
            evidence.notes.append(f"no concept reached theta={settings.theta}; evidence from chunk retrieval only")
    else:
        if index.entity_vectors is None:
            raise NotBuiltError(
                "the no-concept-graph ablation needs entity vectors: set hvm.concept_graph = false "
                "in docgraph.toml (or DOCGRAPH_HVM__CONCEPT_GRAPH=false) and run "
                "`docgraph build --method hvm`"
            )
        e_rows, e_scores = anchors(index.entity_vectors.scores(q), settings.k_c, settings.theta)
        for row, score in zip(e_rows, e_scores):
            data = index.entity_rows[int(row)]
            evidence.entities.append(
                ScoredEntity(
                    entity=Entity(
                        id=index.entity_vectors.keys[int(row)],
                        name=data["name"],
                        type=data.get("concept", ""),
                        description=data.get("description", ""),
                    ),
                    score=float(score),
                )
            )
        if len(e_rows):
            graph_rows = np.unique(np.concatenate([index.entity_support[int(r)] for r in e_rows]))
        timer.lap("anchors")
    graph_top, _ = top_k(chunk_scores, settings.K, graph_rows)
    rag_top, _ = top_k(chunk_scores, settings.k_b)
    chosen = organise(np.concatenate([graph_top, rag_top]), chunk_scores, index.modality, settings)
    evidence.chunks = [ScoredChunk(chunk=index.chunks[r], score=float(chunk_scores[r])) for r in chosen]
    timer.lap("evidence")
    graph_seeds = np.zeros(len(index.chunks))
    graph_seeds[graph_top] = np.maximum(chunk_scores[graph_top], 0.0)
    ranking = index.layer.propagate(query, q, flat, rs, graph_seeds[index.layer.source_rows])
    timer.lap("pages")
    candidates = rerank_pages(
        ctx.models.reranker, index.layer, ranking, query, q, 2 * settings.top_pages, settings.page_rerank_weight
    )
    timer.lap("rerank")
    pages = index.layer.with_bridges(
        candidates, index.bridges if settings.concept_graph else None, query, rs, settings.top_pages, ranking.final
    )
    evidence.pages = [ScoredPage(doc_id=d, page=p, score=s) for (d, p), s in pages]
    timer.lap("second_hop")
    timer.total("retrieve")
    evidence.timings = timer.timings
    return evidence
