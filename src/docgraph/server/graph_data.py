"""A method's entity graph as JSON for the page: neighbourhoods, entities of a page, search.

Any method with the ``GraphBrowse`` capability has a graph here; it hands over the view it
keeps (KG4VD: the query-time view retrieval walks, so the page sees exactly that graph).
The shared ``bounded_subgraph`` makes the neighbourhood. Nodes carry what the page styles
them by (type, modality) and the pages that mention them, for click-through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from fastapi import HTTPException

from ..errors import GraphChanged
from ..graph import bounded_subgraph
from ..methods.base import MethodContext, available_methods, get_method
from ..methods.capabilities import GraphBrowse, label_of, methods_with
from ..methods.entity_graph import EntityGraph
from ..types import Entity

MAX_NODES = 300
MAX_HOPS = 3

T = TypeVar("T")


def graph_method(name: str | None) -> str:
    """The method whose graph to show: ``name``, or the first with a graph when None; 400 for an
    unknown method or one without the ``GraphBrowse`` capability, naming those with one."""
    having = methods_with(GraphBrowse)
    if name is None:
        if not having:
            raise HTTPException(status_code=404, detail="no installed method has an entity graph to show")
        return having[0]
    if name not in available_methods():
        raise HTTPException(status_code=400, detail=f"unknown method {name!r}; available: {', '.join(having)}")
    if name not in having:
        raise HTTPException(
            status_code=400,
            detail=f"{label_of(name)} has no entity graph to show; methods with one: {', '.join(having) or 'none'}",
        )
    return name


def load_graph(ctx: MethodContext, method: str, stale: EntityGraph | None = None) -> EntityGraph:
    """The method's graph view; 404 when it is not built yet. ``stale``: a view found out of
    date (``errors.GraphChanged``), to be replaced."""
    browse = get_method(method)
    assert isinstance(browse, GraphBrowse), method  # graph_method checked it
    view = browse.graph_view(ctx, stale)
    if len(view) == 0:
        raise HTTPException(status_code=404, detail=f"no {label_of(method)} graph yet: build the {method} method first")
    return view


def with_graph(ctx: MethodContext, method: str, read: Callable[[EntityGraph], T]) -> T:
    """``read(view)`` on the method's graph view; once more on a fresh view when a build
    changed the graph while it read (a record it listed was merged or dropped)."""
    view = load_graph(ctx, method)
    try:
        return read(view)
    except GraphChanged:
        return read(load_graph(ctx, method, stale=view))


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


def neighbourhood(
    ctx: MethodContext, method: str, seed_ids: list[str], hops: int = 1, limit: int = 80
) -> dict[str, Any]:
    """Seeds and their neighbours up to ``hops`` away (at most ``limit`` nodes, nearest and
    best connected first) with the relations among them. Unknown seed ids are listed in
    ``missing``; 404 when none is known."""
    hops = max(0, min(hops, MAX_HOPS))
    limit = max(1, min(limit, MAX_NODES))

    def read(view: EntityGraph) -> dict[str, Any]:
        known = [s for s in dict.fromkeys(seed_ids) if s in view.ids]
        missing = [s for s in seed_ids if s not in view.ids]
        if not known:
            raise HTTPException(
                status_code=404,
                detail=f"no entity {', '.join(seed_ids) or '(none given)'} in the {label_of(method)} graph",
            )
        seeds = view.ids.indices(known)
        reachable = bounded_subgraph(view.adjacency, seeds, hops, limit + 1)  # one more: is it cut?
        nodes = np.asarray(reachable[:limit], dtype=np.int64)
        seed_set = set(int(s) for s in seeds)
        node_json = []
        for index, entity in zip(nodes, view.entities_of(ctx.store, nodes)):
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
            for rel in view.relations_of(ctx.store, view.relations_within(nodes))
        ]
        return {
            "nodes": node_json,
            "edges": edges,
            "seeds": known,
            "missing": missing,
            "hops": hops,
            "truncated": len(reachable) > len(nodes),
        }

    return with_graph(ctx, method, read)


def entities_on_page(ctx: MethodContext, method: str, doc_id: str, page: int) -> list[dict[str, Any]]:
    """Entities grounded on one page, with the components of that page that mention them,
    best connected first."""

    def read(view: EntityGraph) -> list[dict[str, Any]]:
        out = []
        nodes = view.nodes_on_pages([(doc_id, page)])
        for index, entity in zip(nodes, view.entities_of(ctx.store, nodes)):
            components = sorted(
                {c for m in entity.mentions if m.doc_id == doc_id and m.page == page for c in m.component_ids}
            )
            item = entity_json(entity, view.degree[int(index)])
            item["component_ids"] = components
            out.append(item)
        out.sort(key=lambda e: (-e["degree"], e["name"].lower()))
        return out

    return with_graph(ctx, method, read)


def search_entities(ctx: MethodContext, method: str, query: str, limit: int = 20) -> list[dict[str, Any]]:
    """Entities whose name or an alias contains ``query`` (case-insensitive): exact names
    first, then prefixes, then the best connected; an empty query lists the hubs."""
    q = " ".join(query.lower().split())

    def read(view: EntityGraph) -> list[dict[str, Any]]:
        scored = []
        for index, name in enumerate(view.names):
            names = [name.lower(), *(a.lower() for a in view.aliases.get(index, ()))]
            if q and not any(q in n for n in names):
                continue
            rank = 0 if q in names else 1 if any(n.startswith(q) for n in names) else 2
            scored.append((rank if q else 0, -view.degree[index], name.lower(), index))
        scored.sort()
        best = [i for *_, i in scored[: max(1, limit)]]
        return [entity_json(e, view.degree[i]) for i, e in zip(best, view.entities_of(ctx.store, best))]

    return with_graph(ctx, method, read)
