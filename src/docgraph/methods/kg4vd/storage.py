"""What KG4VD keeps in the workspace store: namespaces, keys, record formats and loaders.

This is the contract between the build (this package's build side) and the query side.

Records (``Store.put_record``):
- ``kg4vd.pagegraph`` — key ``"<doc_id>:<page>"``, owner ``doc_id``: the final graph of one
  page as ``StoredPageGraph`` (page-local ids ``e1``/``r1``; entities and relations as
  ``Entity``/``Relation`` dumps with one mention on that page), the rounds it took, the
  feedback of each round, the rejected operations and the model usage. Written as soon
  as the page is final; its presence means "this page is extracted".
- ``kg4vd.connected`` — key ``"<doc_id>:<page>"``, owner ``doc_id``: ``{"entities": n,
  "relations": m}`` once the page's entities are part of the canonical graph (internal).
- ``kg4vd.entity`` — key entity id, owner None: the canonical ``Entity.model_dump()``
  after cross-page merging; ``mentions`` lists every grounding (doc, page, component ids),
  ``aliases`` the other names merged into it.
- ``kg4vd.relation`` — key relation id, owner None: ``Relation.model_dump()``; source and
  target are canonical entity ids; ``cross_page=True`` for the judge's ``related`` edges.
- ``kg4vd.docgraph`` — key and owner ``doc_id``: ``{"entities": [...], "relations": [...]}``,
  the ids of the canonical entities and relations that have (or had) a mention in the
  document — a superset, so removing a document reads those records and not the whole
  graph. Complete once meta ``kg4vd.docgraph_indexed`` is set (a workspace built before
  it is indexed by one full read at its next build).
- ``kg4vd.incident`` — key entity id, owner None: ``{"relations": [...]}``, the ids of the
  relations written with that entity as source or target — a superset (a relation deleted
  or re-pointed since stays listed, readers check the endpoints), so connecting pages reads
  the relations around the entities it merges and not the whole graph
  (``canonical.StoredGraph``). Complete once meta ``kg4vd.incident_indexed`` is set.

Vectors (``methods.retrieval.vector_index``), all in the *image embedder's* space, so a query is
embedded once with ``embed_query``:
- ``kg4vd.page`` — key ``"<doc_id>:<page>"``, owner ``doc_id``: the page image with its text
  (offline, where images have no embedder, the mean of the page's chunk vectors);
- ``kg4vd.chunk`` — key chunk id, owner ``doc_id``: the chunk's indexed text (section
  line + text), the structural evidence layer's units (record ``kg4vd.chunk`` holds the
  ``Chunk`` dump);
- ``kg4vd.entity`` — key entity id: "name, type, description" (visual entities: with the
  crop of their cited components);
- ``kg4vd.relation`` — key relation id: "source label target: description".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ...store.base import Store
from ...types import Entity, Mention, Relation, Usage
from ..retrieval.page_vectors import page_key, parse_page_key  # noqa: F401  (re-exported)
from .patch import PageGraph

NS_PAGEGRAPH = "kg4vd.pagegraph"
NS_CONNECTED = "kg4vd.connected"
NS_ENTITY = "kg4vd.entity"
NS_RELATION = "kg4vd.relation"
NS_CHUNK = "kg4vd.chunk"
NS_DOC_GRAPH = "kg4vd.docgraph"
DOC_GRAPH_META = "kg4vd.docgraph_indexed"
NS_INCIDENT = "kg4vd.incident"
INCIDENT_META = "kg4vd.incident_indexed"
GRAPH_SIZE_META = "kg4vd.graph_size"  # entity/relation counts as the last connection batch left them (status;
# cleared by removal and reset)
CONNECTION_RECORDS = (NS_CONNECTED, NS_ENTITY, NS_RELATION, NS_DOC_GRAPH, NS_INCIDENT)  # written by the connection,
# cleared together
VEC_PAGE = "kg4vd.page"
VEC_CHUNK = "kg4vd.chunk"
LAYER = "kg4vd.layer"  # memo name of the in-memory structural layer (bumped when chunks change)
VEC_ENTITY = "kg4vd.entity"
VEC_RELATION = "kg4vd.relation"


class StoredPageGraph(BaseModel):
    """The ``kg4vd.pagegraph`` record of one page."""

    doc_id: str
    page: int
    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    rounds: int = 0
    stop_reason: str = ""
    strategy: str = ""  # "model", "offline" or "offline-fallback" (kg4vd.on_model_error = "offline")
    fallback_error: str = Field("", description="why the model strategy gave up on an offline-fallback page")
    feedback: list[dict[str, Any]] = Field(default_factory=list, description="the feedback of each round")
    rejected: list[dict[str, Any]] = Field(default_factory=list, description="rejected operations with round and rule")
    usage: Usage = Field(default_factory=Usage)

    @property
    def key(self) -> str:
        return page_key(self.doc_id, self.page)

    def instance_id(self, local_id: str) -> str:
        """The workspace-wide id of a page-local entity or relation: ``"<doc>:<page>:<local>"``."""
        return f"{self.doc_id}:{self.page}:{local_id}"

    @classmethod
    def from_graph(cls, doc_id: str, page: int, graph: PageGraph, **fields: Any) -> StoredPageGraph:
        def mention(component_ids: list[str]) -> list[Mention]:
            return [Mention(doc_id=doc_id, page=page, component_ids=list(component_ids))]

        entities = [
            Entity(
                id=n.id,
                name=n.name,
                type=n.type,
                modality=n.modality,
                description=n.description,
                mentions=mention(n.component_ids),
            )
            for n in graph.nodes
        ]
        relations = [
            Relation(
                id=e.id,
                source=e.source,
                target=e.target,
                label=e.label,
                description=e.description,
                mentions=mention(e.component_ids),
            )
            for e in graph.edges
        ]
        return cls(doc_id=doc_id, page=page, entities=entities, relations=relations, **fields)


def load_page_graph(store: Store, doc_id: str, page: int) -> StoredPageGraph | None:
    value = store.get_record(NS_PAGEGRAPH, page_key(doc_id, page))
    return None if value is None else StoredPageGraph.model_validate(value)


def iter_page_graphs(store: Store, doc_id: str | None = None) -> Iterable[StoredPageGraph]:
    for _, value in store.iter_records(NS_PAGEGRAPH, doc_id=doc_id):
        yield StoredPageGraph.model_validate(value)


def load_entities(store: Store) -> dict[str, Entity]:
    """Every canonical entity by id."""
    return {key: Entity.model_validate(value) for key, value in store.iter_records(NS_ENTITY)}


def load_relations(store: Store) -> dict[str, Relation]:
    """Every canonical relation by id."""
    return {key: Relation.model_validate(value) for key, value in store.iter_records(NS_RELATION)}


def add_ids(store: Store, namespace: str, additions: dict[str, dict[str, set[str]]], owned: bool) -> None:
    """Union the id sets of ``additions`` (record key → field → ids) into ``namespace``'s
    records, each field a sorted list; a record's owner is its key when ``owned``."""
    known = store.get_records(namespace, additions)
    rows = []
    for key, fields in sorted(additions.items()):
        old = known.get(key) or {}
        rows.append(
            (key, {name: sorted(ids | set(old.get(name, []))) for name, ids in fields.items()}, key if owned else None)
        )
    store.put_records(namespace, rows)


def index_document_graph(store: Store, entities: Iterable[Entity], relations: Iterable[Relation]) -> None:
    """Add the ids of ``entities`` and ``relations`` (just written) to the ``kg4vd.docgraph``
    record of every document they mention."""
    per_doc: dict[str, dict[str, set[str]]] = {}
    for items, name in ((entities, "entities"), (relations, "relations")):
        for item in items:
            for mention in item.mentions:
                per_doc.setdefault(mention.doc_id, {"entities": set(), "relations": set()})[name].add(item.id)
    add_ids(store, NS_DOC_GRAPH, per_doc, owned=True)


def ensure_document_index(store: Store) -> None:
    """Index every document's graph once (a workspace built before ``kg4vd.docgraph``)."""
    if store.get_meta(DOC_GRAPH_META):
        return
    with store.transaction():
        if store.count_records(NS_ENTITY) or store.count_records(NS_RELATION):
            store.delete_records(NS_DOC_GRAPH)
            index_document_graph(store, load_entities(store).values(), load_relations(store).values())
        store.set_meta(DOC_GRAPH_META, "1")


def document_graph(store: Store, doc_id: str) -> tuple[dict[str, Entity], dict[str, Relation]]:
    """The canonical entities and relations that may mention ``doc_id``: those its
    ``kg4vd.docgraph`` record lists, or, before the index is complete, every one."""
    if not store.get_meta(DOC_GRAPH_META):
        return load_entities(store), load_relations(store)
    listed = store.get_record(NS_DOC_GRAPH, doc_id) or {}
    entities = {
        k: Entity.model_validate(v) for k, v in store.get_records(NS_ENTITY, listed.get("entities", [])).items()
    }
    relations = {
        k: Relation.model_validate(v) for k, v in store.get_records(NS_RELATION, listed.get("relations", [])).items()
    }
    return entities, relations


def entity_text(entity: Entity, description: bool = True) -> str:
    """The text the entity index embeds: ``"name, type, description"`` (without the
    description when ``description`` is false: ``index.embeds_descriptions``)."""
    return entity_text_of(entity.name, entity.type, entity.description if description else "")


def entity_text_of(name: str, type_: str, description: str = "") -> str:
    """:func:`entity_text` from the fields of an entity (its record, or a model)."""
    return ", ".join(part for part in (name, type_.replace("_", " "), description) if part)


def relation_text(relation: Relation, source_name: str, target_name: str, description: bool = True) -> str:
    """The text the relation index embeds: ``"source label target: description"`` (the head
    alone when ``description`` is false)."""
    head = f"{source_name} {relation.label.replace('_', ' ')} {target_name}"
    return f"{head}: {relation.description}" if relation.description and description else head


def embed_query(models: Any, text: str) -> np.ndarray:
    """A query vector in the space of every KG4VD vector namespace (the image embedder's)."""
    return models.image_embedder.embed_queries([text])[0]
