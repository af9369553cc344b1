"""``hybrid``: BM25 and dense chunk retrieval fused — the strongest flat retriever.

The chunks and chunk vectors of ``dense`` (its indexing, under ``hybrid.chunk``; the
shared embedding cache makes a ``hybrid`` build after ``dense`` nearly free), scored by
``methods.retrieval.hybrid.fuse_scores`` with the ``[retrieval]`` settings (reciprocal-rank fusion
by default); a page scores as its best chunk. Every graph method is measured against
max(bm25, dense, pages, hybrid).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...scoring import ranked
from ...types import Chunk
from ..base import MethodContext, register
from ..retrieval.evidence_layer import indexed_text, retrieval_settings
from ..retrieval.hybrid import HybridIndex
from ..retrieval.vector_index import load_index
from .common import cached
from .dense import DenseBaseline
from .settings import BaselineSettings


@register("hybrid")
class HybridBaseline(DenseBaseline):
    name = "hybrid"
    label = "Hybrid BM25 + dense (baseline)"
    order = 12
    vector_namespace = "hybrid.chunk"

    def _index(self, ctx: MethodContext, chunks: list[Chunk]) -> tuple[HybridIndex, list[int]]:
        vectors = load_index(ctx.store, self.vector_namespace)
        rows = [i for i, c in enumerate(chunks) if c.id in vectors.position]
        matrix = vectors.matrix[[vectors.position[chunks[i].id] for i in rows]] if rows else vectors.matrix[:0]
        return HybridIndex.build([indexed_text(chunks[i]) for i in rows], matrix), rows

    def rank(
        self, ctx: MethodContext, query: str, chunks: list[Chunk], settings: BaselineSettings
    ) -> Iterator[tuple[int, float]]:
        index, rows = cached(ctx.store, self.name, "hybrid", lambda: self._index(ctx, chunks), persist=True)
        if not rows:
            return iter(())
        qvec = ctx.models.text_embedder.embed_queries([query])[0]
        scores = index.scores(query, qvec, retrieval_settings(ctx))
        return ((rows[j], score) for j, score in ranked(scores))
