"""Step 1, page anchors: the query vector, the structural evidence layer and the flat page
ranking whose best pages anchor the graph stages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ....config import RetrievalSettings
from ....documents.page_numbers import stored_printed_numbers
from ....documents.parts import stored_parts
from ....errors import EmbeddingMismatchError
from ....types import Chunk
from ...memo import cached
from ...retrieval.evidence_layer import EvidenceLayer, PageRanking, layer_shape, retrieval_settings
from ...retrieval.routing import document_router
from ...retrieval.vector_index import VectorIndex, load_index
from ..storage import LAYER, NS_CHUNK, VEC_CHUNK, embed_query, page_key, parse_page_key

if TYPE_CHECKING:
    from ...base import MethodContext


def query_vector(ctx: MethodContext, query: str, indexes: Sequence[VectorIndex]) -> np.ndarray:
    """The query in the image embedder's space, shared by every KG4VD vector namespace
    (``storage.embed_query``); a dimension that does not match the stored vectors means the
    workspace was built with another embedder."""
    vector = np.asarray(embed_query(ctx.models, query), dtype=np.float32).reshape(-1)
    for index in indexes:
        if len(index) and index.matrix.shape[1] != vector.shape[0]:
            raise EmbeddingMismatchError(
                f"the KG4VD vectors have dimension {index.matrix.shape[1]} but the configured image embedder "
                f"{ctx.models.image_embedder.model} embeds queries in dimension {vector.shape[0]}; configure the "
                "embedder that built the workspace or rebuild it: docgraph build --method kg4vd"
            )
    return vector


def load_layer(ctx: MethodContext, page_index: VectorIndex) -> EvidenceLayer:
    """The structural evidence layer of the workspace's KG4VD chunks (cached until chunks
    change or the layer's settings do); pages with a page vector but no chunk are in it too."""
    settings = retrieval_settings(ctx)
    shape = layer_shape(settings)

    def load() -> EvidenceLayer:
        vectors = load_index(ctx.store, VEC_CHUNK)
        records = dict(ctx.store.iter_records(NS_CHUNK))
        keys = [k for k in vectors.keys if k in records]
        chunks = [Chunk.model_validate(records[k]) for k in keys]
        matrix = vectors.matrix[[vectors.position[k] for k in keys]] if keys else np.zeros((0, 1), np.float32)
        extra = [parse_page_key(k) for k in page_index.keys]
        printed = stored_printed_numbers(ctx.store, {c.doc_id for c in chunks} | {doc for doc, _ in extra})
        parts = stored_parts(ctx.store, printed.keys(), printed)
        return EvidenceLayer.build(chunks, matrix, settings, extra, printed, parts)

    return cached(ctx.store, LAYER, f"layer:{shape}", load, persist=True, depends_on=settings.lexicons)


def page_dense_scores(
    ctx: MethodContext, layer: EvidenceLayer, page_index: VectorIndex, qvec: np.ndarray
) -> np.ndarray | None:
    """Page-vector cosines over the layer's pages when they add a signal: a real image
    embedder's page vectors, or a workspace without chunks; None offline (the page vectors
    are then means of the chunk vectors the layer already scores)."""
    if layer.chunks and getattr(ctx.models.image_embedder, "is_text_fallback", False):
        return None
    scores = page_index.scores(qvec)
    rows = [page_index.position.get(page_key(d, n)) for d, n in layer.pages]
    return np.array([0.0 if row is None else scores[row] for row in rows], dtype=np.float64)


def flat_pages(
    ctx: MethodContext,
    layer: EvidenceLayer,
    page_index: VectorIndex,
    query: str,
    qvec: np.ndarray,
    settings: RetrievalSettings,
    scope: frozenset[str] | None = None,
) -> PageRanking:
    """Every page's flat score (``EvidenceLayer.flat``: hybrid chunks, labels, lexicon,
    element intent, a real page vector when there is one), routed by the documents the
    question names in a library, restricted to the documents of ``scope`` when given; its best
    pages are the anchors."""
    return layer.flat(
        query, qvec, settings, page_dense_scores(ctx, layer, page_index, qvec), document_router(ctx.store), scope
    )
