"""``/api/graph`` and ``/api/entities``: the KG4VD entity graph around entities, and finding entities."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from ..graph_data import MAX_HOPS, MAX_NODES, neighbourhood, search_entities
from ..state import ServerState, server_state

router = APIRouter(prefix="/api", tags=["graph"])


@router.get("/graph", summary="Neighbourhood of entities (e.g. an answer's evidence) in the KG4VD graph")
def graph(
    entity: list[str] = Query(..., description="entity id (repeatable)"),
    hops: int = Query(1, ge=0, le=MAX_HOPS),
    limit: int = Query(80, ge=1, le=MAX_NODES),
    state: ServerState = Depends(server_state),
) -> dict[str, Any]:
    """``nodes`` (id, name, type, modality, degree, pages that mention it, seed flag) and
    ``edges`` (relation id, source, target, label, cross_page) within ``hops`` of the seeds;
    ``truncated`` when ``limit`` cut the neighbourhood."""
    return neighbourhood(state.ws.store, entity, hops=hops, limit=limit)


@router.get("/entities", summary="Find KG4VD entities by name or alias (empty q: the best connected)")
def entities(
    q: str = Query("", max_length=200), limit: int = Query(20, ge=1, le=200), state: ServerState = Depends(server_state)
) -> dict[str, Any]:
    return {"entities": search_entities(state.ws.store, q, limit)}
