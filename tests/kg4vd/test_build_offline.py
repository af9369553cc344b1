"""Offline KG4VD builds of the real World History excerpt: cross-page connection, resume,
incremental add and remove, the ablation switch."""

from __future__ import annotations

from collections import Counter

import pytest

from docgraph.methods.kg4vd import storage as st
from docgraph.progress import RecordingProgress


def snapshot(ws) -> dict:
    return {
        "entities": {k: e.model_dump() for k, e in st.load_entities(ws.store).items()},
        "relations": {k: r.model_dump() for k, r in st.load_relations(ws.store).items()},
        "pages": {g.key: g.model_dump() for g in st.iter_page_graphs(ws.store)},
        "entity_vectors": sorted(ws.store.load_vectors(st.VEC_ENTITY)[0]),
        "relation_vectors": sorted(ws.store.load_vectors(st.VEC_RELATION)[0]),
    }


def pages_of(entity) -> set[int]:
    return {m.page for m in entity.mentions}


def test_offline_pages_run_the_loop_until_nothing_is_left(wh_built):
    ws, report = wh_built
    assert (report.pages_built, report.pages_skipped, report.stats["failed_pages"]) == (5, 0, 0)
    for graph in st.iter_page_graphs(ws.store):
        assert graph.strategy == "offline" and graph.usage.calls == 0
        assert 1 <= graph.rounds <= 5 and graph.stop_reason in ("signal", "idle")
        assert len(graph.feedback) == graph.rounds
        # later rounds only add what the feedback asked for: the final feedback has no uncovered text
        last = {c["component_id"]: c["status"] for c in graph.feedback[-1]["components"]}
        page = ws.store.get_page(graph.doc_id, graph.page)
        assert set(last) == {c.id for c in page.components}
        if graph.stop_reason == "signal":
            assert set(last.values()) == {"covered"}
    assert sum(g.rounds > 1 for g in st.iter_page_graphs(ws.store)) >= 3  # the loop is not single-pass


def test_cross_page_merging_and_related_edges(wh_built):
    ws, report = wh_built
    entities, relations = st.load_entities(ws.store), st.load_relations(ws.store)
    instances = sum(len(g.entities) for g in st.iter_page_graphs(ws.store))
    assert report.stats["merged_entities"] == instances - len(entities) > 0
    merged = [e for e in entities.values() if len(pages_of(e)) > 1]
    names = {e.name for e in merged}
    assert {"Julie Tatlock", "Brooke Nelson"} <= names  # authors named on pages 4 and 5
    for entity in merged:  # every mention is kept, on its own page
        assert len(entity.mentions) >= 2 and all(m.component_ids for m in entity.mentions)
    # relations point at canonical entities, no duplicate edges survive the merge
    assert all(r.source in entities and r.target in entities for r in relations.values())
    triples = Counter((r.source, r.target, r.label) for r in relations.values())
    assert max(triples.values()) == 1
    related = [r for r in relations.values() if r.cross_page]
    assert related and all(r.label == "related_to" for r in related)
    for rel in related:
        assert rel.source != rel.target
        assert {(m.doc_id, m.page) for m in rel.mentions} and len(rel.mentions) == 2
    assert any(pages_of(entities[r.source]) != pages_of(entities[r.target]) for r in related)
    assert report.stats["verdicts"]["related"] >= len(related)


def test_no_cross_page_ablation_keeps_page_entities_apart(wh_workspace):
    ws = wh_workspace(**{"kg4vd": {"cross_page": False}})
    report = ws.build("kg4vd")
    entities, relations = st.load_entities(ws.store), st.load_relations(ws.store)
    assert len(entities) == sum(len(g.entities) for g in st.iter_page_graphs(ws.store))
    assert all(len(pages_of(e)) == 1 for e in entities.values())
    assert not any(r.cross_page for r in relations.values())
    assert "verdicts" in report.stats and not report.stats["verdicts"]


class Interrupt(RecordingProgress):
    """Raises KeyboardInterrupt (as Ctrl-C would) when the ``at``-th page finishes."""

    def __init__(self, at: int):
        super().__init__()
        self.at = at

    def advance(self, n: int = 1, **stats) -> None:
        super().advance(n, **stats)
        if self.description == "kg4vd pages" and self.done == self.at:
            raise KeyboardInterrupt


def test_resume_after_interruption_yields_the_same_graph(wh_built, wh_workspace):
    reference, _ = wh_built
    ws = wh_workspace()
    with pytest.raises(KeyboardInterrupt):
        ws.build("kg4vd", progress=Interrupt(at=2))
    stored = ws.status()["kg4vd"]["built_pages"]
    assert 2 <= stored < 5  # finished pages were kept (pages in flight finish too)
    assert not st.load_entities(ws.store)  # nothing connected yet
    progress = RecordingProgress()
    report = ws.build("kg4vd", progress=progress)
    assert (report.pages_built, report.pages_skipped) == (5 - stored, stored)
    assert snapshot(ws) == snapshot(reference)
    assert ws.status()["kg4vd"] == reference.status()["kg4vd"] | {"complete": True}

    again = ws.build("kg4vd")  # a finished build does nothing
    assert (again.pages_built, again.pages_skipped, again.stats["page_vectors"]) == (0, 5, 0)
    assert "connected_pages" not in again.stats
    assert snapshot(ws) == snapshot(reference)


def _status_matches_the_graph(ws) -> None:
    """``status`` (which counts the graph once per change) agrees with the graph as stored."""
    status = ws.status()["kg4vd"]
    assert (status["entities"], status["relations"]) == (
        len(st.load_entities(ws.store)),
        len(st.load_relations(ws.store)),
    )
    assert status["built_pages"] == len(ws.store.record_keys(st.NS_PAGEGRAPH))


def test_added_document_is_connected_and_removed_again(wh_workspace, shared_data):
    ws = wh_workspace()
    ws.build("kg4vd")
    _status_matches_the_graph(ws)
    before = snapshot(ws)
    (esg,) = ws.add(shared_data / "documents" / "acciona_sustainability_report_2020_p1.pdf")
    report = ws.build("kg4vd")
    assert (report.pages_built, report.pages_skipped, report.stats["connected_pages"]) == (1, 5, 1)
    entities = st.load_entities(ws.store)
    assert set(before["entities"]) <= set(entities)  # existing canonical ids stay
    new = [e for e in entities.values() if any(m.doc_id == esg.id for m in e.mentions)]
    assert new and any(e.modality == "visual" and e.type == "table_region" for e in new)
    assert len(ws.store.load_vectors(st.VEC_PAGE)[0]) == 6
    _status_matches_the_graph(ws)
    assert ws.status()["kg4vd"]["total_pages"] == 6

    ws.remove(esg.id)
    _status_matches_the_graph(ws)
    after = snapshot(ws)
    assert set(after["entities"]) == set(before["entities"])
    assert set(after["relations"]) == set(before["relations"])
    for key, entity in after["entities"].items():
        assert entity["mentions"] == before["entities"][key]["mentions"]
    assert after["entity_vectors"] == before["entity_vectors"]
    assert after["relation_vectors"] == before["relation_vectors"]
    assert len(ws.store.load_vectors(st.VEC_PAGE)[0]) == 5
    assert ws.status()["kg4vd"]["total_pages"] == 5


def test_schema_preset_from_config_types_the_entities(wh_workspace):
    from docgraph.methods.kg4vd.schemas import get_schema

    ws = wh_workspace(**{"kg4vd": {"schema_preset": "world_history"}})
    ws.build("kg4vd")
    schema = get_schema("world_history")
    types = {e.type for e in st.load_entities(ws.store).values()}
    assert all(t in schema.all_types for t in types)
    assert {"person", "section", "scientific_concept"} <= types and "concept" not in types


def test_offline_entities_skip_headings_and_document_words(wh_built):
    """Offline NER output is filtered (``offline.entity_quality``): a whole heading typed as
    an organisation, names made of document-structure words ("Reflection Questions"), and
    single-word nationalities as groups do not reach the graph as such."""
    from docgraph.methods.kg4vd.offline import entity_quality
    from docgraph.types import BBox, Component, ComponentKind

    def comp(kind, text):
        return Component(
            id="TI1" if kind is ComponentKind.TITLE else "P1",
            kind=kind,
            bbox=BBox(x0=0, y0=0, x1=1, y1=1),
            text=text,
            order=0,
        )

    heading = comp(ComponentKind.TITLE, "Reflection Questions")
    assert entity_quality("Reflection Questions", "ORG", heading) == "drop"
    assert entity_quality("Key Terms", "ORG", comp(ComponentKind.PARAGRAPH, "see Key Terms")) == "drop"
    assert entity_quality("The Silk Road", "ORG", comp(ComponentKind.TITLE, "The Silk Road")) == "drop"
    assert entity_quality("Genghis Khan", "PERSON", comp(ComponentKind.TITLE, "Genghis Khan")) == "keep"
    assert entity_quality("Islamic", "NORP", comp(ComponentKind.PARAGRAPH, "Islamic scholars")) == "concept"
    assert entity_quality("Yuan dynasty", "ORG", comp(ComponentKind.PARAGRAPH, "the Yuan dynasty ruled")) == "keep"
    names = {(e.name, e.type) for e in st.load_entities(wh_built[0].store).values()}
    assert not any(
        name.lower() in ("reflection questions", "key terms") and type_ != "section" for name, type_ in names
    )
    assert not any(len(name.split()) == 1 and type_ == "group" and name.endswith("ic") for name, type_ in names)
