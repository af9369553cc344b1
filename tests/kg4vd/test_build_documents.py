"""An offline build of every shared document: every fact is grounded on its page; stats and exports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from docgraph.cli import main
from docgraph.methods.kg4vd import storage as st
from docgraph.methods.kg4vd.index import indexed_relation
from docgraph.methods.kg4vd.schemas import get_schema


@pytest.fixture(scope="module")
def built(all_docs_built):
    return all_docs_built


def test_every_page_is_built_and_indexed(built):
    ws, report = built
    status = ws.status()["kg4vd"]
    assert status["built_pages"] == status["total_pages"] == status["connected_pages"] >= 250
    assert status["complete"] and report.stats["failed_pages"] == 0
    entities, relations = st.load_entities(ws.store), st.load_relations(ws.store)
    assert set(ws.store.load_vectors(st.VEC_ENTITY)[0]) == set(entities)
    assert set(ws.store.load_vectors(st.VEC_RELATION)[0]) == {k for k, r in relations.items() if indexed_relation(r)}
    bare = [r for r in relations.values() if not indexed_relation(r)]  # offline cross-page edges: no vector
    assert bare and all(r.cross_page and r.label == "related_to" and not r.description for r in bare)
    assert len(ws.store.load_vectors(st.VEC_PAGE)[0]) == status["total_pages"]
    per_doc = Counter(m.doc_id for e in entities.values() for m in e.mentions)
    assert set(per_doc) == {d.id for d in ws.documents()}  # every document contributes entities


def test_every_entity_and_relation_cites_a_component_on_its_page(built):
    ws, _ = built
    pages: dict[tuple[str, int], object] = {}

    def page(doc_id, number):
        if (doc_id, number) not in pages:
            pages[(doc_id, number)] = ws.store.get_page(doc_id, number)
        return pages[(doc_id, number)]

    entities, relations = st.load_entities(ws.store), st.load_relations(ws.store)
    for item in [*entities.values(), *relations.values()]:
        assert item.mentions, item
        for mention in item.mentions:
            p = page(mention.doc_id, mention.page)
            assert p is not None, mention
            comps = [p.component(cid) for cid in mention.component_ids]
            assert comps and all(c is not None for c in comps), (item.id, mention)
            assert all(c.bbox.inside(p.width, p.height) for c in comps), (item.id, mention)
    for rel in relations.values():
        assert rel.source in entities and rel.target in entities


def test_types_follow_the_schema_and_visual_entities_come_from_visual_regions(built):
    ws, _ = built
    schema = get_schema("general")
    entities = st.load_entities(ws.store).values()
    assert all(schema.allows(e.type, e.modality) for e in entities)
    visual = [e for e in entities if e.modality == "visual"]
    assert {"table_region", "figure_panel"} <= {e.type for e in visual}
    for entity in visual:
        p = ws.store.get_page(entity.mentions[0].doc_id, entity.mentions[0].page)
        assert any(p.component(c).kind.is_visual for c in entity.mentions[0].component_ids)


def test_graph_stats_and_exports(built, tmp_path, capsys):
    ws, _ = built
    root = str(ws.root)
    assert main(["--workspace", root, "graph", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    entities, relations = st.load_entities(ws.store), st.load_relations(ws.store)
    assert stats["entities"] == len(entities) == sum(stats["entities_by_type"].values())
    assert set(stats["entities_by_modality"]) == {"text", "visual"}
    assert stats["relations"] == len(relations) and stats["pages"] >= 250
    assert sum(stats["rounds_per_page"].values()) == stats["pages"] and stats["usage"] == {}
    assert stats["merged"] == stats["page_entities"] - stats["entities"] > 0

    assert main(["--workspace", root, "graph", "stats"]) == 0
    text = capsys.readouterr().out
    assert "entities by type" in text and "rounds per page" in text and "offline build" in text

    graphml = tmp_path / "g.graphml"
    assert main(["--workspace", root, "graph", "export", "--format", "graphml", "--out", str(graphml)]) == 0
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    tree = ET.parse(graphml).getroot()
    assert len(tree.findall(".//g:node", ns)) == len(entities)
    assert len(tree.findall(".//g:edge", ns)) == len(relations)

    out = tmp_path / "g.json"
    assert main(["--workspace", root, "graph", "export", "--format", "json", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["entities"]) == len(entities) and len(data["page_graphs"]) == stats["pages"]
    assert main(["--workspace", root, "graph", "export", "--out", str(tmp_path / "missing" / "x.json")]) == 1
    assert "does not exist" in capsys.readouterr().err
