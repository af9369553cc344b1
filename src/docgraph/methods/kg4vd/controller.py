"""The controller of the adaptive loop: deterministic checks, then application (pure).

``apply_patch(graph, patch, component_ids, schema)`` returns the new graph, the operations
it applied and those it rejected, each rejection naming the rule that fired. The input
graph is never modified. Node operations run first, in order, then edge operations, so an
edge may point at a node added by the same patch.

Rules (``RULES``), checked in this order for each operation:
- ``schema``: an ``add`` lacks a required field (node: name, type, component_ids; edge:
  source, target, label, component_ids) or gives an empty one.
- ``unknown_id``: ``replace``/``delete`` without an id, or of an id not in the graph.
- ``duplicate_id``: an ``add`` reuses an id already taken (node and edge ids share one
  namespace).
- ``grounding``: the node/edge would cite no component.
- ``component_exists``: it cites an id that is not a component of this page.
- ``entity_type``: the type is not one of the schema's types.
- ``modality``: a visual type on a text entity or a text type on a visual entity (an
  operation that gives no modality takes the one its type implies).
- ``duplicate_entity``: another node already has the same name (case-insensitive) and
  type — the extractor should ``replace`` it instead.
- ``endpoint``: an edge's source or target is not a node of the graph.
- ``self_loop``: an edge from a node to itself.
- ``duplicate_edge``: another edge already links the same source and target with the
  same label.

Normalisation (not a rejection): types and labels become ``snake_case``; names and
descriptions are stripped; cited ids are de-duplicated in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from .patch import Edge, EdgeOp, GraphPatch, Node, NodeOp, PageGraph
from .schemas import EntitySchema

OpT = TypeVar("OpT", NodeOp, EdgeOp)

RULES = (
    "schema",
    "unknown_id",
    "duplicate_id",
    "grounding",
    "component_exists",
    "entity_type",
    "modality",
    "duplicate_entity",
    "endpoint",
    "self_loop",
    "duplicate_edge",
)


@dataclass(frozen=True)
class Rejection:
    """An operation the controller refused, and why."""

    target: Literal["node", "edge"]
    op: dict[str, Any]
    rule: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "op": self.op, "rule": self.rule, "message": self.message}


@dataclass
class ControllerResult:
    graph: PageGraph
    applied: list[tuple[str, str, str]] = field(default_factory=list)  # (target, op, id)
    rejected: list[Rejection] = field(default_factory=list)
    cascaded: list[str] = field(default_factory=list)  # edge ids removed with a deleted node

    @property
    def changed(self) -> bool:
        return bool(self.applied)


class _Reject(Exception):
    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message


def _snake(value: str) -> str:
    return EntitySchema.normalize_type(value)


def _name_key(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().casefold()


def _cited(ids: list[str] | None) -> list[str]:
    return list(dict.fromkeys(i.strip() for i in ids or [] if i and i.strip()))


class _Editor:
    """Applies operations to a private copy of the graph."""

    def __init__(self, graph: PageGraph, component_ids: Collection[str], schema: EntitySchema):
        self.nodes: dict[str, Node] = {n.id: n.model_copy(deep=True) for n in graph.nodes}
        self.edges: dict[str, Edge] = {e.id: e.model_copy(deep=True) for e in graph.edges}
        self.taken = set(self.nodes) | set(self.edges)  # never reused within one patch, even after a delete
        self.components = set(component_ids)
        self.schema = schema
        self.result = ControllerResult(graph=graph)

    # ------------------------------------------------------------------ shared checks
    def _new_id(self, prefix: str) -> str:
        numbers = [int(m.group(1)) for i in self.taken if (m := re.fullmatch(rf"{prefix}(\d+)", i))]
        return f"{prefix}{max(numbers, default=0) + 1}"

    def _check_id_free(self, item_id: str | None) -> None:
        if item_id is not None and (item_id in self.nodes or item_id in self.edges):
            raise _Reject("duplicate_id", f"id {item_id!r} is already used on this page")

    def _check_citations(self, cited: list[str]) -> None:
        if not cited:
            raise _Reject("grounding", "cites no component; every node and edge cites at least one component id")
        unknown = [c for c in cited if c not in self.components]
        if unknown:
            raise _Reject("component_exists", f"cites {', '.join(unknown)}, not components of this page")

    @staticmethod
    def _existing(items: dict[str, Any], item_id: str | None, what: str) -> Any:
        if not item_id or item_id not in items:
            raise _Reject("unknown_id", f"no {what} {item_id!r} on this page to replace or delete")
        return items[item_id]

    # ------------------------------------------------------------------ nodes
    def _checked_node(self, node: Node, modality_given: bool) -> Node:
        node.type = _snake(node.type)
        if not modality_given:
            node.modality = "visual" if node.type in self.schema.visual_types else "text"
        self._check_citations(node.component_ids)
        if node.type not in self.schema.all_types:
            raise _Reject("entity_type", f"type {node.type!r} is not in the {self.schema.name!r} schema")
        if not self.schema.allows(node.type, node.modality):
            raise _Reject("modality", f"type {node.type!r} is not a {node.modality} entity type")
        key = (_name_key(node.name), node.type)
        clash = next(
            (n.id for n in self.nodes.values() if n.id != node.id and (_name_key(n.name), n.type) == key), None
        )
        if clash:
            raise _Reject("duplicate_entity", f"{clash} already is {node.name!r} ({node.type}); replace it instead")
        return node

    def node_op(self, op: NodeOp) -> None:
        if op.op == "delete":
            gone_node: Node = self._existing(self.nodes, op.id, "node")
            del self.nodes[gone_node.id]
            gone = [e.id for e in self.edges.values() if gone_node.id in (e.source, e.target)]
            for edge_id in gone:
                del self.edges[edge_id]
            self.result.cascaded.extend(gone)
            self.result.applied.append(("node", "delete", gone_node.id))
            return
        if op.op == "add":
            name, kind = (op.name or "").strip(), op.type or ""
            if not name or not kind.strip() or op.component_ids is None:
                raise _Reject("schema", "a new node needs name, type and component_ids")
            self._check_id_free(op.id)
            node = Node(
                id=op.id or self._new_id("e"),
                name=name,
                type=kind,
                modality=op.modality or "text",
                description=(op.description or "").strip(),
                component_ids=_cited(op.component_ids),
            )
        else:
            old = self._existing(self.nodes, op.id, "node")
            if op.name is not None and not op.name.strip() or op.type is not None and not op.type.strip():
                raise _Reject("schema", "replace cannot make a node's name or type empty")
            node = Node(
                id=old.id,
                name=(op.name or old.name).strip(),
                type=op.type or old.type,
                modality=op.modality or old.modality,
                description=(op.description if op.description is not None else old.description).strip(),
                component_ids=_cited(op.component_ids) if op.component_ids is not None else list(old.component_ids),
            )
        modality_given = op.modality is not None or (op.op == "replace" and op.type is None)
        self.nodes[node.id] = self._checked_node(node, modality_given)
        self.taken.add(node.id)
        self.result.applied.append(("node", op.op, node.id))

    # ------------------------------------------------------------------ edges
    def _checked_edge(self, edge: Edge) -> Edge:
        edge.label = _snake(edge.label)
        self._check_citations(edge.component_ids)
        missing = [end for end in (edge.source, edge.target) if end not in self.nodes]
        if missing:
            raise _Reject("endpoint", f"endpoint(s) {', '.join(missing)} are not nodes of this page")
        if edge.source == edge.target:
            raise _Reject("self_loop", f"{edge.source} -[{edge.label}]-> itself")
        clash = next(
            (
                e.id
                for e in self.edges.values()
                if e.id != edge.id and (e.source, e.target, e.label) == (edge.source, edge.target, edge.label)
            ),
            None,
        )
        if clash:
            raise _Reject("duplicate_edge", f"{clash} already links {edge.source} -[{edge.label}]-> {edge.target}")
        return edge

    def edge_op(self, op: EdgeOp) -> None:
        if op.op == "delete":
            gone_edge: Edge = self._existing(self.edges, op.id, "edge")
            del self.edges[gone_edge.id]
            self.result.applied.append(("edge", "delete", gone_edge.id))
            return
        if op.op == "add":
            if not op.source or not op.target or not (op.label or "").strip() or op.component_ids is None:
                raise _Reject("schema", "a new edge needs source, target, label and component_ids")
            self._check_id_free(op.id)
            edge = Edge(
                id=op.id or self._new_id("r"),
                source=op.source,
                target=op.target,
                label=op.label,
                description=(op.description or "").strip(),
                component_ids=_cited(op.component_ids),
            )
        else:
            old = self._existing(self.edges, op.id, "edge")
            if op.label is not None and not op.label.strip():
                raise _Reject("schema", "replace cannot make an edge's label empty")
            edge = Edge(
                id=old.id,
                source=op.source or old.source,
                target=op.target or old.target,
                label=op.label or old.label,
                description=(op.description if op.description is not None else old.description).strip(),
                component_ids=_cited(op.component_ids) if op.component_ids is not None else list(old.component_ids),
            )
        self.edges[edge.id] = self._checked_edge(edge)
        self.taken.add(edge.id)
        self.result.applied.append(("edge", op.op, edge.id))

    # ------------------------------------------------------------------ driver
    def _apply_all(self, target: Literal["node", "edge"], ops: list[OpT], apply: Callable[[OpT], None]) -> None:
        for op in ops:
            try:
                apply(op)
            except _Reject as rej:
                self.result.rejected.append(Rejection(target, op.model_dump(exclude_none=True), rej.rule, rej.message))

    def run(self, patch: GraphPatch) -> ControllerResult:
        self._apply_all("node", patch.nodes, self.node_op)
        self._apply_all("edge", patch.edges, self.edge_op)
        self.result.graph = PageGraph(nodes=list(self.nodes.values()), edges=list(self.edges.values()))
        return self.result


def apply_patch(
    graph: PageGraph, patch: GraphPatch, component_ids: Collection[str], schema: EntitySchema
) -> ControllerResult:
    """Check every operation of ``patch`` against ``graph``, the page's component ids and the
    schema; apply the valid ones (in order) to a copy of ``graph``. Deterministic, no I/O."""
    return _Editor(graph, component_ids, schema).run(patch)
