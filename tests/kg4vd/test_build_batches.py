"""Large builds in parts: the structural layer and the cross-page connection are written in
batches (``INDEX_BATCH_PAGES``, ``kg4vd.connect_batch_pages``), so memory stays bounded and an
interrupted connection resumes at its batch; removing a document reads only its part of the
graph (``kg4vd.docgraph``), and connecting one only the part it touches (``kg4vd.incident``)."""

from __future__ import annotations

import pytest
from test_build_offline import snapshot

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.methods.kg4vd import build as kb
from docgraph.methods.kg4vd import storage as st

ESG = "documents/acciona_sustainability_report_2020_p1.pdf"


def test_batches_hold_whole_documents_and_close_once_full():
    keys = [f"a:{n}" for n in (1, 2, 3)] + ["b:1"] + [f"c:{n}" for n in (1, 2)]
    assert kb.connect_batches(keys, 2) == [["a:1", "a:2", "a:3"], ["b:1", "c:1", "c:2"]]
    assert kb.connect_batches(keys, 1) == [["a:1", "a:2", "a:3"], ["b:1"], ["c:1", "c:2"]]
    assert kb.connect_batches(keys, 1000) == [keys]
    assert kb.connect_batches([], 3) == []


def _two_documents(make, shared_data, **overrides):
    ws = make(**overrides)
    ws.add(shared_data / ESG)
    return ws


def test_a_batched_connection_equals_adding_the_documents_one_at_a_time(wh_workspace, shared_data, wh_pdf, tmp_path):
    batched = _two_documents(wh_workspace, shared_data, name="batched", kg4vd={"connect_batch_pages": 1})
    report = batched.build("kg4vd")
    assert report.stats["connected_pages"] == 6 and batched.status()["kg4vd"]["complete"]
    first, second = sorted(batched.documents(), key=lambda d: d.id)  # batches follow document order
    paths = {d.id: (wh_pdf if d.page_count == 5 else shared_data / ESG) for d in (first, second)}

    root = tmp_path / "incremental"
    with Workspace(root, settings=load_settings(root, environ={})) as incremental:
        incremental.add(paths[first.id])
        incremental.build("kg4vd")
        incremental.add(paths[second.id])
        assert incremental.build("kg4vd").stats["connected_pages"] == second.page_count
        assert snapshot(incremental) == snapshot(batched)


def test_an_interrupted_connection_keeps_its_finished_batches_and_resumes(wh_workspace, shared_data, monkeypatch):
    reference = _two_documents(wh_workspace, shared_data, name="reference", kg4vd={"connect_batch_pages": 1})
    reference.build("kg4vd")
    ws = _two_documents(wh_workspace, shared_data, name="interrupted", kg4vd={"connect_batch_pages": 1})
    real, calls = kb.connect, []

    def connect_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second batch is judged
        return real(*args, **kwargs)

    monkeypatch.setattr(kb, "connect", connect_once)
    with pytest.raises(KeyboardInterrupt):
        ws.build("kg4vd")
    first = min(d.id for d in ws.documents())
    connected = ws.store.record_keys(st.NS_CONNECTED)
    assert connected and {st.parse_page_key(k)[0] for k in connected} == {first}  # the first batch is kept
    assert not ws.status()["kg4vd"]["complete"]

    monkeypatch.setattr(kb, "connect", real)
    report = ws.build("kg4vd")
    assert report.pages_built == 0 and report.stats["connected_pages"] == 6 - len(connected)
    assert snapshot(ws) == snapshot(reference)


def _mentioning(ws, doc_id: str) -> tuple[set[str], set[str]]:
    return (
        {k for k, e in st.load_entities(ws.store).items() if any(m.doc_id == doc_id for m in e.mentions)},
        {k for k, r in st.load_relations(ws.store).items() if any(m.doc_id == doc_id for m in r.mentions)},
    )


def _listed(ws, doc_id: str) -> tuple[set[str], set[str]]:
    record = ws.store.get_record(st.NS_DOC_GRAPH, doc_id) or {}
    return set(record.get("entities", [])), set(record.get("relations", []))


def test_removing_a_document_reads_only_its_part_of_the_graph(wh_workspace, shared_data, monkeypatch):
    reference = _two_documents(wh_workspace, shared_data, name="scanned")
    reference.build("kg4vd")
    esg = next(d.id for d in reference.documents() if d.page_count == 1)
    reference.store.set_meta(st.DOC_GRAPH_META, "")  # as a workspace built before the index: a full read
    reference.remove(esg)

    ws = _two_documents(wh_workspace, shared_data, name="indexed")
    ws.build("kg4vd")
    for doc in ws.documents():
        mentioned, listed = _mentioning(ws, doc.id), _listed(ws, doc.id)
        assert mentioned[0] and mentioned[0] <= listed[0] and mentioned[1] <= listed[1], doc.id

    def whole_graph(store):
        raise AssertionError("removing one document read the whole graph")

    monkeypatch.setattr(st, "load_entities", whole_graph)
    monkeypatch.setattr(st, "load_relations", whole_graph)
    ws.remove(esg)
    monkeypatch.undo()
    assert snapshot(ws) == snapshot(reference)
    assert ws.store.get_record(st.NS_DOC_GRAPH, esg) is None


def test_a_workspace_built_before_the_index_is_indexed_at_its_next_build(wh_workspace, shared_data):
    ws = wh_workspace(name="legacy")
    ws.build("kg4vd")
    ws.store.delete_records(st.NS_DOC_GRAPH)
    ws.store.set_meta(st.DOC_GRAPH_META, "")
    (esg,) = ws.add(shared_data / ESG)
    ws.build("kg4vd")
    assert ws.store.get_meta(st.DOC_GRAPH_META)
    for doc in ws.documents():
        mentioned, listed = _mentioning(ws, doc.id), _listed(ws, doc.id)
        assert mentioned[0] and mentioned[0] <= listed[0] and mentioned[1] <= listed[1], doc.id


def _incidence_covers_every_relation(ws) -> None:
    listed = {k: set(v["relations"]) for k, v in ws.store.iter_records(st.NS_INCIDENT)}
    relations = st.load_relations(ws.store)
    assert relations
    for key, rel in relations.items():
        assert key in listed.get(rel.source, set()) and key in listed.get(rel.target, set()), key


def test_connecting_a_document_reads_only_the_part_of_the_graph_it_touches(wh_workspace, shared_data, monkeypatch):
    """A later document is connected without reading the whole canonical graph: the entities
    read are its candidates and the ones it merges, the relations those around the merged ones."""
    from docgraph.methods.kg4vd import canonical

    ws = wh_workspace(name="touched")
    ws.build("kg4vd")
    before = st.load_entities(ws.store), st.load_relations(ws.store)
    _incidence_covers_every_relation(ws)
    read_entities, read_relations, asked = set(), set(), set()
    entities, touching = canonical.StoredGraph.entities, canonical.StoredGraph.relations_touching

    def spy_entities(self, ids):
        found = entities(self, ids)
        read_entities.update(found)
        return found

    def spy_touching(self, ids):
        ids = list(ids)
        asked.update(ids)
        found = touching(self, ids)
        read_relations.update(found)
        return found

    monkeypatch.setattr(canonical.StoredGraph, "entities", spy_entities)
    monkeypatch.setattr(canonical.StoredGraph, "relations_touching", spy_touching)
    ws.add(shared_data / ESG)
    ws.build("kg4vd")
    monkeypatch.undo()
    assert read_entities and len(read_entities) < len(before[0]), "candidates only, not every entity"
    assert read_relations and len(read_relations) < len(before[1])
    assert all(before[1][k].source in asked or before[1][k].target in asked for k in read_relations)
    _incidence_covers_every_relation(ws)


def test_a_workspace_built_before_the_incidence_index_is_indexed_at_its_next_build(wh_workspace, shared_data):
    reference = wh_workspace(name="indexed")
    reference.build("kg4vd")
    reference.add(shared_data / ESG)
    reference.build("kg4vd")
    ws = wh_workspace(name="legacy-incidence")
    ws.build("kg4vd")
    ws.store.delete_records(st.NS_INCIDENT)
    ws.store.set_meta(st.INCIDENT_META, "")
    ws.add(shared_data / ESG)
    ws.build("kg4vd")
    assert ws.store.get_meta(st.INCIDENT_META)
    _incidence_covers_every_relation(ws)
    assert snapshot(ws) == snapshot(reference)


def test_status_reads_the_size_the_last_batch_recorded_and_counts_again_after_a_removal(
    wh_workspace, shared_data, monkeypatch
):
    """Each connection batch records the graph's size in its transaction, so ``status``
    never counts the entity and relation rows a build has just written; a removal clears
    the record, and the size is counted afresh."""
    ws = _two_documents(wh_workspace, shared_data, name="size", kg4vd={"connect_batch_pages": 1})
    ws.build("kg4vd")
    counted = (ws.store.count_records(st.NS_ENTITY), ws.store.count_records(st.NS_RELATION))
    assert counted[0] > 0 and counted[1] > 0
    real = ws.store.count_records

    def graph_not_counted(namespace, *args, **kwargs):
        assert namespace not in (st.NS_ENTITY, st.NS_RELATION), f"status counted {namespace}"
        return real(namespace, *args, **kwargs)

    monkeypatch.setattr(ws.store, "count_records", graph_not_counted)
    status = ws.status()["kg4vd"]
    assert (status["entities"], status["relations"]) == counted
    monkeypatch.undo()

    ws.remove(sorted(ws.documents(), key=lambda d: d.id)[0].id)
    left = (ws.store.count_records(st.NS_ENTITY), ws.store.count_records(st.NS_RELATION))
    assert left[0] < counted[0]
    status = ws.status()["kg4vd"]
    assert (status["entities"], status["relations"]) == left
