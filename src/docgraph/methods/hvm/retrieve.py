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

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import ValidationError

from ...config import HVM_PROFILES, HVMSettings
from ...errors import InputError
from ...scoring import top_k
from ...types import Evidence, ScoredChunk, ScoredPage
from ..base import MethodContext, check_options, not_built
from ..retrieval.evidence_layer import retrieval_settings
from ..retrieval.page_rerank import rerank_pages
from ..retrieval.routing import document_router
from ..retrieval.scope import keep_scope, scope_option
from ..timing import Timer
from .anchoring import concept_evidence, entity_evidence, propagate
from .index import METHOD, HVMIndex, hvm_index

__all__ = ["METHOD", "HVMIndex", "hvm_index", "organise", "propagate", "retrieve", "settings_for"]


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


def retrieve(ctx: MethodContext, query: str, **options: Any) -> Evidence:
    """Evidence for ``query`` (see module docstring); ``options`` override ``HVMSettings`` fields."""
    options = dict(options)
    scope = scope_option(options.pop("documents", None))
    settings = settings_for(ctx, options)
    timer = Timer()
    index = hvm_index(ctx)
    timer.lap("index")
    if not index.chunks:
        raise not_built(ctx, METHOD)
    layer = index.layer
    evidence = Evidence(query=query, method=METHOD)
    rs = retrieval_settings(ctx)
    q = np.asarray(ctx.models.text_embedder.embed_queries([query])[0], dtype=np.float32)
    timer.lap("embed")
    flat = layer.flat(query, q, rs, documents=document_router(ctx.store), scope=scope)
    chunk_scores = index.chunk_scores(flat)
    if settings.concept_graph:
        graph_rows = concept_evidence(index, query, q, settings, rs, evidence, timer)
    else:
        graph_rows = entity_evidence(index, q, settings, evidence, timer)
    graph_top, _ = top_k(chunk_scores, settings.K, graph_rows)
    rag_top, _ = top_k(chunk_scores, settings.k_b)
    chosen = organise(np.concatenate([graph_top, rag_top]), chunk_scores, index.modality, settings)
    evidence.chunks = [ScoredChunk(chunk=index.chunks[r], score=float(chunk_scores[r])) for r in chosen]
    timer.lap("evidence")
    graph_seeds = np.zeros(len(index.chunks))
    graph_seeds[graph_top] = np.maximum(chunk_scores[graph_top], 0.0)
    ranking = layer.propagate(query, q, flat, rs, graph_seeds[layer.source_rows])
    timer.lap("pages")
    candidates = rerank_pages(
        ctx.models.reranker, layer, ranking, query, q, 2 * settings.top_pages, settings.page_rerank_weight
    )
    timer.lap("rerank")
    pages = layer.with_bridges(
        candidates, index.bridges if settings.concept_graph else None, query, rs, settings.top_pages, ranking.final
    )
    pages = layer.take_turns(pages, ranking, settings.top_pages)  # a question comparing companies: turns
    evidence.pages = [ScoredPage(doc_id=d, page=p, score=s) for (d, p), s in pages]
    timer.lap("second_hop")
    timer.total("retrieve")
    evidence.timings = timer.timings
    evidence.routed = flat.routed  # the documents the question named, as the flat ranking weighed them
    return keep_scope(evidence, scope)
