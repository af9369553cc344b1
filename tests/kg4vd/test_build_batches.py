"""Large builds in parts: the structural layer and the cross-page connection are written in
batches (``INDEX_BATCH_PAGES``, ``kg4vd.connect_batch_pages``), so memory stays bounded and an
interrupted connection resumes at its batch."""

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


def test_a_batched_connection_equals_adding_the_documents_one_at_a_time(wh_workspace, shared_data, wh_pdf,
                                                                        tmp_path):
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


def test_an_interrupted_connection_keeps_its_finished_batches_and_resumes(wh_workspace, shared_data,
                                                                          monkeypatch):
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
