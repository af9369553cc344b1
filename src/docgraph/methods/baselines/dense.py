"""``dense``: NaiveRAG — text chunks embedded with the text embedder, ranked by cosine to the query.

Vectors live in the store namespace ``dense.chunk`` (one row per chunk, owned by its
document); a row is ``methods.retrieval.chunk_vectors``' chunk vector — the chunk's text plus its
weighted section-path elements (title, headings), so a chunk keeps the heading it sits
under while its text alone keys the embedding cache.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...types import Chunk, Document
from ..base import MethodContext, register
from ..retrieval.chunk_vectors import vector_model
from ..retrieval.vector_index import delete_vectors, load_index, write_vectors
from .common import ChunkBaseline, cached, chunk_positions, embed_chunks, ranked_chunks
from .settings import BaselineSettings

VECTOR_NAMESPACE = "dense.chunk"


@register("dense")
class DenseBaseline(ChunkBaseline):
    """Chunk vectors under ``vector_namespace``; subclasses (``hybrid``) rank them otherwise."""

    name = "dense"
    label = "Dense retrieval (baseline)"
    order = 11
    vector_namespace = VECTOR_NAMESPACE

    def chunk_vector_namespaces(self) -> tuple[str, ...]:
        return (self.vector_namespace,)

    def index_chunks(
        self, ctx: MethodContext, doc: Document, chunks: list[Chunk], settings: BaselineSettings
    ) -> dict[str, Any]:
        if not chunks:
            return {"vectors": 0}
        embedder = ctx.models.text_embedder
        matrix = embed_chunks(ctx, chunks)
        write_vectors(
            ctx.store,
            self.vector_namespace,
            [c.id for c in chunks],
            matrix,
            vector_model(embedder.model, ctx.settings.models.embedding),
            [doc.id] * len(chunks),
        )
        return {"vectors": len(chunks)}

    def drop_document(self, ctx: MethodContext, doc_id: str) -> None:
        super().drop_document(ctx, doc_id)
        delete_vectors(ctx.store, self.vector_namespace, doc_id=doc_id)

    def rank(
        self, ctx: MethodContext, query: str, chunks: list[Chunk], settings: BaselineSettings
    ) -> Iterator[tuple[int, float]]:
        index = load_index(ctx.store, self.vector_namespace)
        if not len(index):
            return iter(())
        # the chunk position of every index row (-1: a row of no current chunk), until the index changes
        position = cached(ctx.store, self.name, "index rows", lambda: chunk_positions(index.keys, chunks))
        q = ctx.models.text_embedder.embed_queries([query])[0]
        return ranked_chunks(index.scores(q), position)
