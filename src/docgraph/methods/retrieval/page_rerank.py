"""Reranking the best pages of a structural-layer ranking by their best chunks.

``rerank_pages(reranker, layer, ranking, query, qvec, pool, weight)`` takes the ``pool``
best pages of a ``PageRanking`` (``methods.retrieval.evidence_layer``), gives the reranker each
page's best chunk under the ranking's chunk scores (``EvidenceLayer.best_chunks``) and
scores every pooled page

    weight · mm(rerank) + (1 − weight) · mm(prior)

with ``prior`` the ranking's final (flat + diffused) score and mm min–max over the pool
(``scoring.blend_rerank``, as KG4VD's step 5). Offline the reranker is the fusion reranker
(``models.rerank``): it takes the layer's stored chunk vectors, so nothing is embedded, and
its BM25 runs over the pooled texts only, so a word that tells the candidates apart counts whatever its IDF over
the whole corpus — the one signal the prior does not already hold. With a reranker model
(``[models.reranker]``) the model judges the texts. A pooled page without a chunk keeps
its prior and a rerank score of 0. ``weight`` 0 returns the pool in the ranking's order.

Used by HVM (docgraph's addition; KG4VD reranks its candidate pages in its own step 5,
in one call with its entities and relations).
"""

from __future__ import annotations

import numpy as np

from ...models.base import Reranker
from ...scoring import blend_rerank, minmax
from .evidence_layer import EvidenceLayer, PageKey, PageRanking, indexed_text


def rerank_pages(
    reranker: Reranker,
    layer: EvidenceLayer,
    ranking: PageRanking,
    query: str,
    qvec: np.ndarray,
    pool: int,
    weight: float,
) -> list[tuple[PageKey, float]]:
    """The ``pool`` best pages of ``ranking``, rescored and reordered (see module doc); best
    first, ties kept in the ranking's order."""
    top = ranking.top(pool)
    if weight <= 0 or not top:
        return top
    pages = [p for p, _ in top]
    prior = np.array([s for _, s in top], dtype=np.float64)
    best = layer.best_chunks(ranking.chunk_scores, pages)
    ranked = [i for i, p in enumerate(pages) if p in best]
    scores = np.zeros(len(pages))
    if ranked:
        texts = [indexed_text(layer.chunks[best[pages[i]]]) for i in ranked]
        if hasattr(reranker, "rerank_with_vectors"):
            vectors = [layer.hybrid.vectors[best[pages[i]]] for i in ranked]
            found = reranker.rerank_with_vectors(query, qvec, texts, vectors)
        else:
            found = reranker.rerank(query, texts)
        scores[ranked] = minmax(np.asarray(found, dtype=np.float64))
    final = blend_rerank(scores * ranking.routing_of(pages, layer.page_position), prior, weight)
    order = np.lexsort((np.arange(len(pages)), -final))
    return [(pages[i], float(final[i])) for i in order]
