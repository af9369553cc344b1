"""The stored KG4VD graph kept in step with the workspace: a document's part removed, the
whole graph reset, and the build status read cheaply while builds run."""

from __future__ import annotations

import json
from typing import Any

from ..base import MethodContext
from ..memo import bump_version, cached
from ..retrieval.vector_index import delete_vectors
from .build_config import CONFIG_META
from .storage import (
    CONNECTION_RECORDS,
    GRAPH_SIZE_META,
    LAYER,
    NS_CHUNK,
    NS_CONNECTED,
    NS_DOC_GRAPH,
    NS_ENTITY,
    NS_INCIDENT,
    NS_PAGEGRAPH,
    NS_RELATION,
    VEC_CHUNK,
    VEC_ENTITY,
    VEC_PAGE,
    VEC_RELATION,
    document_graph,
)


def remove_document(ctx: MethodContext, doc_id: str) -> None:
    """Remove what KG4VD derived from one document (inside the caller's transaction, if any)."""
    store = ctx.store
    with store.transaction():
        entities, relations = document_graph(store, doc_id)
        kept_entities, gone_entities = {}, set()
        for entity in entities.values():
            mentions = [m for m in entity.mentions if m.doc_id != doc_id]
            if len(mentions) == len(entity.mentions):
                continue
            if mentions:
                kept_entities[entity.id] = entity.model_copy(update={"mentions": mentions})
            else:
                gone_entities.add(entity.id)
        kept_relations, gone_relations = {}, set()
        for rel in relations.values():
            mentions = [m for m in rel.mentions if m.doc_id != doc_id]
            if rel.source in gone_entities or rel.target in gone_entities or not mentions:
                gone_relations.add(rel.id)
            elif len(mentions) != len(rel.mentions):
                kept_relations[rel.id] = rel.model_copy(update={"mentions": mentions})
        store.put_records(NS_ENTITY, [(k, e.model_dump(mode="json"), None) for k, e in kept_entities.items()])
        store.put_records(NS_RELATION, [(k, r.model_dump(mode="json"), None) for k, r in kept_relations.items()])
        if gone_entities:
            store.delete_records(NS_ENTITY, keys=sorted(gone_entities))
            store.delete_records(NS_INCIDENT, keys=sorted(gone_entities))
            delete_vectors(store, VEC_ENTITY, keys=sorted(gone_entities))
        if gone_relations:
            store.delete_records(NS_RELATION, keys=sorted(gone_relations))
            delete_vectors(store, VEC_RELATION, keys=sorted(gone_relations))
        for namespace in (NS_PAGEGRAPH, NS_CONNECTED, NS_CHUNK, NS_DOC_GRAPH):
            store.delete_records(namespace, doc_id=doc_id)
        delete_vectors(store, VEC_PAGE, doc_id=doc_id)
        delete_vectors(store, VEC_CHUNK, doc_id=doc_id)
        bump_version(store, LAYER)
        store.set_meta(GRAPH_SIZE_META, "")


def reset_graph(ctx: MethodContext) -> int:
    """Delete every KG4VD record and vector (the model cache stays); returns the page graphs removed."""
    with ctx.store.transaction():
        removed = ctx.store.delete_records(NS_PAGEGRAPH)
        for namespace in (*CONNECTION_RECORDS, NS_CHUNK):
            ctx.store.delete_records(namespace)
        for namespace in (VEC_PAGE, VEC_ENTITY, VEC_RELATION, VEC_CHUNK):
            delete_vectors(ctx.store, namespace)
        bump_version(ctx.store, LAYER)
        ctx.store.set_meta(CONFIG_META, "")
        ctx.store.set_meta(GRAPH_SIZE_META, "")
    return removed


def record_graph_size(store) -> None:
    """Inside a connection batch's transaction: the graph's entity and relation counts as it
    leaves them, with the connected-page count they hold for (``GRAPH_SIZE_META``). The
    writer counts its own rows once per batch, so that ``status`` need not count tens of
    thousands of rows the batch has just committed (at 10,000 pages on PostgreSQL the first
    count after each batch fell in the polled status call)."""
    store.set_meta(
        GRAPH_SIZE_META,
        json.dumps(
            {
                "connected": store.count_records(NS_CONNECTED),
                "entities": store.count_records(NS_ENTITY),
                "relations": store.count_records(NS_RELATION),
            }
        ),
    )


def _graph_size(store, connected: int) -> tuple[int, int]:
    """(entities, relations): the last batch's record while it holds — the same connected
    pages; only a connection batch adds connected pages, and removal and reset, which take
    them away, clear it — else counted once per change (``memo.cached``)."""
    recorded = json.loads(store.get_meta(GRAPH_SIZE_META) or "{}")
    if recorded.get("connected") == connected:
        return int(recorded["entities"]), int(recorded["relations"])
    return cached(
        store,
        LAYER,
        f"graph-size:{connected}",
        lambda: (store.count_records(NS_ENTITY), store.count_records(NS_RELATION)),
    )


def status(ctx: MethodContext) -> dict[str, Any]:
    """Build status: pages extracted/connected of the ready documents, entities, relations.

    Polled every second by the web page while builds run, so it reads counts, not keys:
    page graphs are written for pages of ready documents only and go with their document,
    so their count is the pages extracted; the graph's size is what the last connection
    batch recorded (``_graph_size``)."""
    total = sum(d.page_count for d in ctx.store.list_documents() if d.status == "ready")
    built = min(ctx.store.count_records(NS_PAGEGRAPH), total)
    connected = ctx.store.count_records(NS_CONNECTED)
    entities, relations = _graph_size(ctx.store, connected)
    return {
        "built_pages": built,
        "total_pages": total,
        "connected_pages": connected,
        "entities": entities,
        "relations": relations,
        "complete": built == total and connected >= built,
    }
