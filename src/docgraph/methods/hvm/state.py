"""Where HVM-GraphRAG keeps its data in the workspace store, and the per-document bookkeeping.

Namespaces (records unless noted; "owned" = owned by the document, so removing the
document removes them):

| namespace | key | value | owner |
| --- | --- | --- | --- |
| ``hvm.chunk`` | chunk id | ``{"chunk": Chunk, "context": h_i, "index": reading-order index}`` | doc |
| ``hvm.extract`` | chunk id | the chunk's ``Extraction`` (per-chunk extraction state) | doc |
| ``hvm.fact`` | fact id | a ``Fact`` of the document's holistic view M | doc |
| ``hvm.entity`` | ``<doc id>|<entity key>`` | ``EntityInfo`` (+ ``support`` = I_fac(e) once complete) | doc |
| ``hvm.conflict`` | ``<chunk id>#g<n>`` | a conflict group, its type and what was decided | doc |
| ``hvm.state`` | doc id | ``{"signature", "chunks", "done", "pages_built", "complete", …}`` | doc |
| ``hvm.concept`` | concept | ``{"name", "docs": {doc id: {"entities", "chunks"}}}`` (V_con, I_con) | global |
| ``hvm.edge`` | ``c_h\\tr\\tc_t`` | ``{"head", "relation", "tail", "docs": {doc id: count}}`` (E_con) | global |

Vectors: ``hvm.chunk`` (owned), ``hvm.concept`` and ``hvm.relation`` (relation labels,
global), ``hvm.entity`` (owned; only for the no-concept-graph ablation).

The holistic pass is sequential, so the per-chunk state is a prefix: chunks with index
< ``done`` have been folded into M, in the same transaction as the state update. A page
is built when its last chunk is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...store.base import Store
from ..retrieval.vector_index import delete_vectors
from .extraction import EntityInfo, Fact
from .holistic import HolisticView, ViewDiff

NS_CHUNK = "hvm.chunk"
NS_EXTRACT = "hvm.extract"
NS_FACT = "hvm.fact"
NS_ENTITY = "hvm.entity"
NS_CONFLICT = "hvm.conflict"
NS_STATE = "hvm.state"
NS_CONCEPT = "hvm.concept"
NS_EDGE = "hvm.edge"
VEC_CHUNK = "hvm.chunk"
VEC_CONCEPT = "hvm.concept"
VEC_RELATION = "hvm.relation"
VEC_ENTITY = "hvm.entity"
OWNED_RECORDS = (NS_CHUNK, NS_EXTRACT, NS_FACT, NS_ENTITY, NS_CONFLICT, NS_STATE)
OWNED_VECTORS = (VEC_CHUNK, VEC_ENTITY)


def entity_record_key(doc_id: str, key: str) -> str:
    return f"{doc_id}|{key}"


def edge_key(head: str, relation: str, tail: str) -> str:
    return f"{head}\t{relation}\t{tail}"


def load_view(store: Store, doc_id: str, order: Mapping[str, int] | None = None) -> HolisticView:
    """The document's holistic view as stored (M and its entity table); facts in the reading
    order of their first chunk (``order``: chunk id → index), so recency survives a restart."""
    facts = [Fact.model_validate(v) for _, v in store.iter_records(NS_FACT, doc_id=doc_id)]
    entities = [
        EntityInfo.model_validate({k: v for k, v in value.items() if k != "support"})
        for _, value in store.iter_records(NS_ENTITY, doc_id=doc_id)
    ]
    position = order or {}
    facts.sort(key=lambda f: (min((position.get(c, 1 << 30) for c in f.chunks), default=1 << 30), f.id))
    return HolisticView(facts, entities)


def save_diff(store: Store, doc_id: str, diff: ViewDiff) -> None:
    """Write what changed in the view (call inside the chunk's transaction)."""
    if diff.facts:
        store.put_records(NS_FACT, [(i, f.model_dump(), doc_id) for i, f in diff.facts.items()])
    if diff.deleted_facts:
        store.delete_records(NS_FACT, keys=sorted(diff.deleted_facts))
    if diff.entities:
        store.put_records(
            NS_ENTITY, [(entity_record_key(doc_id, k), e.model_dump(), doc_id) for k, e in diff.entities.items()]
        )
    if diff.deleted_entities:
        store.delete_records(NS_ENTITY, keys=[entity_record_key(doc_id, k) for k in sorted(diff.deleted_entities)])


def get_state(store: Store, doc_id: str) -> dict[str, Any] | None:
    return store.get_record(NS_STATE, doc_id)


def put_state(store: Store, doc_id: str, state: dict[str, Any]) -> None:
    store.put_record(NS_STATE, doc_id, state, doc_id=doc_id)


def conflict_counts(store: Store, doc_id: str, state: dict[str, Any]) -> tuple[int, int]:
    """(conflicts, unresolved ones) logged for the document: the counters its state keeps, or
    for a state written before it kept them, counted from the document's conflict records."""
    if "conflicts_logged" in state:
        return int(state["conflicts_logged"]), int(state.get("conflicts_unresolved", 0))
    rows = [row for _, row in store.iter_records(NS_CONFLICT, doc_id=doc_id)]
    return len(rows), sum(1 for row in rows if row.get("unresolved"))


def count_conflicts_once(store: Store, states: dict[str, dict[str, Any]]) -> None:
    """Give the states written before they counted their conflicts the counters (one read of
    those documents' conflict records, at a build), so ``status`` never decodes them again;
    ``states`` (doc id → state) is updated in place. A state without counters and without
    conflicts is left as it is: today's builds write the counters with the first conflict (in
    the same transaction), so such a state is the same whether it is old or new, and reading
    its conflicts costs nothing."""
    for doc_id, state in sorted(states.items()):
        if "conflicts_logged" not in state:
            total, unresolved = conflict_counts(store, doc_id, state)
            if total:
                state["conflicts_logged"], state["conflicts_unresolved"] = total, unresolved
                with store.transaction():
                    put_state(store, doc_id, state)


def log_conflicts(store: Store, doc_id: str, state: dict[str, Any], log: list[tuple[str, dict, str]]) -> None:
    """Write conflict-log entries and count them in ``state`` (the caller saves the state in
    the same transaction), so status reads two numbers instead of decoding every entry."""
    total, unresolved = conflict_counts(store, doc_id, state)
    store.put_records(NS_CONFLICT, log)
    state["conflicts_logged"] = total + len(log)
    state["conflicts_unresolved"] = unresolved + sum(1 for _, row, _ in log if row.get("unresolved"))


def reset_document(store: Store, doc_id: str, keep_extraction: bool) -> None:
    """Forget the document's holistic pass (and its extractions unless ``keep_extraction``);
    chunks and chunk vectors stay. The caller removes its concept-graph contribution first."""
    with store.transaction():
        for namespace in (NS_FACT, NS_ENTITY, NS_CONFLICT, NS_STATE):
            store.delete_records(namespace, doc_id=doc_id)
        if not keep_extraction:
            store.delete_records(NS_EXTRACT, doc_id=doc_id)
        delete_vectors(store, VEC_ENTITY, doc_id=doc_id)


def drop_document(store: Store, doc_id: str) -> None:
    """Delete every owned record and vector of the document."""
    with store.transaction():
        for namespace in OWNED_RECORDS:
            store.delete_records(namespace, doc_id=doc_id)
        for namespace in OWNED_VECTORS:
            delete_vectors(store, namespace, doc_id=doc_id)
