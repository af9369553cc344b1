"""The controller's rules: each rejects what it should and accepts what it should."""

from __future__ import annotations

import pytest

from docgraph.methods.kg4vd.controller import RULES, apply_patch
from docgraph.methods.kg4vd.patch import Edge, EdgeOp, GraphPatch, Node, NodeOp, PageGraph
from docgraph.methods.kg4vd.schemas import PRESETS, VISUAL_TYPES, get_schema

COMPONENTS = {"TI1", "P1", "P2", "IM1", "C1"}
SCHEMA = get_schema("world_history")


def base_graph() -> PageGraph:
    return PageGraph(
        nodes=[
            Node(id="e1", name="Genghis Khan", type="person", component_ids=["P1"]),
            Node(id="e2", name="Mongol Empire", type="organization", component_ids=["P1", "P2"]),
            Node(
                id="e3", name="Map of the empire", type="figure_panel", modality="visual", component_ids=["IM1", "C1"]
            ),
        ],
        edges=[Edge(id="r1", source="e1", target="e2", label="founded", component_ids=["P1"])],
    )


def node(**kw) -> GraphPatch:
    return GraphPatch(nodes=[NodeOp(**kw)])


def edge(**kw) -> GraphPatch:
    return GraphPatch(edges=[EdgeOp(**kw)])


def run(patch: GraphPatch, graph: PageGraph | None = None):
    return apply_patch(graph or base_graph(), patch, COMPONENTS, SCHEMA)


def rejected_rules(result) -> list[str]:
    return [r.rule for r in result.rejected]


def accepted(result) -> bool:
    return not result.rejected and bool(result.applied)


GOOD_NODE = dict(op="add", id="e9", name="Karakorum", type="location", component_ids=["P2"])
GOOD_EDGE = dict(op="add", id="r9", source="e2", target="e1", label="led by", component_ids=["P1"])

# rule -> (a patch it must reject, a close patch it must accept)
CASES = {
    "schema": (
        node(op="add", name="Karakorum", type="location"),  # no component_ids
        node(**GOOD_NODE),
    ),
    "unknown_id": (node(op="replace", id="e42", name="Ogedei"), node(op="replace", id="e1", name="Chinggis Khan")),
    "duplicate_id": (
        node(**{**GOOD_NODE, "id": "r1"}),  # ids of nodes and edges share one namespace
        node(**{**GOOD_NODE, "id": "e10"}),
    ),
    "grounding": (node(**{**GOOD_NODE, "component_ids": []}), node(**{**GOOD_NODE, "component_ids": ["P2", "P2"]})),
    "component_exists": (
        node(**{**GOOD_NODE, "component_ids": ["P2", "T7"]}),
        node(**{**GOOD_NODE, "component_ids": ["P2", "TI1"]}),
    ),
    "entity_type": (
        node(**{**GOOD_NODE, "type": "kpi"}),  # an env_reports type, not world_history
        node(**{**GOOD_NODE, "type": "Location"}),
    ),  # normalised to 'location'
    "modality": (
        node(**{**GOOD_NODE, "modality": "visual"}),  # a text type on a visual entity
        node(op="add", name="Steppe on the map", type="visual_object", component_ids=["IM1"]),
    ),
    "duplicate_entity": (
        node(op="add", name="genghis khan", type="person", component_ids=["P2"]),
        node(op="add", name="genghis khan", type="event", component_ids=["P2"]),
    ),
    "endpoint": (edge(**{**GOOD_EDGE, "target": "e7"}), edge(**GOOD_EDGE)),
    "self_loop": (edge(**{**GOOD_EDGE, "target": "e2"}), edge(**{**GOOD_EDGE, "target": "e3"})),
    "duplicate_edge": (
        edge(op="add", source="e1", target="e2", label="Founded", component_ids=["P2"]),
        edge(op="add", source="e2", target="e1", label="founded", component_ids=["P2"]),
    ),
}


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("rule", RULES)
def test_rule_rejects_and_accepts(rule):
    bad, good = CASES[rule]
    graph = base_graph()
    result = run(bad, graph)
    assert rejected_rules(result) == [rule], result.rejected
    assert result.graph == graph  # nothing applied
    assert result.rejected[0].message
    ok = run(good)
    assert accepted(ok), ok.rejected


def test_input_graph_is_not_modified():
    graph = base_graph()
    before = graph.model_copy(deep=True)
    result = run(GraphPatch(nodes=[NodeOp(op="delete", id="e1"), NodeOp(op="replace", id="e2", name="Yuan")]), graph)
    assert graph == before
    assert result.graph.node("e1") is None and result.graph.node("e2").name == "Yuan"


def test_add_replace_delete_semantics():
    patch = GraphPatch(
        nodes=[
            NodeOp(op="add", name="Karakorum", type="Location", component_ids=["P2", "P2"]),  # id assigned
            NodeOp(op="replace", id="e2", description="A steppe empire", component_ids=["P2"]),
            NodeOp(op="delete", id="e1"),
        ],
        edges=[EdgeOp(op="add", source="e4", target="e2", label="Capital Of", component_ids=["P2"])],
    )
    result = run(patch)
    assert not result.rejected
    g = result.graph
    new = g.node("e4")
    assert (new.name, new.type, new.modality, new.component_ids) == ("Karakorum", "location", "text", ["P2"])
    e2 = g.node("e2")
    assert (e2.name, e2.type, e2.description, e2.component_ids) == (
        "Mongol Empire",
        "organization",
        "A steppe empire",
        ["P2"],
    )
    # deleting e1 removed r1 with it; the new edge's label is normalised and its id assigned
    assert result.cascaded == ["r1"]
    assert [(e.id, e.source, e.target, e.label) for e in g.edges] == [("r2", "e4", "e2", "capital_of")]
    assert result.applied == [
        ("node", "add", "e4"),
        ("node", "replace", "e2"),
        ("node", "delete", "e1"),
        ("edge", "add", "r2"),
    ]


def test_visual_modality_is_inferred_from_a_visual_type():
    result = run(node(op="add", name="Legend of the map", type="chart_element", component_ids=["IM1"]))
    assert result.graph.node("e4").modality == "visual"


def test_replace_that_breaks_a_rule_keeps_the_old_item():
    result = run(
        GraphPatch(
            nodes=[NodeOp(op="replace", id="e1", component_ids=["X9"])],
            edges=[EdgeOp(op="replace", id="r1", target="e1")],
        )
    )
    assert rejected_rules(result) == ["component_exists", "self_loop"]
    assert result.graph == base_graph()


def test_edge_may_use_a_node_added_by_the_same_patch_and_not_a_deleted_one():
    patch = GraphPatch(
        nodes=[NodeOp(**GOOD_NODE), NodeOp(op="delete", id="e3")],
        edges=[
            EdgeOp(op="add", source="e9", target="e2", label="capital_of", component_ids=["P2"]),
            EdgeOp(op="add", source="e3", target="e2", label="shows", component_ids=["IM1"]),
        ],
    )
    result = run(patch)
    assert rejected_rules(result) == ["endpoint"]
    assert {e.label for e in result.graph.edges} == {"founded", "capital_of"}


def test_rejections_name_the_operation():
    result = run(node(op="delete", id="nope"))
    assert result.rejected[0].as_dict() == {
        "target": "node",
        "op": {"op": "delete", "id": "nope"},
        "rule": "unknown_id",
        "message": result.rejected[0].message,
    }


def test_schema_presets_follow_table_7():
    counts = {"picture_book": 12, "world_history": 13, "env_reports": 14, "dlcv_slides": 24}
    for preset, n in counts.items():
        schema = get_schema(preset)
        assert len(schema.text_types) == n
        assert schema.visual_types == VISUAL_TYPES and len(VISUAL_TYPES) == 6
    assert "general" in PRESETS and get_schema("general").concept_type in get_schema("general").text_types
    for preset in PRESETS:
        schema = get_schema(preset)
        assert schema.concept_type in schema.text_types
        assert schema.heading_type is None or schema.heading_type in schema.text_types
    with pytest.raises(ValueError, match="unknown KG4VD schema preset"):
        get_schema("recipes")
