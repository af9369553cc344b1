"""The adaptive extract → check → reflect loop of one page (KG4VD Algorithm 1).

``run_page(page, strategy, schema, ...)`` starts from an empty graph and, for at most
``max_rounds`` rounds: asks the strategy's extractor for a patch (given the annotated
page image Î_i^(t), the page's components, the current graph, the last feedback and the
operations the controller rejected in the last round, each with the rule that refused
it), lets the controller apply the valid operations, then asks the reflector for feedback on
the new graph (given the same image). It stops when the feedback's ``stop_signal`` is 1,
after ``max_rounds`` rounds, or — for strategies with ``stop_when_idle`` and whenever the
reflector is off — when a round applied nothing. Components the feedback marks
``covered`` are masked (greyed out) in the next round's annotated image.

``reflector=False`` skips reflection: no feedback, no masking (with ``max_rounds=1``
this is the paper's single-pass ablation).

A ``PageStrategy`` supplies the extractor and the reflector; ``model_strategy.py`` holds the
model-driven one, ``offline.py`` the model-free one. Strategies are shared by the pages
being built concurrently, so they keep no per-page state outside ``RoundInput``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ...types import Page, Usage
from .controller import Rejection, apply_patch
from .patch import GraphPatch, PageGraph
from .reflect import Feedback
from .schemas import EntitySchema

StopReason = Literal["signal", "max_rounds", "idle"]
MarksFn = Callable[[Page, set[str], int], Path]
"""Draws the Set-of-Marks image of a page with the given components masked, for a round."""


@dataclass(frozen=True)
class RoundInput:
    """What the extractor and the reflector see in round ``round`` (0-based)."""

    page: Page
    round: int
    max_rounds: int
    schema: EntitySchema
    graph: PageGraph
    feedback: Feedback | None
    masked: frozenset[str]
    image: Path | None
    rejected: tuple[Rejection, ...] = ()  # what the controller refused in the previous round


class PageStrategy(Protocol):
    name: str
    needs_image: bool  # the loop draws the annotated image only when True
    stop_when_idle: bool  # stop as soon as a round applies nothing

    def extract(self, inp: RoundInput) -> tuple[GraphPatch, Usage]:
        """Propose a patch to ``inp.graph``."""

    def reflect(self, inp: RoundInput, graph: PageGraph) -> tuple[Feedback, Usage]:
        """Feedback on ``graph`` (the graph after this round's patch)."""


@dataclass
class RoundLog:
    """One round: what was proposed, applied and rejected, and the feedback that followed."""

    round: int
    masked: list[str]
    proposed: int
    applied: int
    rejected: list[Rejection]
    feedback: Feedback | None


@dataclass
class PageOutcome:
    graph: PageGraph
    rounds: list[RoundLog] = field(default_factory=list)
    stop_reason: StopReason = "max_rounds"
    usage: Usage = field(default_factory=Usage)

    @property
    def feedback(self) -> Feedback | None:
        """The last feedback (None without a reflector)."""
        return next((r.feedback for r in reversed(self.rounds) if r.feedback is not None), None)

    @property
    def rejected(self) -> list[tuple[int, Rejection]]:
        return [(r.round, rej) for r in self.rounds for rej in r.rejected]


def run_page(
    page: Page,
    strategy: PageStrategy,
    schema: EntitySchema,
    *,
    max_rounds: int = 5,
    reflector: bool = True,
    marks: MarksFn | None = None,
    on_round: Callable[[RoundLog, Usage], None] | None = None,
) -> PageOutcome:
    """Build the graph of one page (Algorithm 1). ``on_round`` is told about every round
    (for progress). Raises whatever the strategy raises (e.g. ``ModelOutputError``)."""
    if max_rounds < 1:
        raise ValueError("max_rounds must be at least 1")
    component_ids = {c.id for c in page.components}
    outcome = PageOutcome(graph=PageGraph())
    feedback: Feedback | None = None
    masked: frozenset[str] = frozenset()
    rejected: tuple[Rejection, ...] = ()
    for t in range(max_rounds):
        image = marks(page, set(masked), t) if (marks is not None and strategy.needs_image) else None
        inp = RoundInput(
            page=page,
            round=t,
            max_rounds=max_rounds,
            schema=schema,
            graph=outcome.graph,
            feedback=feedback,
            masked=masked,
            image=image,
            rejected=rejected,
        )
        patch, usage = strategy.extract(inp)
        round_usage = usage
        result = apply_patch(outcome.graph, patch, component_ids, schema)
        outcome.graph = result.graph
        log = RoundLog(
            round=t,
            masked=sorted(masked),
            proposed=len(patch),
            applied=len(result.applied),
            rejected=result.rejected,
            feedback=None,
        )
        rejected = tuple(result.rejected)
        if reflector:
            log.feedback, usage = strategy.reflect(inp, outcome.graph)
            log.feedback = log.feedback.restricted_to(component_ids)
            round_usage = round_usage.add(usage)
        outcome.rounds.append(log)
        outcome.usage = outcome.usage.add(round_usage)
        if on_round is not None:
            on_round(log, round_usage)
        if log.feedback is not None and log.feedback.stop_signal == 1:
            outcome.stop_reason = "signal"
            break
        if not result.changed and (strategy.stop_when_idle or not reflector):
            outcome.stop_reason = "idle"
            break
        if log.feedback is not None:
            feedback = log.feedback
            masked = frozenset(feedback.covered())
    return outcome
