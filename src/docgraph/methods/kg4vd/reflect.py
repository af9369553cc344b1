"""The reflector's feedback B_i and the model-free coverage check.

``Feedback`` is the reflector's output schema (KG4VD Appendix B.2, Figure 4): a status per
layout component (``covered`` / ``partially_covered`` / ``uncovered``), remaining gaps,
revision targets (node/edge or component ids to revisit) and ``stop_signal`` ∈ {0, 1}.
Components judged ``covered`` are masked in the next round's Set-of-Marks image.

``coverage_feedback(page, graph)`` computes the same feedback without a model, from which
components have grounded entities:
- a component with no content (no text, not visual) or page furniture is ``covered``
  (there is nothing to extract);
- a component no node cites is ``uncovered``;
- a component cited by two or more nodes of which no edge connects any pair, or a
  visual component whose entities have no edge at all, is ``partially_covered``;
- otherwise it is ``covered``.
``stop_signal`` is 1 when every component is covered.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ...types import Component, Page
from .patch import PageGraph

Status = Literal["covered", "partially_covered", "uncovered"]


class ComponentStatus(BaseModel):
    component_id: str
    status: Status
    note: str = ""


class Feedback(BaseModel):
    """The reflector's feedback on a page graph."""

    components: list[ComponentStatus] = Field(
        default_factory=list, description="one entry per layout component of the page"
    )
    gaps: list[str] = Field(default_factory=list, description="what the graph still misses, in short sentences")
    revision_targets: list[str] = Field(
        default_factory=list, description="node, edge or component ids the next round should revisit"
    )
    stop_signal: Literal[0, 1] = Field(0, description="1 when the page graph is complete")

    def with_status(self, status: Status) -> list[str]:
        return [c.component_id for c in self.components if c.status == status]

    def covered(self) -> set[str]:
        """Ids to mask in the next round's annotated image."""
        return set(self.with_status("covered"))

    def restricted_to(self, component_ids: set[str]) -> Feedback:
        """The feedback without statuses for ids that are not components of the page; a
        component the reflector did not mention is ``uncovered``."""
        known = {c.component_id: c for c in self.components if c.component_id in component_ids}
        statuses = [
            known.get(cid) or ComponentStatus(component_id=cid, status="uncovered")
            for cid in sorted(component_ids, key=_id_order)
        ]
        return self.model_copy(update={"components": statuses})


def _id_order(component_id: str) -> tuple[str, int]:
    prefix = component_id.rstrip("0123456789")
    digits = component_id[len(prefix) :]
    return prefix, int(digits) if digits else 0


def needs_extraction(comp: Component) -> bool:
    """Whether a component carries anything to extract (content, or a visual region)."""
    return not comp.furniture and (comp.kind.is_visual or bool(comp.content.strip()))


def component_status(comp: Component, graph: PageGraph) -> ComponentStatus:
    """The coverage of one component by the page graph (rules in the module docstring)."""
    if not needs_extraction(comp):
        return ComponentStatus(component_id=comp.id, status="covered", note="nothing to extract")
    nodes = {n.id for n in graph.nodes if comp.id in n.component_ids}
    if not nodes:
        return ComponentStatus(component_id=comp.id, status="uncovered", note="no entity cites it")
    linked = {end for e in graph.edges if e.source in nodes or e.target in nodes for end in (e.source, e.target)}
    internal = any(e.source in nodes and e.target in nodes for e in graph.edges)
    if len(nodes) >= 2 and not internal:
        return ComponentStatus(
            component_id=comp.id, status="partially_covered", note=f"{len(nodes)} entities but no relation between them"
        )
    if comp.kind.is_visual and not (linked & nodes):
        return ComponentStatus(
            component_id=comp.id, status="partially_covered", note="visual entity not related to anything"
        )
    return ComponentStatus(component_id=comp.id, status="covered")


def coverage_feedback(page: Page, graph: PageGraph) -> Feedback:
    """Model-free feedback: per-component coverage from grounded entities; stop when all covered."""
    statuses = [component_status(c, graph) for c in sorted(page.components, key=lambda c: c.order)]
    gaps = [f"{s.component_id}: {s.note}" for s in statuses if s.status != "covered"]
    targets = [s.component_id for s in statuses if s.status != "covered"]
    return Feedback(components=statuses, gaps=gaps, revision_targets=targets, stop_signal=1 if not targets else 0)
