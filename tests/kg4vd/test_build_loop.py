"""The adaptive loop (Algorithm 1) with a scripted strategy: rounds cap, masking, stop rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.methods.kg4vd.loop import run_page
from docgraph.methods.kg4vd.patch import GraphPatch, NodeOp
from docgraph.methods.kg4vd.reflect import ComponentStatus, Feedback, coverage_feedback
from docgraph.methods.kg4vd.schemas import get_schema
from docgraph.types import BBox, Component, ComponentKind, Page, Usage

SCHEMA = get_schema("general")


def make_page() -> Page:
    kinds = [
        ("TI1", ComponentKind.TITLE, "The Silk Roads"),
        ("P1", ComponentKind.PARAGRAPH, "Trade linked Asia."),
        ("IM1", ComponentKind.IMAGE, ""),
        ("C1", ComponentKind.CAPTION, "Map of the routes"),
        ("F1", ComponentKind.FOOTER, "12"),
    ]
    comps = [
        Component(
            id=i,
            kind=k,
            text=t,
            order=n,
            bbox=BBox(x0=10, y0=10 + 50 * n, x1=200, y1=50 + 50 * n),
            furniture=k is ComponentKind.FOOTER,
        )
        for n, (i, k, t) in enumerate(kinds)
    ]
    return Page(doc_id="d", number=3, width=300, height=400, image_path="pages/d/p0003.png", dpi=72, components=comps)


class Scripted:
    """Adds node n in round n (citing the n-th component); the reflector covers what is cited."""

    name = "scripted"
    needs_image = True

    def __init__(self, stop_after: int | None = None, stop_when_idle: bool = False, add_until: int = 99):
        self.stop_after, self.stop_when_idle, self.add_until = stop_after, stop_when_idle, add_until
        self.extract_inputs, self.reflect_images = [], []

    def extract(self, inp):
        self.extract_inputs.append(inp)
        comps = ["TI1", "P1", "IM1", "C1"]
        if inp.round >= self.add_until:
            return GraphPatch(), Usage(calls=1, input_tokens=10)
        cid = comps[inp.round % len(comps)]
        return GraphPatch(
            nodes=[NodeOp(op="add", name=f"thing {inp.round}", type="concept", component_ids=[cid])]
        ), Usage(calls=1, input_tokens=10)

    def reflect(self, inp, graph):
        self.reflect_images.append(inp.image)
        cited = graph.cited_components()
        fb = Feedback(
            components=[
                ComponentStatus(component_id=c.id, status="covered" if c.id in cited else "uncovered")
                for c in inp.page.components
            ],
            stop_signal=1 if self.stop_after is not None and inp.round + 1 >= self.stop_after else 0,
        )
        return fb, Usage(calls=1, input_tokens=5)


def marks_recorder(calls):
    def draw(page, mask, round_index):
        calls.append((round_index, sorted(mask)))
        return Path(f"/tmp/r{round_index}.png")

    return draw


def test_rounds_are_capped_by_max_rounds():
    strategy, calls = Scripted(), []
    outcome = run_page(make_page(), strategy, SCHEMA, max_rounds=3, marks=marks_recorder(calls))
    assert (len(outcome.rounds), outcome.stop_reason) == (3, "max_rounds")
    assert [n.name for n in outcome.graph.nodes] == ["thing 0", "thing 1", "thing 2"]
    assert outcome.usage == Usage(calls=6, input_tokens=45)


def test_covered_components_are_masked_in_the_next_round_and_reflector_sees_that_image():
    strategy, calls = Scripted(stop_after=3), []
    outcome = run_page(make_page(), strategy, SCHEMA, max_rounds=5, marks=marks_recorder(calls))
    assert outcome.stop_reason == "signal" and len(outcome.rounds) == 3
    assert calls == [(0, []), (1, ["TI1"]), (2, ["P1", "TI1"])]
    assert [sorted(i.masked) for i in strategy.extract_inputs] == [[], ["TI1"], ["P1", "TI1"]]
    assert strategy.reflect_images == [Path("/tmp/r0.png"), Path("/tmp/r1.png"), Path("/tmp/r2.png")]
    assert strategy.extract_inputs[0].feedback is None
    assert strategy.extract_inputs[2].feedback == outcome.rounds[1].feedback
    assert [r.masked for r in outcome.rounds] == [[], ["TI1"], ["P1", "TI1"]]


def test_idle_round_stops_strategies_that_ask_for_it():
    outcome = run_page(make_page(), Scripted(stop_when_idle=True, add_until=2), SCHEMA, max_rounds=5)
    assert (len(outcome.rounds), outcome.stop_reason) == (3, "idle")
    outcome = run_page(make_page(), Scripted(stop_when_idle=False, add_until=2), SCHEMA, max_rounds=5)
    assert (len(outcome.rounds), outcome.stop_reason) == (5, "max_rounds")


def test_single_pass_ablation_has_no_reflection_and_no_mask():
    strategy, calls = Scripted(), []
    outcome = run_page(make_page(), strategy, SCHEMA, max_rounds=1, reflector=False, marks=marks_recorder(calls))
    assert len(outcome.rounds) == 1 and outcome.feedback is None and strategy.reflect_images == []
    assert calls == [(0, [])]


def test_reflector_statuses_are_restricted_to_the_page_and_complete():
    class Sloppy(Scripted):
        def reflect(self, inp, graph):
            return Feedback(
                components=[
                    ComponentStatus(component_id="P1", status="covered"),
                    ComponentStatus(component_id="Z9", status="covered"),
                ]
            ), Usage()

    outcome = run_page(make_page(), Sloppy(), SCHEMA, max_rounds=1)
    statuses = {c.component_id: c.status for c in outcome.feedback.components}
    assert statuses == {"TI1": "uncovered", "P1": "covered", "IM1": "uncovered", "C1": "uncovered", "F1": "uncovered"}


def test_coverage_feedback_rules():
    from docgraph.methods.kg4vd.patch import Edge, Node, PageGraph

    page = make_page()
    graph = PageGraph(
        nodes=[
            Node(id="e1", name="Silk Roads", type="location", component_ids=["TI1", "P1"]),
            Node(id="e2", name="Asia", type="location", component_ids=["P1"]),
            Node(id="e3", name="Route map", type="figure_panel", modality="visual", component_ids=["IM1"]),
        ]
    )
    status = {c.component_id: c.status for c in coverage_feedback(page, graph).components}
    assert status == {
        "TI1": "covered",
        "P1": "partially_covered",
        "IM1": "partially_covered",
        "C1": "uncovered",
        "F1": "covered",
    }
    graph.edges = [
        Edge(id="r1", source="e1", target="e2", label="links", component_ids=["P1"]),
        Edge(id="r2", source="e3", target="e1", label="shows", component_ids=["IM1"]),
    ]
    graph.nodes.append(Node(id="e4", name="Map of the routes", type="concept", component_ids=["C1"]))
    feedback = coverage_feedback(page, graph)
    assert feedback.stop_signal == 1 and feedback.covered() == {"TI1", "P1", "IM1", "C1", "F1"}


def test_max_rounds_must_be_positive():
    with pytest.raises(ValueError):
        run_page(make_page(), Scripted(), SCHEMA, max_rounds=0)


def test_rejections_of_a_round_reach_the_next_extraction():
    class Careless(Scripted):
        """Round 0 also proposes a node citing a component the page lacks and an unknown type."""

        def extract(self, inp):
            patch, usage = super().extract(inp)
            if inp.round == 0:
                patch.nodes += [
                    NodeOp(op="add", name="Nowhere", type="concept", component_ids=["X9"]),
                    NodeOp(op="add", name="Oddity", type="gadget", component_ids=["P1"]),
                ]
            return patch, usage

    strategy = Careless()
    outcome = run_page(make_page(), strategy, SCHEMA, max_rounds=3)
    first, second, third = strategy.extract_inputs
    assert first.rejected == ()
    assert [(r.rule, r.op["name"]) for r in second.rejected] == [
        ("component_exists", "Nowhere"),
        ("entity_type", "Oddity"),
    ]
    assert second.rejected == tuple(outcome.rounds[0].rejected)
    assert third.rejected == ()  # round 1 was clean: nothing carried over any more
