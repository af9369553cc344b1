"""``hybrid``: BM25 and dense chunk retrieval fused — the strongest flat retriever.

The same chunks and chunk vectors as ``dense`` (the shared embedding cache makes a
``hybrid`` build after ``dense`` nearly free), scored by ``methods.hybrid.fuse_scores``
with the ``[retrieval]`` settings (reciprocal-rank fusion by default); a page scores as
its best chunk. Every graph method is measured against max(bm25, dense, pages, hybrid).
"""

from __future__ import annotations

from typing import Any

from ...types import Chunk, Document
from ..base import MethodContext, register
from ..evidence_layer import retrieval_settings
from ..hybrid import HybridIndex
from ..vector_index import delete_vectors, load_index, write_vectors
from .common import ChunkBaseline, cached, embed_chunks, indexed_text
from .settings import BaselineSettings

VECTOR_NAMESPACE = "hybrid.chunk"


@register("hybrid")
class HybridBaseline(ChunkBaseline):
    name = "hybrid"

    def index_chunks(self, ctx: MethodContext, doc: Document, chunks: list[Chunk],
                     settings: BaselineSettings) -> dict[str, Any]:
        if not chunks:
            return {"vectors": 0}
        matrix = embed_chunks(ctx, chunks)
        write_vectors(ctx.store, VECTOR_NAMESPACE, [c.id for c in chunks], matrix, ctx.models.text_embedder.model,
                      [doc.id] * len(chunks))
        return {"vectors": len(chunks)}

    def drop_document(self, ctx: MethodContext, doc_id: str) -> None:
        super().drop_document(ctx, doc_id)
        delete_vectors(ctx.store, VECTOR_NAMESPACE, doc_id=doc_id)

    def _index(self, ctx: MethodContext, chunks: list[Chunk]) -> tuple[HybridIndex, list[int]]:
        vectors = load_index(ctx.store, VECTOR_NAMESPACE)
        rows = [i for i, c in enumerate(chunks) if c.id in vectors.position]
        matrix = vectors.matrix[[vectors.position[chunks[i].id] for i in rows]] if rows else vectors.matrix[:0]
        return HybridIndex.build([indexed_text(chunks[i]) for i in rows], matrix), rows

    def rank(self, ctx: MethodContext, query: str, chunks: list[Chunk],
             settings: BaselineSettings) -> list[tuple[int, float]]:
        index, rows = cached(ctx.store, self.name, "hybrid", lambda: self._index(ctx, chunks))
        if not rows:
            return []
        qvec = ctx.models.text_embedder.embed_queries([query])[0]
        scores = index.scores(query, qvec, retrieval_settings(ctx))
        order = sorted(range(len(rows)), key=lambda j: (-scores[j], j))
        return [(rows[j], float(scores[j])) for j in order]
