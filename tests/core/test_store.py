"""The embedded SQLite store: documents/pages, records, vectors, cache, usage, transactions."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from docgraph.errors import StoreError
from docgraph.store import SQLiteStore
from docgraph.types import BBox, Component, ComponentKind, Document, Page, Usage


def _doc(doc_id: str = "abc123", sha: str = "f" * 64) -> Document:
    return Document(id=doc_id, title="T", path="x.pdf", sha256=sha, kind="pdf", page_count=2, status="ingesting")


def _page(doc_id: str, number: int) -> Page:
    comp = Component(id="P1", kind=ComponentKind.PARAGRAPH, bbox=BBox(x0=1, y0=2, x1=3, y1=4), order=0, text="hi")
    return Page(doc_id=doc_id, number=number, width=100, height=200, image_path=f"pages/{doc_id}/p{number}.png",
                dpi=144, components=[comp])


def test_documents_pages_roundtrip_and_delete_cascades(tmp_path):
    store = SQLiteStore(tmp_path)
    store.put_document(_doc())
    store.put_page(_page("abc123", 1))
    store.put_record("m.x", "k1", {"a": 1}, doc_id="abc123")
    store.put_record("m.x", "global", {"b": 2})
    store.put_vectors("m.v", ["k1"], np.ones((1, 3)), model="e5", doc_ids=["abc123"])
    assert store.page_numbers("abc123") == {1}
    assert store.get_page("abc123", 1).components[0].bbox.x1 == 3
    assert store.find_document_by_sha("f" * 64).id == "abc123"
    store.delete_document("abc123")
    assert store.get_document("abc123") is None
    assert list(store.iter_pages("abc123")) == []
    assert store.get_record("m.x", "k1") is None
    assert store.get_record("m.x", "global") == {"b": 2}
    assert store.load_vectors("m.v")[0] == []


def test_transaction_rolls_back_everything_on_error(tmp_path):
    store = SQLiteStore(tmp_path)
    store.put_document(_doc())
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.put_page(_page("abc123", 1))
            store.put_record("m.x", "k", 1)
            raise RuntimeError("boom")
    assert store.page_numbers("abc123") == set()
    assert store.get_record("m.x", "k") is None


def test_vectors_roundtrip_in_key_order(tmp_path):
    store = SQLiteStore(tmp_path)
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    store.put_vectors("ns", ["b", "a", "c"], matrix, model="m1")
    keys, loaded = store.load_vectors("ns")
    assert keys == ["a", "b", "c"]
    assert np.array_equal(loaded[0], matrix[1]) and np.array_equal(loaded[1], matrix[0])
    assert store.vector_models() == {"ns": "m1"}
    with pytest.raises(StoreError):
        store.put_vectors("ns", ["x"], np.ones((2, 4)), model="m1")


def test_usage_accumulates_and_persists(tmp_path):
    store = SQLiteStore(tmp_path)
    store.add_usage("kg4vd.extract", Usage(calls=1, input_tokens=100, seconds=0.5))
    store.add_usage("kg4vd.extract", Usage(calls=2, cache_hits=1, input_tokens=50))
    store.close()
    again = SQLiteStore(tmp_path)
    usage = again.usage()["kg4vd.extract"]
    assert (usage.calls, usage.cache_hits, usage.input_tokens) == (3, 1, 150)


def test_concurrent_writers_lose_nothing(tmp_path):
    store = SQLiteStore(tmp_path)

    def write(worker: int) -> None:
        for i in range(50):
            store.put_record("ns", f"{worker}-{i}", i)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count_records("ns") == 200


def test_not_a_database_is_a_clear_error(tmp_path):
    (tmp_path / SQLiteStore.DB_NAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a readable docgraph database"):
        SQLiteStore(tmp_path)
