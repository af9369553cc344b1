"""The concept graph (V_con, E_con) and the evidence index I_con, kept across documents.

METHODS.md, HVM build step 4: V_con = {φ(e)}, E_con = {(φ(e_h), r, φ(e_t)) for facts in
M}, and I_con(c) = ∪ I_fac(e) over the entities of concept c. Each document's holistic
view contributes its part (``contribution``); the global rows (``hvm.concept``,
``hvm.edge``) keep those parts per document, so adding a document only touches the
concepts and edges it has, and removing one drops its parts and deletes rows (and their
vectors) nobody else supports. Concept vectors embed the concept name, relation vectors
the relation label (``located_in`` → "located in"); ``embed_missing`` adds the ones a
change introduced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...models.base import TextEmbedder
from ...models.usage import embedding_stage
from ...store.base import Store
from ..building.embed_blocks import embed_in_blocks
from ..retrieval.vector_index import delete_vectors, load_index, write_vectors
from .holistic import HolisticView
from .state import NS_CONCEPT, NS_EDGE, VEC_CONCEPT, VEC_RELATION, edge_key


@dataclass
class Contribution:
    """One document's part of the concept graph."""

    concepts: dict[str, dict] = field(default_factory=dict)  # concept → {"entities": n, "chunks": [...]}
    edges: dict[tuple[str, str, str], int] = field(default_factory=dict)


def contribution(view: HolisticView, order: Mapping[str, int]) -> Contribution:
    """The concepts, I_con chunks (reading order) and schema edges of one document's view."""
    out = Contribution()
    live = view.live_entities()
    chunk_sets: dict[str, set[str]] = {}
    for key, info in live.items():
        part = out.concepts.setdefault(info.concept, {"entities": 0, "chunks": []})
        part["entities"] += 1
        chunk_sets.setdefault(info.concept, set()).update(view.support(key))
    for concept, chunks in chunk_sets.items():
        out.concepts[concept]["chunks"] = sorted(chunks, key=lambda c: (order.get(c, 1 << 30), c))
    for fact in view.facts.values():
        head, tail = live.get(fact.head), live.get(fact.tail)
        if head is not None and tail is not None:
            edge = (head.concept, fact.relation, tail.concept)
            out.edges[edge] = out.edges.get(edge, 0) + 1
    return out


def add_contribution(store: Store, doc_id: str, part: Contribution) -> None:
    """Merge a document's part into the global rows (replacing an older part of the same document)."""
    with store.transaction():
        rows = []
        known = store.get_records(NS_CONCEPT, part.concepts)
        for concept, data in part.concepts.items():
            row = known.get(concept) or {"name": concept, "docs": {}}
            row["docs"][doc_id] = data
            rows.append((concept, row, None))
        store.put_records(NS_CONCEPT, rows)
        rows = []
        known = store.get_records(NS_EDGE, [edge_key(*edge) for edge in part.edges])
        for (head, relation, tail), count in part.edges.items():
            key = edge_key(head, relation, tail)
            row = known.get(key) or {"head": head, "relation": relation, "tail": tail, "docs": {}}
            row["docs"][doc_id] = count
            rows.append((key, row, None))
        store.put_records(NS_EDGE, rows)


def remove_contribution(store: Store, doc_id: str) -> tuple[int, int]:
    """Drop a document's part; rows left without documents go, with their vectors.
    Returns (concepts removed, edges removed)."""
    with store.transaction():
        dead_concepts = _drop_doc(store, NS_CONCEPT, doc_id)
        dead_edges = _drop_doc(store, NS_EDGE, doc_id)
        if dead_concepts:
            delete_vectors(store, VEC_CONCEPT, keys=dead_concepts)
        if dead_edges:
            used = {row["relation"] for _, row in store.iter_records(NS_EDGE)}
            stale = [label for label in load_index(store, VEC_RELATION).keys if label not in used]
            if stale:
                delete_vectors(store, VEC_RELATION, keys=stale)
    return len(dead_concepts), len(dead_edges)


def _drop_doc(store: Store, namespace: str, doc_id: str) -> list[str]:
    changed: list[tuple[str, Any]] = []
    dead: list[tuple[str, Any]] = []
    for key, row in store.iter_records(namespace):
        if doc_id in row["docs"]:
            del row["docs"][doc_id]
            (changed if row["docs"] else dead).append((key, row))
    if changed:
        store.put_records(namespace, [(k, row, None) for k, row in changed])
    if dead:
        store.delete_records(namespace, keys=[k for k, _ in dead])
    return [k for k, _ in dead]


def graph_documents(store: Store) -> set[str]:
    """Documents that have a part in the concept graph."""
    return {doc for _, row in store.iter_records(NS_CONCEPT) for doc in row["docs"]}


def embed_missing(
    store: Store, embedder: TextEmbedder, on_block: Callable[[str, int, int], None] | None = None
) -> tuple[int, int]:
    """Embed concepts and relation labels that have no vector yet, one ``embed_blocks``
    block per call (``on_block(kind, done, total)`` after each, for a progress line);
    returns (concepts, relations) embedded."""
    counts = []
    for vec_ns, keys, text_of in (
        (VEC_CONCEPT, store.record_keys(NS_CONCEPT), lambda k: k),
        (
            VEC_RELATION,
            sorted({row["relation"] for _, row in store.iter_records(NS_EDGE)}),
            lambda k: k.replace("_", " "),
        ),
    ):
        have = set(load_index(store, vec_ns).keys)
        missing = [k for k in keys if k not in have]
        if missing:
            kind = f"{vec_ns.rsplit('.', 1)[-1]}s"
            shown = (lambda done, total, kind=kind: on_block(kind, done, total)) if on_block else None
            with embedding_stage(f"hvm {kind}"):
                matrix = embed_in_blocks(embedder.embed_passages, [text_of(k) for k in missing], shown)
            write_vectors(store, vec_ns, missing, matrix, embedder.model)
        counts.append(len(missing))
    return counts[0], counts[1]
