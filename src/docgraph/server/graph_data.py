"""The KG4VD entity graph as JSON for the page: neighbourhoods, entities of a page, search.

Reads the method's cached query-time view (``methods.kg4vd.graph_view``), so the page sees
exactly the graph retrieval walks, and uses the shared ``bounded_subgraph`` for the
neighbourhood. Nodes carry what the page styles them by (type, modality) and the pages
that mention them, for click-through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from fastapi import HTTPException

from ..graph import bounded_subgraph
from ..store.base import Store
from ..types import Entity

MAX_NODES = 300
MAX_HOPS = 3

T = TypeVar("T")


def load_graph(store: Store, stale: Any = None) -> Any:
    """The KG4VD graph view; 404 when the method is not installed or not built yet.
    ``stale``: a view found out of date (``graph_view.GraphChanged``), to be replaced."""
    try:
        from ..methods.kg4vd.graph_view import load_view
    except ImportError:
        raise HTTPException(status_code=404, detail="the KG4VD method is not installed; no graph to show") from None
    view = load_view(store, stale)
    if len(view) == 0:
        raise HTTPException(status_code=404, detail="no KG4VD graph yet: build the kg4vd method first")
    return view


def with_graph(store: Store, read: Callable[[Any], T]) -> T:
    """``read(view)`` on the graph view; once more on a fresh view when a build changed the
    graph while it read (a record it listed was merged or dropped)."""
    view = load_graph(store)
    from ..methods.kg4vd.graph_view import GraphChanged  # installed: load_graph found it

    try:
        return read(view)
    except GraphChanged:
        return read(load_graph(store, stale=view))


def entity_json(entity: Entity, degree: float = 0.0) -> dict[str, Any]:
    """An entity for the page: identity, styling keys and the pages that mention it."""
    pages: dict[tuple[str, int], set[str]] = {}
    for mention in entity.mentions:
        pages.setdefault((mention.doc_id, mention.page), set()).update(mention.component_ids)
    return {
        "id": entity.id,
        "name": entity.name,
        "type": entity.type,
        "modality": entity.modality,
        "description": entity.description,
        "aliases": entity.aliases,
        "degree": int(degree),
        "pages": [{"doc_id": d, "page": p, "component_ids": sorted(c)} for (d, p), c in sorted(pages.items())],
    }


def neighbourhood(store: Store, seed_ids: list[str], hops: int = 1, limit: int = 80) -> dict[str, Any]:
    """Seeds and their neighbours up to ``hops`` away (at most ``limit`` nodes, nearest and
    best connected first) with the relations among them. Unknown seed ids are listed in
    ``missing``; 404 when none is known."""
    hops = max(0, min(hops, MAX_HOPS))
    limit = max(1, min(limit, MAX_NODES))

    def read(view: Any) -> dict[str, Any]:
        known = [s for s in dict.fromkeys(seed_ids) if s in view.ids]
        missing = [s for s in seed_ids if s not in view.ids]
        if not known:
            raise HTTPException(
                status_code=404, detail=f"no entity {', '.join(seed_ids) or '(none given)'} in the KG4VD graph"
            )
        seeds = view.ids.indices(known)
        reachable = bounded_subgraph(view.adjacency, seeds, hops, limit + 1)  # one more: is it cut?
        nodes = np.asarray(reachable[:limit], dtype=np.int64)
        seed_set = set(int(s) for s in seeds)
        node_json = []
        for index, entity in zip(nodes, view.entities_of(store, nodes)):
            item = entity_json(entity, view.degree[int(index)])
            item["seed"] = int(index) in seed_set
            node_json.append(item)
        edges = [
            {
                "id": rel.id,
                "source": rel.source,
                "target": rel.target,
                "label": rel.label,
                "description": rel.description,
                "cross_page": rel.cross_page,
            }
            for rel in view.relations_of(store, view.relations_within(nodes))
        ]
        return {
            "nodes": node_json,
            "edges": edges,
            "seeds": known,
            "missing": missing,
            "hops": hops,
            "truncated": len(reachable) > len(nodes),
        }

    return with_graph(store, read)


def entities_on_page(store: Store, doc_id: str, page: int) -> list[dict[str, Any]]:
    """Entities grounded on one page, with the components of that page that mention them,
    best connected first."""

    def read(view: Any) -> list[dict[str, Any]]:
        out = []
        nodes = view.nodes_on_pages([(doc_id, page)])
        for index, entity in zip(nodes, view.entities_of(store, nodes)):
            components = sorted(
                {c for m in entity.mentions if m.doc_id == doc_id and m.page == page for c in m.component_ids}
            )
            item = entity_json(entity, view.degree[int(index)])
            item["component_ids"] = components
            out.append(item)
        out.sort(key=lambda e: (-e["degree"], e["name"].lower()))
        return out

    return with_graph(store, read)


def search_entities(store: Store, query: str, limit: int = 20) -> list[dict[str, Any]]:
    """Entities whose name or an alias contains ``query`` (case-insensitive): exact names
    first, then prefixes, then the best connected; an empty query lists the hubs."""
    q = " ".join(query.lower().split())

    def read(view: Any) -> list[dict[str, Any]]:
        scored = []
        for index, name in enumerate(view.names):
            names = [name.lower(), *(a.lower() for a in view.aliases.get(index, ()))]
            if q and not any(q in n for n in names):
                continue
            rank = 0 if q in names else 1 if any(n.startswith(q) for n in names) else 2
            scored.append((rank if q else 0, -view.degree[index], name.lower(), index))
        scored.sort()
        best = [i for *_, i in scored[: max(1, limit)]]
        return [entity_json(e, view.degree[i]) for i, e in zip(best, view.entities_of(store, best))]

    return with_graph(store, read)
