"""Chunk vectors keyed on the chunk's own text, with its context added as a separate part.

A chunk's vector is ``normalise(E(body) + w · mean(E(s) for s in its section path))``:
the body (the chunk's text) and every element of its section path (document title,
headings) are embedded on their own, so each is cached under its own content key. The
same chunk in another corpus (a packed corpus, a renamed document, another method)
therefore costs no new embedding; only a new title or heading does, once per corpus.
``w`` is ``models.embedding.context_weight`` (0 = the body alone). This is the default
``models.embedding.chunk_context = "separate"`` recipe; ``"joint"`` embeds "context line
+ text" as one text (``evidence_layer.indexed_text``), as docgraph did before.

Callers embed ``ContextualChunks.texts()`` in their own blocks (progress, metering) and
turn the rows back into one vector per chunk with ``combine``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...models.embedding.embed_cache import normalize_rows
from ...models.embedding.vector_recipe import vector_model
from ...types import Chunk
from ..base import MethodContext
from .evidence_layer import indexed_text
from .vector_index import delete_vectors


def context_elements(chunk: Chunk) -> list[str]:
    """The non-empty elements of the chunk's section path (title first, then headings)."""
    return [s for s in chunk.section_path if s and s.strip()]


@dataclass
class ContextualChunks:
    """The texts to embed for ``chunks`` (bodies, then each distinct context element once)
    and the combination of their rows into chunk vectors."""

    chunks: Sequence[Chunk]
    weight: float
    max_chars: int | None = None
    joint: bool = False
    _elements: list[str] = field(init=False, repr=False)

    @classmethod
    def of(cls, chunks: Sequence[Chunk], embedding_settings, max_chars: int | None = None) -> ContextualChunks:
        """The recipe chosen by ``models.embedding`` (``chunk_context``, ``context_weight``)."""
        return cls(
            chunks, embedding_settings.context_weight, max_chars, joint=embedding_settings.chunk_context == "joint"
        )

    def __post_init__(self) -> None:
        separate = not self.joint and self.weight > 0
        self._elements = list(dict.fromkeys(e for c in self.chunks for e in context_elements(c))) if separate else []

    def _cut(self, text: str) -> str:
        return text if self.max_chars is None else text[: self.max_chars]

    def texts(self) -> list[str]:
        """Joint: "context line\ntext" per chunk. Separate: bodies in chunk order, then the
        distinct context elements."""
        if self.joint:
            return [self._cut(indexed_text(c)) for c in self.chunks]
        return [self._cut(c.text) for c in self.chunks] + self._elements

    def combine(self, rows: np.ndarray) -> np.ndarray:
        """One unit-norm float32 row per chunk from the rows of ``texts()`` (same order)."""
        n = len(self.chunks)
        rows = np.asarray(rows, dtype=np.float32)
        if rows.shape[0] != n + len(self._elements):
            raise ValueError(f"expected {n + len(self._elements)} rows for {n} chunks, got {rows.shape[0]}")
        out = rows[:n].copy()
        if self._elements:
            position = {e: n + i for i, e in enumerate(self._elements)}
            for i, chunk in enumerate(self.chunks):
                elements = context_elements(chunk)
                if elements:
                    out[i] += self.weight * rows[[position[e] for e in elements]].mean(axis=0)
        return normalize_rows(out)


def renew_stale_recipe(ctx: MethodContext, method: str, chunk_namespaces: Sequence[str]) -> bool:
    """When ``method``'s chunk-derived vectors were made with another recipe than the
    configured one (``chunk_context`` or ``context_weight`` changed), drop every vector of
    the method, say so, and return True: the build then re-embeds them (texts already
    embedded come from the cache), so an index never mixes recipes. Call inside the build."""
    recorded = ctx.store.vector_models()
    embedding = ctx.settings.models.embedding
    wanted = {vector_model(m, embedding) for m in (ctx.models.text_embedder.model, ctx.models.image_embedder.model)}
    stale = [ns for ns in chunk_namespaces if ns in recorded and recorded[ns] not in wanted]
    if not stale:
        return False
    ctx.progress.note(
        f"{method}: its chunk vectors were made as {recorded[stale[0]]!r}, and models.embedding now "
        f"says chunk_context = {embedding.chunk_context!r}, context_weight = "
        f"{embedding.context_weight:g}: re-embedding every {method} vector (texts embedded before "
        f"come from the cache)"
    )
    for namespace in [ns for ns in recorded if ns == method or ns.startswith(method + ".")]:
        delete_vectors(ctx.store, namespace)
    return True
