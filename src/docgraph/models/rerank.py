"""Rerankers: a served cross-encoder endpoint, or the offline embedding + BM25 fusion.

``EndpointReranker`` posts ``{model, query, documents}`` to ``<base_url>/rerank`` (vLLM's
and Jina/Cohere's form; vLLM serves it at ``/v1/rerank`` and ``/rerank``) and reads
``results[*].{index, relevance_score}``; a bare list of ``{index, score}`` (TEI's
``/rerank``) is read too. Retries through the shared ``RetryPolicy``.

``FusionReranker`` (offline): ``(1 - w) * cos' + w * bm25'`` where ``cos'`` is the
query–passage cosine of the text embedder and ``bm25'`` the BM25 score, each min-max
scaled over the candidate list (a constant column scales to 1 if positive, else 0), and
``w = bm25_weight``. Deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..config import RerankSettings
from ..errors import ConfigError
from ..scoring import minmax
from .base import TextEmbedder
from .bm25 import bm25_scores
from .transport.endpoint import EndpointBackend
from .transport.http import EndpointError, post_json
from .transport.retry import RetryPolicy


def scores_from_response(reply: Any, n: int, endpoint: str) -> list[float]:
    """Per-document scores (input order) from a rerank reply; missing documents score -inf."""
    items = reply.get("results", reply.get("data")) if isinstance(reply, dict) else reply
    if not isinstance(items, list):
        raise EndpointError(
            f"{endpoint}: rerank reply has no 'results' list", endpoint=endpoint, retryable=True, kind="malformed"
        )
    out = [float("-inf")] * n
    for item in items:
        index = int(item["index"])
        score = item.get("relevance_score", item.get("score"))
        if not 0 <= index < n or score is None:
            raise EndpointError(
                f"{endpoint}: rerank result {item!r} does not fit {n} documents",
                endpoint=endpoint,
                retryable=True,
                kind="malformed",
            )
        out[index] = float(score)
    return out


class EndpointReranker(EndpointBackend):
    """Reranker over a served ``/rerank`` endpoint."""

    def __init__(self, settings: RerankSettings, policy: RetryPolicy | None = None):
        super().__init__(settings, "rerank", "reranker", policy)

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        docs = list(documents)
        if not docs:
            return []
        body = {"model": self.model, "query": query, "documents": docs}
        return self.request(
            lambda: scores_from_response(post_json(self._client, "/rerank", body), len(docs), self.endpoint)
        )


class FusionReranker:
    """Offline reranker fusing embedding cosine with BM25 (see module doc)."""

    def __init__(self, embedder: TextEmbedder, bm25_weight: float = 0.3):
        if not 0.0 <= bm25_weight <= 1.0:
            raise ConfigError("models.reranker.bm25_weight must be within [0, 1]")
        self.embedder = embedder
        self.bm25_weight = bm25_weight
        self.model = f"fusion:{embedder.model}+bm25@{bm25_weight:g}"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        docs = list(documents)
        if not docs:
            return []
        q = self.embedder.embed_queries([query])[0]
        return self._fuse(query, docs, self.embedder.embed_passages(docs) @ q)

    def rerank_with_vectors(
        self, query: str, query_vector: np.ndarray, documents: Sequence[str], vectors: Sequence[np.ndarray | None]
    ) -> list[float]:
        """``rerank`` where the caller already holds passage vectors (the index rows of the
        same texts, in the embedder's space) for some documents: only the ``None`` ones are
        embedded, so reranking a method's own candidates costs no model inference."""
        docs = list(documents)
        if not docs:
            return []
        q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        missing = [i for i, v in enumerate(vectors) if v is None]
        rows = np.zeros((len(docs), len(q)), dtype=np.float32)
        for i, v in enumerate(vectors):
            if v is not None:
                rows[i] = v
        if missing:
            rows[missing] = self.embedder.embed_passages([docs[i] for i in missing])
        return self._fuse(query, docs, rows @ q)

    def _fuse(self, query: str, docs: list[str], cos: np.ndarray) -> list[float]:
        fused = (1.0 - self.bm25_weight) * minmax(cos) + self.bm25_weight * minmax(bm25_scores(query, docs))
        return [float(x) for x in fused]
