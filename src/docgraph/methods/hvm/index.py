"""HVM's query-time index: chunks, concepts, relation labels and I_con as arrays, with the
structural evidence layer over the chunks and the second hop's entity bridges (loaded from
the store once, then cached until the method's data or the layer's settings change)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from ...documents.page_numbers import stored_printed_numbers
from ...documents.parts import stored_parts
from ...graph.bridges import EntityBridges
from ...models.bm25 import BM25
from ...store.base import Store
from ...types import Chunk
from ..base import MethodContext
from ..memo import cached
from ..retrieval.evidence_layer import EvidenceLayer, PageRanking, layer_shape, retrieval_settings
from ..retrieval.vector_index import VectorIndex, load_index
from .state import NS_CHUNK, NS_CONCEPT, NS_EDGE, NS_ENTITY, VEC_CHUNK, VEC_CONCEPT, VEC_ENTITY, VEC_RELATION

METHOD = "hvm"
MODALITIES = ("text", "table", "image")


@dataclass
class HVMIndex:
    """Chunks, concepts, relation labels and I_con as arrays (rows aligned with their vectors)."""

    chunks: list[Chunk]
    chunk_vectors: VectorIndex
    modality: np.ndarray  # per chunk row: index into MODALITIES
    concept_vectors: VectorIndex
    concept_info: list[dict]  # per concept row: {"name", "entities", "chunks"}
    icon: list[np.ndarray]  # per concept row: chunk rows of I_con(c)
    relation_vectors: VectorIndex
    edges: dict[str, list[tuple[int, int]]]  # relation label → (head row, tail row) of E_con
    layer: EvidenceLayer  # structural layer over ``chunks`` (same settings as built)
    bridges: EntityBridges  # entities on the layer's pages (second hop, graph.bridges)
    concept_bm25: BM25  # BM25 over concept names (hybrid concept anchors)
    entity_vectors: VectorIndex | None = None
    entity_rows: list[dict] = field(default_factory=list)
    entity_support: list[np.ndarray] = field(default_factory=list)

    def chunk_scores(self, ranking: PageRanking) -> np.ndarray:
        """The ranking's fused chunk scores in this index's chunk order."""
        out = np.zeros(len(self.chunks))
        out[self.layer.source_rows] = ranking.chunk_scores
        return out


def _rows(positions: Mapping[str, int], keys: list[str]) -> np.ndarray:
    return np.fromiter((positions[k] for k in keys if k in positions), dtype=np.int64)


def load_hvm_index(ctx: MethodContext) -> HVMIndex:
    """Read the index from the store (use ``hvm_index`` for the cached one)."""
    store = ctx.store
    ctx.models.check_embedding_model(METHOD)
    chunk_vectors = load_index(store, VEC_CHUNK)
    records = {k: v for k, v in store.iter_records(NS_CHUNK)}
    keep = [i for i, k in enumerate(chunk_vectors.keys) if k in records]
    if len(keep) < len(chunk_vectors.keys):  # vectors of chunks whose records are gone: leave them out
        chunk_vectors = VectorIndex(
            keys=[chunk_vectors.keys[i] for i in keep],
            matrix=chunk_vectors.matrix[keep],
            position={chunk_vectors.keys[i]: j for j, i in enumerate(keep)},
        )
    chunks = [Chunk.model_validate(records[k]["chunk"]) for k in chunk_vectors.keys]
    modality = np.array([MODALITIES.index(c.modality) for c in chunks], dtype=np.int8)
    concept_vectors = load_index(store, VEC_CONCEPT)
    rows = dict(store.iter_records(NS_CONCEPT))
    info, icon = [], []
    for key in concept_vectors.keys:
        docs = (rows.get(key) or {}).get("docs", {})
        chunk_ids = [c for part in docs.values() for c in part["chunks"]]
        info.append({"name": key, "entities": sum(p["entities"] for p in docs.values()), "chunks": len(chunk_ids)})
        icon.append(np.unique(_rows(chunk_vectors.position, chunk_ids)))
    edges: dict[str, list[tuple[int, int]]] = {}
    for _, row in store.iter_records(NS_EDGE):
        head, tail = concept_vectors.position.get(row["head"]), concept_vectors.position.get(row["tail"])
        if head is not None and tail is not None:
            edges.setdefault(row["relation"], []).append((head, tail))
    settings = retrieval_settings(ctx)
    printed = stored_printed_numbers(store, {c.doc_id for c in chunks})
    layer = EvidenceLayer.build(
        chunks, chunk_vectors.matrix, settings, printed=printed, parts=stored_parts(store, printed.keys(), printed)
    )
    index = HVMIndex(
        chunks=chunks,
        chunk_vectors=chunk_vectors,
        modality=modality,
        concept_vectors=concept_vectors,
        concept_info=info,
        icon=icon,
        relation_vectors=load_index(store, VEC_RELATION),
        edges=edges,
        layer=layer,
        bridges=layer.bridge_mentions(entity_mentions(store, chunks, chunk_vectors)),
        concept_bm25=BM25(list(concept_vectors.keys)),
    )
    entity_vectors = load_index(store, VEC_ENTITY)
    if len(entity_vectors):
        entities = dict(store.iter_records(NS_ENTITY))
        index.entity_vectors = entity_vectors
        index.entity_rows = [entities.get(k, {"name": k, "concept": "", "support": []}) for k in entity_vectors.keys]
        index.entity_support = [
            np.unique(_rows(chunk_vectors.position, r.get("support", []))) for r in index.entity_rows
        ]
    return index


def entity_mentions(store: Store, chunks: list[Chunk], chunk_vectors: VectorIndex) -> Iterator[tuple[str, int, str]]:
    """``(doc_id, page, name)`` of every extracted entity on the pages of the chunks that
    support it (the entity level of the graph, below its concepts): the second hop's bridges."""
    for _, row in store.iter_records(NS_ENTITY):
        for r in _rows(chunk_vectors.position, row.get("support", [])):
            yield chunks[int(r)].doc_id, chunks[int(r)].page, str(row.get("name", ""))


def hvm_index(ctx: MethodContext) -> HVMIndex:
    """The cached in-memory index (reloaded when the method's data or the layer's settings change)."""
    settings = retrieval_settings(ctx)
    shape = layer_shape(settings)
    return cached(
        ctx.store, METHOD, f"index:{shape}", lambda: load_hvm_index(ctx), persist=True, depends_on=settings.lexicons
    )
