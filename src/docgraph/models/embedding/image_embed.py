"""Image embeddings for page images, crops and image+text pairs (KG4VD's multimodal index).

``TextFallbackImageEmbedder`` (this module): offline, no image model exists here, so an
item is represented by its text (OCR text, caption, nearby text) embedded with the text
embedder as a passage, queries as queries (one shared space). ``is_text_fallback`` is
True; the first use logs a warning once per process and records ``image_embedding =
text-fallback:<text model>`` in the workspace metadata.

``EndpointImageEmbedder`` (``image_embed_endpoint``): a served multimodal embedder; kept in
its own module so the offline path never imports the HTTP client stack.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np

from ...store.base import Store
from ..base import ImageItem, TextEmbedder
from .embed_cache import normalize_rows

log = logging.getLogger(__name__)
META_KEY = "image_embedding"
_warned: set[str] = set()
_warn_lock = threading.Lock()


class TextFallbackImageEmbedder:
    """ImageEmbedder that embeds each item's text with ``text_embedder`` (see module doc)."""

    is_text_fallback = True

    def __init__(self, text_embedder: TextEmbedder, store: Store | None = None):
        self.text_embedder = text_embedder
        self.store = store
        self.model = f"text-fallback:{text_embedder.model}"
        self._announced = False

    @property
    def dim(self) -> int:
        return self.text_embedder.dim

    def announce(self) -> None:
        """Log once per process and record the fallback in the workspace metadata."""
        if self._announced:
            return
        self._announced = True
        with _warn_lock:
            first = self.model not in _warned
            _warned.add(self.model)
        if first:
            log.warning(
                "no image embedding model configured: page images and crops are embedded by their "
                'text with %s (set models.image_embedding.backend = "openai" and base_url for a '
                "served GME / Qwen-VL embedder)",
                self.text_embedder.model,
            )
        if self.store is not None and self.store.get_meta(META_KEY) != self.model:
            self.store.set_meta(META_KEY, self.model)

    def embed_items(self, items: Sequence[ImageItem]) -> np.ndarray:
        self.announce()
        return normalize_rows(self.text_embedder.embed_passages([i.text or "" for i in items]))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.text_embedder.embed_queries(texts)
