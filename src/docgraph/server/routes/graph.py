"""``/api/graph`` and ``/api/entities``: a method's entity graph around entities, and finding entities.

Every method with the ``GraphBrowse`` capability has one; ``method`` picks it (default: the
first such method in display order)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from ..graph_data import MAX_HOPS, MAX_NODES, graph_method, neighbourhood, search_entities
from ..state import ServerState, server_state

router = APIRouter(prefix="/api", tags=["graph"])
METHOD = Query(None, description="a method with an entity graph (default: the first one)")


@router.get("/graph", summary="Neighbourhood of entities (e.g. an answer's evidence) in a method's entity graph")
def graph(
    entity: list[str] = Query(..., description="entity id (repeatable)"),
    hops: int = Query(1, ge=0, le=MAX_HOPS),
    limit: int = Query(80, ge=1, le=MAX_NODES),
    method: str | None = METHOD,
    state: ServerState = Depends(server_state),
) -> dict[str, Any]:
    """``nodes`` (id, name, type, modality, degree, pages that mention it, seed flag) and
    ``edges`` (relation id, source, target, label, cross_page) within ``hops`` of the seeds;
    ``truncated`` when ``limit`` cut the neighbourhood."""
    name = graph_method(method)
    return {"method": name, **neighbourhood(state.ws.context(), name, entity, hops=hops, limit=limit)}


@router.get("/entities", summary="Find a method's entities by name or alias (empty q: the best connected)")
def entities(
    q: str = Query("", max_length=200),
    limit: int = Query(20, ge=1, le=200),
    method: str | None = METHOD,
    state: ServerState = Depends(server_state),
) -> dict[str, Any]:
    name = graph_method(method)
    return {"method": name, "entities": search_entities(state.ws.context(), name, q, limit)}
