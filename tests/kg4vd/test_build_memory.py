"""What an offline KG4VD build keeps in memory while it extracts and connects pages.

At 10,682 pages the main process of a build held 2.3 GB: every finished page's graph
record stayed reachable until the last page was done, and the first connection batch's
entities and relations (kept as the running total) until the last batch. A finished page
is dropped once it is counted; a connected batch once it is written, and a batch's
grounding context reads the chunks of the documents it touches, not every chunk."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from docgraph.methods.kg4vd import build as kg4vd_build
from docgraph.methods.kg4vd.index import GroundingContext
from docgraph.methods.kg4vd.storage import NS_CHUNK, VEC_CHUNK, load_entities
from docgraph.methods.retrieval.vector_index import load_index
from docgraph.progress import RecordingProgress


class LiveRecords(RecordingProgress):
    """Counts, at every page advance, how many finished page records are still alive."""

    def __init__(self, refs: list[weakref.ref]):
        super().__init__()
        self.refs = refs
        self.alive_at_advance: list[tuple[int, int]] = []  # (pages finished, records alive)

    def advance(self, n: int = 1, **stats) -> None:
        super().advance(n, **stats)
        if self.description == "kg4vd pages":
            gc.collect()
            self.alive_at_advance.append((len(self.refs), sum(ref() is not None for ref in self.refs)))


def test_finished_page_records_are_not_kept_until_the_last_page(wh_workspace, monkeypatch):
    refs: list[weakref.ref] = []
    real_build_page = kg4vd_build.build_page

    def build_page(*args, **kwargs):
        record = real_build_page(*args, **kwargs)
        refs.append(weakref.ref(record))
        return record

    monkeypatch.setattr(kg4vd_build, "build_page", build_page)
    ws = wh_workspace()
    progress = LiveRecords(refs)
    report = ws.build("kg4vd", progress=progress)

    assert report.pages_built == 5 and len(refs) == 5
    assert len(progress.alive_at_advance) == 5 and progress.alive_at_advance[-1][0] == 5
    # at most the page being counted and one that a worker just returned are alive, however many are done
    assert max(alive for _, alive in progress.alive_at_advance) <= kg4vd_build.OFFLINE_WORKERS


def test_a_connected_batch_is_not_kept_while_the_next_one_runs(wh_workspace, shared_data, monkeypatch):
    """Each batch's entities and relations are written, then dropped: only counts go on."""
    ws = wh_workspace(kg4vd={"connect_batch_pages": 1})
    ws.add(shared_data / "documents/acciona_sustainability_report_2020_p1.pdf")  # a second batch
    results: list[weakref.ref] = []
    alive_when_batch_starts: list[int] = []
    real_connect = kg4vd_build._connect_and_write

    def connect_and_write(*args, **kwargs):
        gc.collect()
        alive_when_batch_starts.append(sum(ref() is not None for ref in results))
        result = real_connect(*args, **kwargs)
        results.extend(weakref.ref(entity) for entity in result.entities.values())  # the batch's canonical entities
        return result

    alive_when_heap_released: list[int] = []

    def release_free_heap() -> bool:  # no collection here: cyclic garbage must be gone already
        alive_when_heap_released.append(sum(ref() is not None for ref in results))
        return False

    monkeypatch.setattr(kg4vd_build, "_connect_and_write", connect_and_write)
    monkeypatch.setattr(kg4vd_build, "release_free_heap", release_free_heap)
    report = ws.build("kg4vd")

    assert len(alive_when_batch_starts) == 2 and results  # two batches that wrote entities
    assert alive_when_batch_starts == [0, 0]  # the first batch's entities are gone before the second starts
    # the heap is handed back after the page vectors and after each batch, once the batch is freed
    assert alive_when_heap_released == [0, 0, 0]
    assert report.stats["connected_pages"] == 6 and report.stats["merged_entities"] >= 0


def test_grounding_context_reads_only_the_documents_it_is_asked_about(wh_workspace, shared_data, monkeypatch):
    """A connection batch's grounding reads the chunk records of the documents its mentions
    lie in, not every chunk of the workspace; the context vectors are those of a full read."""
    ws = wh_workspace()
    ws.add(shared_data / "documents/acciona_sustainability_report_2020_p1.pdf")
    ws.build("kg4vd")
    ctx = ws.context()
    entities = list(load_entities(ws.store).values())
    docs = sorted({m.doc_id for e in entities for m in e.mentions})
    assert len(docs) == 2
    asked = [e for e in entities if {m.doc_id for m in e.mentions} == {docs[0]}]

    read: list[str | None] = []
    real_iter = ws.store.iter_records

    def iter_records(namespace, doc_id=None):
        if namespace == NS_CHUNK:
            read.append(doc_id)
        return real_iter(namespace, doc_id=doc_id)

    monkeypatch.setattr(ws.store, "iter_records", iter_records)
    grounding = GroundingContext(ctx)
    vectors = [grounding.vector(e.mentions) for e in asked]
    assert read == [docs[0]]  # one read, of the one document asked about

    # the same context a full read of every chunk gives
    index = load_index(ws.store, VEC_CHUNK)
    by_component: dict[tuple, list] = {}
    for key, value in real_iter(NS_CHUNK):
        for component in value["component_ids"]:
            by_component.setdefault((value["doc_id"], value["page"], component), []).append(key)
    grounded = 0
    for entity, vector in zip(asked, vectors):
        rows = [
            index.vector(key)
            for m in entity.mentions  # each chunk once per mention
            for key in dict.fromkeys(
                key for c in m.component_ids for key in by_component.get((m.doc_id, m.page, c), [])
            )
        ]
        if not rows:
            assert vector is None
            continue
        grounded += 1
        assert np.allclose(vector, np.mean(rows, axis=0))
    assert grounded > len(asked) // 2
