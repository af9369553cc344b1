"""``EndpointImageEmbedder``: a served multimodal embedder (GME, Qwen-VL embedding models) on
an OpenAI-compatible ``/v1/embeddings`` that accepts chat-style ``messages`` — vLLM's
form: one request per item whose user content is an ``image_url`` data URI plus the
item's text. Queries go as plain ``input`` text. Rows are cached by (image content hash,
text) in the embedding cache (and the shared file behind it, when configured).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...config import ImageEmbeddingSettings
from ...store.base import Store
from ..base import ImageItem, ImagePart
from ..chat.keys import data_uri, image_digest
from ..transport.endpoint import EndpointBackend
from ..transport.http import post_json
from ..transport.retry import RetryPolicy
from .embed_cache import EmbeddingCache, content_key
from .embed_openai import rows_from_response
from .embed_shared import SharedEmbeddingFile


class EndpointImageEmbedder(EndpointBackend):
    """ImageEmbedder over a served multimodal embedding model (see module doc)."""

    is_text_fallback = False

    def __init__(
        self,
        settings: ImageEmbeddingSettings,
        store: Store,
        policy: RetryPolicy | None = None,
        shared: SharedEmbeddingFile | None = None,
    ):
        super().__init__(settings, "image embeddings", "image_embedding", policy)
        self.cache = EmbeddingCache(store, f"embed:{settings.model}", shared)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_queries(["dimension probe"]).shape[1])
        return self._dim

    def _post(self, body: dict[str, Any], expected: int) -> np.ndarray:
        rows = self.request(
            lambda: rows_from_response(post_json(self._client, "/embeddings", body)["data"], expected, self.endpoint)
        )
        self._dim = rows.shape[1]
        return rows

    def _item_body(self, item: ImageItem) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if item.image_path is not None:
            content.append({"type": "image_url", "image_url": {"url": data_uri(ImagePart(path=item.image_path))}})
        content.append({"type": "text", "text": item.text or ""})
        return {"model": self.model, "encoding_format": "float", "messages": [{"role": "user", "content": content}]}

    def embed_items(self, items: Sequence[ImageItem]) -> np.ndarray:
        items = list(items)
        keys = [
            content_key("item", image_digest(ImagePart(path=i.image_path)) if i.image_path else "", i.text)
            for i in items
        ]
        return self.cache.rows(
            keys, lambda idx: np.concatenate([self._post(self._item_body(items[i]), 1) for i in idx])
        )

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]
        keys = [content_key("query", t) for t in texts]
        size = max(1, self.settings.batch_size)

        def compute(idx: list[int]) -> np.ndarray:
            batch = [texts[i] for i in idx]
            return np.concatenate(
                [
                    self._post(
                        {"model": self.model, "input": batch[s : s + size], "encoding_format": "float"},
                        len(batch[s : s + size]),
                    )
                    for s in range(0, len(batch), size)
                ]
            )

        return self.cache.rows(keys, compute)
