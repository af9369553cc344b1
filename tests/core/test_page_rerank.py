"""Reranking a structural-layer ranking's best pages by their best chunks (``methods.retrieval.page_rerank``)."""

from __future__ import annotations

import numpy as np

from docgraph.config import RetrievalSettings
from docgraph.methods.retrieval.evidence_layer import EvidenceLayer, indexed_text
from docgraph.methods.retrieval.page_rerank import rerank_pages
from docgraph.models.rerank import FusionReranker
from docgraph.types import Chunk

TEXTS = {
    1: ["scope one emissions fell", "a table of scope one emissions by site"],
    2: ["staffing numbers for the year"],
    3: ["emissions outlook and targets"],
}


def layer_and_ranking(query: str = "scope one emissions"):
    chunks = [
        Chunk(id=f"d:{p}:P{i}", doc_id="d", page=p, component_ids=[f"P{i}"], text=t)
        for p, texts in TEXTS.items()
        for i, t in enumerate(texts)
    ]
    vectors = np.eye(len(chunks), 8, dtype=np.float32)
    layer = EvidenceLayer.build(chunks, vectors, RetrievalSettings(), extra_pages=[("d", 9)])
    qvec = vectors[1] * 0.6 + vectors[3] * 0.8  # nearest: page 3's chunk, then page 1's table
    return layer, layer.rank_pages(query, qvec, RetrievalSettings()), qvec


class NoEmbedding:
    """An embedder that must not be called: the fusion reranker takes the layer's vectors."""

    model = "none"

    def embed_queries(self, texts):
        raise AssertionError("the query vector was given")

    embed_passages = embed_queries


class Recording:
    model = "recording"

    def __init__(self, scores):
        self.scores, self.seen = scores, []

    def rerank(self, query, documents):
        self.seen = list(documents)
        return [self.scores.get(d, 0.0) for d in documents]


def test_weight_zero_keeps_the_layers_order_and_calls_nothing():
    layer, ranking, qvec = layer_and_ranking()
    reranker = Recording({})
    assert rerank_pages(reranker, layer, ranking, "scope one emissions", qvec, 3, 0.0) == ranking.top(3)
    assert reranker.seen == []


def test_the_reranker_sees_each_pooled_pages_best_chunk_and_decides_at_weight_one():
    layer, ranking, qvec = layer_and_ranking()
    pool = [p for p, _ in ranking.top(4)]
    best = layer.best_chunks(ranking.chunk_scores, pool)
    reranker = Recording({"staffing numbers for the year": 5.0})
    out = rerank_pages(reranker, layer, ranking, "scope one emissions", qvec, 4, 1.0)
    assert reranker.seen == [indexed_text(layer.chunks[best[p]]) for p in pool if p in best]
    assert ("d", 9) in pool and ("d", 9) not in best, "a page without chunks is pooled, not reranked"
    assert out[0][0] == ("d", 2) and [s for _, s in out] == sorted((s for _, s in out), reverse=True)
    assert dict(out)[("d", 9)] == 0.0


def test_the_offline_fusion_reranker_embeds_nothing_and_mixes_with_the_prior():
    layer, ranking, qvec = layer_and_ranking()
    prior = dict(ranking.top(3))
    half = dict(rerank_pages(FusionReranker(NoEmbedding(), 0.3), layer, ranking, "scope one emissions", qvec, 3, 0.5))
    lo, hi = min(prior.values()), max(prior.values())
    for page, score in half.items():
        assert 0.5 * (prior[page] - lo) / (hi - lo) <= score <= 0.5 * (prior[page] - lo) / (hi - lo) + 0.5
