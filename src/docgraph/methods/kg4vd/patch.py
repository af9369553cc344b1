"""Page graphs and the patch operations that edit them (the extractor's output schema).

A ``PageGraph`` is the graph G_i of one page: nodes (entities) and edges (relations) with
*page-local* ids (``e1``, ``r1`` …) that cite the page's layout components by id. The
extractor proposes a ``GraphPatch``: ``add`` / ``replace`` / ``delete`` operations on
nodes and on edges; the controller (``controller.py``) checks and applies them.

Operation semantics (what the controller implements):
- ``add``: a new node/edge; ``id`` may be left out and is then assigned.
- ``replace``: the node/edge with ``id`` gets every field the operation gives; fields
  left out (null) keep their value.
- ``delete``: the node/edge with ``id`` is removed; deleting a node removes its edges.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Op = Literal["add", "replace", "delete"]
NodeModality = Literal["text", "visual"]


class Node(BaseModel):
    """An entity of a page graph."""

    id: str
    name: str
    type: str
    modality: NodeModality = "text"
    description: str = ""
    component_ids: list[str] = Field(default_factory=list)


class Edge(BaseModel):
    """A relation of a page graph: ``source`` -[label]-> ``target`` (node ids)."""

    id: str
    source: str
    target: str
    label: str
    description: str = ""
    component_ids: list[str] = Field(default_factory=list)


class PageGraph(BaseModel):
    """The graph of one page (page-local ids)."""

    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)

    def node(self, node_id: str) -> Node | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def edge(self, edge_id: str) -> Edge | None:
        return next((e for e in self.edges if e.id == edge_id), None)

    def cited_components(self, kind: Literal["nodes", "edges", "all"] = "nodes") -> set[str]:
        """Component ids cited by the nodes, the edges, or both."""
        items: list[Node | Edge] = []
        if kind in ("nodes", "all"):
            items += self.nodes
        if kind in ("edges", "all"):
            items += self.edges
        return {cid for item in items for cid in item.component_ids}

    def summary(self) -> str:
        """One line per node and edge, for prompts and logs."""
        names = {n.id: n.name for n in self.nodes}
        lines = [
            f"{n.id}: {n.name} [{n.type}, {n.modality}] cites {','.join(n.component_ids)}"
            + (f" — {n.description}" if n.description else "")
            for n in self.nodes
        ]
        lines += [
            f"{e.id}: {names.get(e.source, e.source)} ({e.source}) -[{e.label}]-> "
            f"{names.get(e.target, e.target)} ({e.target}) cites {','.join(e.component_ids)}"
            for e in self.edges
        ]
        return "\n".join(lines) if lines else "(empty)"


class NodeOp(BaseModel):
    """One operation on a node."""

    op: Op
    id: str | None = Field(None, description="the node id; required for replace/delete, optional for add")
    name: str | None = None
    type: str | None = Field(None, description="an entity type of the schema")
    modality: NodeModality | None = Field(None, description="'visual' for entities seen in images, charts, tables")
    description: str | None = None
    component_ids: list[str] | None = Field(None, description="ids of the page components this entity is grounded in")


class EdgeOp(BaseModel):
    """One operation on an edge."""

    op: Op
    id: str | None = Field(None, description="the edge id; required for replace/delete, optional for add")
    source: str | None = Field(None, description="source node id")
    target: str | None = Field(None, description="target node id")
    label: str | None = Field(None, description="relation name, lowercase_with_underscores")
    description: str | None = None
    component_ids: list[str] | None = Field(None, description="ids of the page components stating this relation")


class GraphPatch(BaseModel):
    """The extractor's output: node operations are applied before edge operations."""

    nodes: list[NodeOp] = Field(default_factory=list)
    edges: list[EdgeOp] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.nodes and not self.edges

    def __len__(self) -> int:
        return len(self.nodes) + len(self.edges)
