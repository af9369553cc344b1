"""HVM-GraphRAG's entity graph as people browse it: the entities and facts of its holistic views.

Node: an entity of one document (``hvm.entity``; id ``<doc id>|<entity key>``, type its
concept φ(e)), grounded on the pages and components of the chunks it was extracted from.
Edge: a fact of M (``hvm.fact``) between two of those entities, labelled by its relation
(a qualifier, and an unsettled conflict, go in its description). Made from the records on
first use and kept until the next build or removal bumps HVM's version (``memo.cached``);
the objects are held in memory (``entity_graph.MemoryEntityGraph``), so reading one never
meets a record a build removed meanwhile.
"""

from __future__ import annotations

from typing import Any

from ...store.base import Store
from ...types import Entity, Mention, Relation
from ..entity_graph import MemoryEntityGraph
from ..memo import cached
from .extraction import EntityInfo, Fact
from .state import NS_CHUNK, NS_ENTITY, NS_FACT, NS_STATE, entity_record_key

METHOD = "hvm"


def mentions_of(chunk_ids: list[str], chunks: dict[str, dict[str, Any]]) -> list[Mention]:
    """Where chunks lie: one mention per page, with the components of those chunks on it."""
    pages: dict[tuple[str, int], list[str]] = {}
    for chunk_id in chunk_ids:
        chunk = chunks.get(chunk_id)
        if chunk is not None:
            cited = pages.setdefault((chunk["doc_id"], int(chunk["page"])), [])
            cited += [c for c in chunk.get("component_ids", ()) if c not in cited]
    return [Mention(doc_id=d, page=p, component_ids=c) for (d, p), c in sorted(pages.items())]


def entity_of(record_key: str, value: dict[str, Any], chunks: dict[str, dict[str, Any]]) -> Entity:
    info = EntityInfo.model_validate({k: v for k, v in value.items() if k != "support"})
    return Entity(
        id=record_key,
        name=info.name,
        type=info.concept,
        description=info.description,
        mentions=mentions_of(info.mentions, chunks),
    )


def relation_of(doc_id: str, fact: Fact, chunks: dict[str, dict[str, Any]]) -> Relation:
    notes = [fact.qualifier, "unresolved conflict" if fact.status == "unresolved" else ""]
    return Relation(
        id=fact.id,
        source=entity_record_key(doc_id, fact.head),
        target=entity_record_key(doc_id, fact.tail),
        label=fact.relation,
        description="; ".join(n for n in notes if n),
        mentions=mentions_of(fact.chunks, chunks),
    )


def load_graph(store: Store) -> MemoryEntityGraph:
    """The graph of every document's holistic view, as stored now (no caching)."""
    chunks = {key: value["chunk"] for key, value in store.iter_records(NS_CHUNK)}
    entities = [entity_of(key, value, chunks) for key, value in store.iter_records(NS_ENTITY)]
    relations = [
        relation_of(doc_id, Fact.model_validate(value), chunks)
        for doc_id, _ in store.iter_records(NS_STATE)
        for _, value in store.iter_records(NS_FACT, doc_id=doc_id)
    ]
    return MemoryEntityGraph(sorted(entities, key=lambda e: e.id), relations)


def graph_view(store: Store) -> MemoryEntityGraph:
    """:func:`load_graph`, made once per HVM index version."""
    graph: MemoryEntityGraph = cached(store, METHOD, "graph_view", lambda: load_graph(store))
    return graph
