"""The canonical graph as the cross-page connection reads it: by id, never whole.

Connecting a batch of pages needs every canonical entity's *vector* (to find each new
entity's most similar ones) but only a few entities and relations themselves: the
candidates the judge sees, the entities a ``same`` verdict merges, and the relations that
touch those. ``crosspage.connect`` asks for them through the ``CanonicalGraph`` protocol:

- ``GraphInMemory`` — dicts (tests, small graphs);
- ``StoredGraph`` — the workspace store: entities read by key and kept once read,
  relations found through the incidence index (record ``kg4vd.incident``, storage.py),
  which ``index_incidence`` extends with every relation the connection writes. Memory and
  read time follow the batch and the part of the graph it touches, not the graph (reading
  the whole graph per batch grew with the corpus).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ...store.base import Store
from ...types import Entity, Relation
from .storage import INCIDENT_META, NS_INCIDENT, add_ids


class CanonicalGraph(Protocol):
    def entity_ids(self) -> Sequence[str]:
        """Every canonical entity id, in a fixed order (the candidate pool's)."""

    def entities(self, ids: Iterable[str]) -> dict[str, Entity]:
        """The entities of ``ids`` that exist, by id. Asked often, for a few ids at a time: a
        store-backed graph keeps what it has read."""

    def relations_touching(self, ids: Iterable[str]) -> dict[str, Relation]:
        """Every relation whose source or target is one of ``ids``, by id, in id order."""


class GraphInMemory:
    """``CanonicalGraph`` over dicts."""

    def __init__(self, entities: dict[str, Entity] | None = None, relations: dict[str, Relation] | None = None):
        self._entities = entities or {}
        self._relations = relations or {}
        self._ids = list(self._entities)

    def entity_ids(self) -> Sequence[str]:
        return self._ids

    def entities(self, ids: Iterable[str]) -> dict[str, Entity]:
        return {i: self._entities[i] for i in ids if i in self._entities}

    def relations_touching(self, ids: Iterable[str]) -> dict[str, Relation]:
        wanted = set(ids)
        return {
            k: self._relations[k]
            for k in sorted(self._relations)
            if self._relations[k].source in wanted or self._relations[k].target in wanted
        }


class StoredGraph:
    """``CanonicalGraph`` read from the store's ``entity_ns`` and ``relation_ns`` records by key;
    entities once read are kept (one connection batch's lifetime)."""

    def __init__(self, store: Store, entity_ns: str, relation_ns: str):
        self._store, self._entity_ns, self._relation_ns = store, entity_ns, relation_ns
        self._ids = store.record_keys(entity_ns)
        self._read: dict[str, Entity] = {}

    def entity_ids(self) -> Sequence[str]:
        return self._ids

    def entities(self, ids: Iterable[str]) -> dict[str, Entity]:
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in self._read]
        if missing:
            found = self._store.get_records(self._entity_ns, missing)
            self._read.update({k: Entity.model_validate(v) for k, v in found.items()})
        return {i: self._read[i] for i in wanted if i in self._read}

    def relations_touching(self, ids: Iterable[str]) -> dict[str, Relation]:
        wanted = set(ids)
        listed = {
            rid for value in self._store.get_records(NS_INCIDENT, wanted).values() for rid in value.get("relations", [])
        }
        ordered = sorted(listed)
        values, found = self._store.get_records(self._relation_ns, ordered), {}
        for key in ordered:  # key order, as the whole graph would be read
            if key in values:
                relation = Relation.model_validate(values[key])
                if relation.source in wanted or relation.target in wanted:  # the index is a superset
                    found[key] = relation
        return found


def index_incidence(store: Store, relations: Iterable[Relation]) -> None:
    """Add the ids of ``relations`` (just written) to their endpoints' ``kg4vd.incident`` records."""
    per_entity: dict[str, dict[str, set[str]]] = {}
    for relation in relations:
        for endpoint in (relation.source, relation.target):
            per_entity.setdefault(endpoint, {"relations": set()})["relations"].add(relation.id)
    add_ids(store, NS_INCIDENT, per_entity, owned=False)


def ensure_incidence_index(store: Store, relation_ns: str) -> None:
    """Index every relation once (a workspace built before ``kg4vd.incident``)."""
    if store.get_meta(INCIDENT_META):
        return
    with store.transaction():
        store.delete_records(NS_INCIDENT)
        per_entity: dict[str, list[str]] = {}
        for key, value in store.iter_records(relation_ns):
            for endpoint in {value["source"], value["target"]}:
                per_entity.setdefault(endpoint, []).append(key)
        store.put_records(NS_INCIDENT, [(k, {"relations": sorted(v)}, None) for k, v in sorted(per_entity.items())])
        store.set_meta(INCIDENT_META, "1")
