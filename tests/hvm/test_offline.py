"""Offline HVM-GraphRAG over two shared documents (an ESG tax table page and a textbook excerpt):
build, the concept graph's invariants, ask with citations that resolve to real boxes, resume after
an interruption, and incremental remove / re-add."""

from __future__ import annotations

import pytest

from docgraph import Workspace
from docgraph.methods.hvm import HVMMethod
from docgraph.methods.hvm import build as hvm_build
from docgraph.methods.hvm.extract_text import OfflineTextStrategy
from docgraph.methods.hvm.state import (
    NS_CHUNK,
    NS_CONCEPT,
    NS_CONFLICT,
    NS_EDGE,
    NS_ENTITY,
    NS_EXTRACT,
    NS_FACT,
    NS_STATE,
    VEC_CHUNK,
    VEC_CONCEPT,
)
from docgraph.methods.retrieval.vector_index import delete_vectors, load_index

ACCIONA = "acciona_sustainability_report_2020_p1.pdf"
OPENSTAX = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="module")
def ws(tmp_path_factory, shared_data):
    workspace = Workspace(tmp_path_factory.mktemp("hvm-offline") / "ws", overrides={"models": {"build": {}}})
    docs = workspace.add([shared_data / "documents" / ACCIONA, shared_data / "documents" / OPENSTAX])
    workspace.docs = {d.path.rsplit("/", 1)[-1]: d for d in docs}
    workspace.report = workspace.build("hvm")
    yield workspace
    workspace.close()


def _facts(ws, doc_id):
    return {k: v for k, v in ws.store.iter_records(NS_FACT, doc_id=doc_id)}


def _check_citations(ws, answer):
    assert answer.citations
    for citation in answer.citations:
        page = ws.store.get_page(citation.doc_id, citation.page)
        assert page is not None and citation.component_ids
        for cid, box in zip(citation.component_ids, citation.bboxes, strict=True):
            comp = page.component(cid)
            assert comp is not None and comp.bbox == box
            assert box.area > 0 and box.inside(page.width, page.height)
        assert f"[{citation.number}]" in answer.text


def test_build_report_and_status(ws):
    report = ws.report
    assert report.pages_built == 6 and report.stats["extractor"] == "offline"
    assert report.stats["chunks"] == ws.store.count_records(NS_CHUNK) > 20
    status = ws.status()["hvm"]
    assert status["built_pages"] == status["total_pages"] == 6
    assert status["concepts"] > 10 and status["schema_edges"] > 10
    # offline conflicts are flagged, never silently "resolved"
    assert status["unresolved_conflicts"] == status["conflicts"]
    # status counts them from the documents' states (no decoding of the log), the same as the log
    logged = [row for _, row in ws.store.iter_records(NS_CONFLICT)]
    assert status["conflicts"] == len(logged) > 0
    assert status["unresolved_conflicts"] == sum(1 for row in logged if row["unresolved"])


def test_status_counts_conflicts_of_a_state_written_before_the_counters(ws):
    before = ws.status()["hvm"]
    states = dict(ws.store.iter_records(NS_STATE))
    old_style = {
        doc_id: {k: v for k, v in state.items() if not k.startswith("conflicts_")} for doc_id, state in states.items()
    }
    assert any(old_style[d] != states[d] for d in states), "the build recorded no conflict counters"
    try:
        ws.store.put_records(NS_STATE, [(doc_id, state, doc_id) for doc_id, state in old_style.items()])
        assert ws.status()["hvm"] == before
        assert ws.build("hvm").pages_built == 0  # nothing to build, but the states get their counters
        assert dict(ws.store.iter_records(NS_STATE)) == states, "the counters the build would have written"
        assert ws.status()["hvm"] == before
    finally:
        ws.store.put_records(NS_STATE, [(doc_id, state, doc_id) for doc_id, state in states.items()])


def test_table_rows_become_entities_and_facts(ws):
    doc = ws.docs[ACCIONA]
    entities = {k.split("|", 1)[1]: v for k, v in ws.store.iter_records(NS_ENTITY, doc_id=doc.id)}
    assert entities["spain"]["concept"] == "tax jurisdiction"
    assert "2,673" not in entities or not entities["2,673"]["mentions"]  # numbers are values, not mentions
    facts = _facts(ws, doc.id)
    spain = {f["relation"]: f["tail"] for f in facts.values() if f["head"] == "spain"}
    assert spain["total_sales"] == "2,673" and spain["corporate_income_tax_paid_on_a_cash_basis"] == "-0.7"


def test_concept_graph_matches_the_holistic_views(ws):
    chunks_of = {}
    for _, row in ws.store.iter_records(NS_ENTITY):
        for chunk in row["support"]:
            chunks_of.setdefault(row["concept"], set()).add(chunk)
    concepts = dict(ws.store.iter_records(NS_CONCEPT))
    assert set(concepts) == set(chunks_of)
    for name, row in concepts.items():  # I_con(c) = ∪ I_fac(e) over c's entities
        assert {c for part in row["docs"].values() for c in part["chunks"]} == chunks_of[name]
    assert set(load_index(ws.store, VEC_CONCEPT).keys) == set(concepts)
    phi = {row["key"]: row["concept"] for _, row in ws.store.iter_records(NS_ENTITY)}
    edges = {(r["head"], r["relation"], r["tail"]) for _, r in ws.store.iter_records(NS_EDGE)}
    from_facts = {(phi[f["head"]], f["relation"], phi[f["tail"]]) for _, f in ws.store.iter_records(NS_FACT)}
    assert edges == from_facts


def test_graph_view_shows_the_entities_and_facts_of_the_holistic_views(ws):
    """The web app's graph of HVM (``GraphBrowse``): an entity per record, grounded on the pages
    of its chunks; a fact between two entities is an edge."""
    view = HVMMethod().graph_view(ws.context())
    assert len(view) == ws.store.count_records(NS_ENTITY)
    doc = ws.docs[ACCIONA]
    spain = view.ids.index(f"{doc.id}|spain")
    [entity] = view.entities_of(ws.store, [spain])
    assert entity.type == "tax jurisdiction" and entity.mentions and {m.doc_id for m in entity.mentions} == {doc.id}
    page = ws.store.get_page(doc.id, entity.mentions[0].page)
    assert all(page.component(c) is not None for c in entity.mentions[0].component_ids)
    relations = view.relations_of(ws.store, range(len(view.endpoints)))
    facts = {(f["head"], f["relation"], f["tail"]) for f in _facts(ws, doc.id).values()}
    assert relations and all(r.source in view.ids and r.target in view.ids for r in relations)
    assert {
        (r.source.split("|", 1)[1], r.label, r.target.split("|", 1)[1]) for r in relations if doc.id in r.source
    } <= facts
    assert view.nodes_on_pages([(doc.id, entity.mentions[0].page)]).tolist().count(spain) == 1
    assert HVMMethod().graph_view(ws.context()) is view  # kept until the next build


def test_offline_ask_cites_the_tax_table(ws):
    answer = ws.ask("What were the total sales in Spain in the tax jurisdiction table?", method="hvm")
    assert not answer.model_used and answer.text.startswith("No answer model is configured")
    assert "Spain — Total sales (M€): 2,673" in answer.text  # the table row is quoted, not the whole table
    assert any(sc.chunk.modality == "table" and sc.chunk.doc_id == ws.docs[ACCIONA].id for sc in answer.evidence.chunks)
    assert answer.evidence.entities and answer.evidence.timings["retrieve"] < 5
    _check_citations(ws, answer)


def test_offline_ask_finds_the_author_passage(ws):
    answer = ws.ask("Who wrote Arab Conquests and Early Islamic Historiography?", method="hvm")
    doc = ws.docs[OPENSTAX]
    assert any(c.doc_id == doc.id and c.page == 5 for c in answer.citations)
    assert "Arab Conquests" in answer.text
    _check_citations(ws, answer)


def test_interrupted_build_resumes_where_it_stopped(ws, monkeypatch):
    doc = ws.docs[ACCIONA]
    before = _facts(ws, doc.id)
    HVMMethod().remove_document(ws.context(), doc.id)  # forget HVM's work on it; the document stays
    assert ws.store.get_record(NS_STATE, doc.id) is None
    folded = []
    original_fold = hvm_build.fold_chunk

    def interrupted(view, chunk, *args, **kwargs):
        if len(folded) == 4:
            raise KeyboardInterrupt  # the user pressed Ctrl-C while the fifth chunk was being folded in
        folded.append(chunk.id)
        return original_fold(view, chunk, *args, **kwargs)

    monkeypatch.setattr(hvm_build, "fold_chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ws.build("hvm")
    state = ws.store.get_record(NS_STATE, doc.id)
    assert state["done"] == 4 and not state["complete"]
    assert {f["chunks"][0] for f in _facts(ws, doc.id).values()} <= set(folded)

    extracted = []
    original_extract = OfflineTextStrategy.extract
    monkeypatch.setattr(
        OfflineTextStrategy, "extract", lambda self, items: extracted.extend(items) or original_extract(self, items)
    )
    monkeypatch.setattr(hvm_build, "fold_chunk", original_fold)
    report = ws.build("hvm")
    assert report.pages_built == 1 and report.pages_skipped == 5
    assert report.stats["chunks"] == state["chunks"] - 4  # folded chunks were not redone
    assert extracted == []  # the window's extractions were stored before the interruption
    assert _facts(ws, doc.id) == before


def test_remove_then_add_again_is_incremental(ws, shared_data):
    doc = ws.docs[ACCIONA]
    other = ws.docs[OPENSTAX]
    other_facts = _facts(ws, other.id)
    ws.remove(doc.id)
    for namespace in (NS_CHUNK, NS_FACT, NS_ENTITY, NS_EXTRACT, NS_STATE):
        assert list(ws.store.iter_records(namespace, doc_id=doc.id)) == []
    assert not any(k.startswith(doc.id) for k in load_index(ws.store, VEC_CHUNK).keys)
    concepts = dict(ws.store.iter_records(NS_CONCEPT))
    assert "tax jurisdiction" not in concepts and "tax jurisdiction" not in load_index(ws.store, VEC_CONCEPT).keys
    assert all(doc.id not in row["docs"] for row in concepts.values())
    assert _facts(ws, other.id) == other_facts
    evidence = ws.retrieve("total sales in Spain", method="hvm")
    assert evidence.chunks and all(sc.chunk.doc_id == other.id for sc in evidence.chunks)

    ws.add(shared_data / "documents" / ACCIONA)
    report = ws.build("hvm")
    assert report.pages_built == 1 and report.pages_skipped == 5
    assert "tax jurisdiction" in dict(ws.store.iter_records(NS_CONCEPT))
    evidence = ws.retrieve("total sales in Spain", method="hvm")
    assert any(sc.chunk.doc_id == doc.id for sc in evidence.chunks)


def test_lost_vectors_are_rebuilt_without_rebuilding_the_graph(ws):
    other = ws.docs[OPENSTAX]
    chunk_keys = set(load_index(ws.store, VEC_CHUNK).keys)
    concept_keys = set(load_index(ws.store, VEC_CONCEPT).keys)
    delete_vectors(ws.store, VEC_CHUNK, doc_id=other.id)
    delete_vectors(ws.store, VEC_CONCEPT)
    report = ws.build("hvm")
    assert report.pages_built == 0 and report.pages_skipped == 6
    assert set(load_index(ws.store, VEC_CHUNK).keys) == chunk_keys
    assert set(load_index(ws.store, VEC_CONCEPT).keys) == concept_keys


def test_build_notes_are_grouped_by_message():
    notes = [f"d:{p}:IM{i}: picture without caption or nearby text" for p in (1, 2) for i in (1, 2)]
    notes.append("d:3:T1: table without Markdown rows: extracted as text")
    lines = hvm_build.summarize_notes(notes)
    assert lines == [
        "picture without caption or nearby text (4 chunks: d:1:IM1, d:1:IM2, d:2:IM1, …)",
        "table without Markdown rows: extracted as text (1 chunk: d:3:T1)",
    ]
    assert hvm_build.summarize_notes([]) == []


def test_graph_reset_makes_the_next_build_extract_again(ws, capsys):
    """`docgraph graph reset --method hvm`: after a change to how pages or tables are read, the
    next build extracts every document again; the chunks and their vectors stay."""
    from docgraph.cli import main

    facts = {doc.id: _facts(ws, doc.id) for doc in ws.docs.values()}
    chunks = ws.store.count_records(NS_CHUNK)
    assert main(["graph", "reset", "--method", "hvm", "--workspace", str(ws.root)]) == 0
    assert "removed the HVM-GraphRAG graph (2 documents)" in capsys.readouterr().out
    for namespace in (NS_FACT, NS_EXTRACT, NS_STATE, NS_CONCEPT):
        assert ws.store.count_records(namespace) == 0, namespace
    assert ws.store.count_records(NS_CHUNK) == chunks
    report = ws.build("hvm")
    assert report.pages_built == 6 and report.pages_skipped == 0
    assert {doc.id: _facts(ws, doc.id) for doc in ws.docs.values()} == facts
