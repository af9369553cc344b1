"""The ``Store`` contract on every backend (embedded SQLite; PostgreSQL through a ``pgserver``
test server): documents/pages, records, vectors, cache, usage, transactions."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from docgraph.errors import StoreError
from docgraph.store import SQLiteStore
from docgraph.testing.postgres import new_pg_schema
from docgraph.types import BBox, Component, ComponentKind, Document, Page, Usage


def _doc(doc_id: str = "abc123", sha: str = "f" * 64) -> Document:
    return Document(id=doc_id, title="T", path="x.pdf", sha256=sha, kind="pdf", page_count=2, status="ingesting")


def _page(doc_id: str, number: int) -> Page:
    comp = Component(id="P1", kind=ComponentKind.PARAGRAPH, bbox=BBox(x0=1, y0=2, x1=3, y1=4), order=0, text="hi")
    return Page(
        doc_id=doc_id,
        number=number,
        width=100,
        height=200,
        image_path=f"pages/{doc_id}/p{number}.png",
        dpi=144,
        components=[comp],
    )


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request):
    """``make_store(root)``: opens (or reopens) this test's store of the parametrized backend."""
    opened = []
    if request.param == "sqlite":

        def make(root):
            opened.append(SQLiteStore(root))
            return opened[-1]
    else:
        from docgraph.store.postgres import PostgresStore

        url, schema = request.getfixturevalue("postgres_url"), new_pg_schema()

        def make(root):
            opened.append(PostgresStore(root, url, schema))
            return opened[-1]

    yield make
    for store in opened:
        store.close()


def test_documents_pages_roundtrip_and_delete_cascades(make_store, tmp_path):
    store = make_store(tmp_path)
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


def test_transaction_rolls_back_everything_on_error(make_store, tmp_path):
    store = make_store(tmp_path)
    store.put_document(_doc())
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.put_page(_page("abc123", 1))
            store.put_record("m.x", "k", 1)
            raise RuntimeError("boom")
    assert store.page_numbers("abc123") == set()
    assert store.get_record("m.x", "k") is None


def test_vectors_roundtrip_in_key_order(make_store, tmp_path):
    store = make_store(tmp_path)
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    store.put_vectors("ns", ["b", "a", "c"], matrix, model="m1")
    keys, loaded = store.load_vectors("ns")
    assert keys == ["a", "b", "c"]
    assert np.array_equal(loaded[0], matrix[1]) and np.array_equal(loaded[1], matrix[0])
    assert store.vector_models() == {"ns": "m1"}
    with pytest.raises(StoreError):
        store.put_vectors("ns", ["x"], np.ones((2, 4)), model="m1")


def test_usage_accumulates_and_persists(make_store, tmp_path):
    store = make_store(tmp_path)
    store.add_usage("kg4vd.extract", Usage(calls=1, input_tokens=100, seconds=0.5))
    store.add_usage("kg4vd.extract", Usage(calls=2, cache_hits=1, input_tokens=50))
    store.close()
    again = make_store(tmp_path)
    usage = again.usage()["kg4vd.extract"]
    assert (usage.calls, usage.cache_hits, usage.input_tokens) == (3, 1, 150)


def test_concurrent_writers_lose_nothing(make_store, tmp_path):
    store = make_store(tmp_path)

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


def test_nested_transactions_join_the_outer_one(make_store, tmp_path):
    store, other = make_store(tmp_path), make_store(tmp_path)  # other: a second connection (another process)
    store.put_document(_doc())
    with store.transaction():
        with store.transaction():
            store.put_record("m.x", "inner", 1)
        assert store.get_record("m.x", "inner") == 1  # the writer reads its own writes
        assert other.get_record("m.x", "inner") is None  # the inner block did not commit
        store.put_page(_page("abc123", 1))
    assert other.get_record("m.x", "inner") == 1 and other.page_numbers("abc123") == {1}
    with pytest.raises(KeyError):
        with store.transaction():
            store.put_record("m.x", "outer", 2)
            with store.transaction():
                store.put_record("m.x", "inner2", 3)
            raise KeyError("after the inner block finished")
    assert store.get_record("m.x", "outer") is None and store.get_record("m.x", "inner2") is None
    assert other.get_record("m.x", "outer") is None


def test_a_failed_statement_rolls_back_and_the_store_stays_usable(make_store, tmp_path):
    store = make_store(tmp_path)
    with pytest.raises(Exception):  # noqa: B017 - each backend's driver names its own integrity error
        with store.transaction():
            store.put_record("m.x", "k", 1)
            store.put_page(_page("no-such-document", 1))  # a foreign-key violation
    assert store.get_record("m.x", "k") is None
    store.put_document(_doc())
    store.put_page(_page("abc123", 1))
    assert store.page_numbers("abc123") == {1}


def test_records_upsert_order_and_delete(make_store, tmp_path):
    store = make_store(tmp_path)
    store.put_document(_doc("d1", "1" * 64))
    store.put_records("ns", [("b", {"x": "é\u0000"}, "d1"), ("B", [1, 2], None), ("a", "s", "d1")])
    store.put_record("ns", "a", "replaced", doc_id="d1")
    store.put_record("other", "a", 0)
    assert list(store.iter_records("ns")) == [("B", [1, 2]), ("a", "replaced"), ("b", {"x": "é\u0000"})]  # byte order
    assert [k for k, _ in store.iter_records("ns", doc_id="d1")] == ["a", "b"]
    assert store.count_records("ns") == 3
    assert store.record_keys("ns") == ["B", "a", "b"] and store.record_keys("absent") == []
    assert store.delete_records("ns", keys=["a", "a", "zz"]) == 1
    assert store.delete_records("ns", doc_id="d1") == 1
    assert store.delete_records("ns") == 1
    assert store.count_records("ns") == 0 and store.get_record("other", "a") == 0


def test_records_stream_in_pages_and_load_by_key_in_batches(make_store, tmp_path, monkeypatch):
    """A namespace larger than one read page streams in key order without gaps or repeats,
    a document's share too; ``get_records`` answers many keys over several queries and
    leaves out keys that do not exist."""
    import docgraph.store.sql_reads as sql_reads

    monkeypatch.setattr(sql_reads, "RECORD_PAGE", 3)
    monkeypatch.setattr(sql_reads, "CACHE_BATCH", 4)
    store = make_store(tmp_path)
    store.put_document(_doc("d1", "1" * 64))
    keys = [f"k{i:02d}" for i in range(10)]
    store.put_records("ns", [(k, {"i": i}, "d1" if i % 2 else None) for i, k in enumerate(keys)])
    store.put_record("other", "k00", "elsewhere")
    assert list(store.iter_records("ns")) == [(k, {"i": i}) for i, k in enumerate(keys)]
    assert [k for k, _ in store.iter_records("ns", doc_id="d1")] == keys[1::2]
    assert list(store.iter_records("absent")) == []
    found = store.get_records("ns", ["k09", "zz", "k00", "k09", *keys[3:8]])
    assert found == {k: {"i": int(k[1:])} for k in ["k09", "k00", *keys[3:8]]}
    assert store.get_records("ns", []) == {}


def test_many_rows_are_written_a_slice_at_a_time_and_all_or_none(make_store, tmp_path, monkeypatch):
    """``put_records`` given a generator serialises at most ``WRITE_SLICE`` rows ahead of what
    it has sent; the slices are one transaction, so a row that fails to serialise half-way
    leaves none of the rows written (nor anything else of the caller's transaction)."""
    import docgraph.store.sql_reads as sql_reads

    monkeypatch.setattr(sql_reads, "WRITE_SLICE", 4)
    store = make_store(tmp_path)
    pulled, ahead = [0], []
    sent = [0]
    real = store._executemany

    def counting(sql, rows):
        ahead.append(pulled[0] - sent[0])
        sent[0] += len(rows)
        real(sql, rows)

    monkeypatch.setattr(store, "_executemany", counting)

    def rows(n, poison_at=None):
        for i in range(n):
            pulled[0] += 1
            yield f"k{i:02d}", ({"bad": {1, 2}} if i == poison_at else {"i": i}), None  # a set is not JSON

    store.put_records("ns", rows(10))
    assert ahead == [4, 4, 2] and sent[0] == 10
    assert list(store.iter_records("ns")) == [(f"k{i:02d}", {"i": i}) for i in range(10)]

    with pytest.raises(TypeError):
        with store.transaction():
            store.put_record("other", "x", 1)
            pulled[0] = sent[0] = 0
            store.put_records("ns2", rows(10, poison_at=6))
    assert sent[0] == 4  # the first slice went out before the bad row was reached
    assert list(store.iter_records("ns2")) == [] and store.get_records("other", ["x"]) == {}


def test_documents_upsert_and_list_order(make_store, tmp_path):
    store = make_store(tmp_path)
    first = _doc("d2", "2" * 64).model_copy(update={"added_at": "2024-01-01T00:00:00+00:00"})
    second = _doc("d1", "1" * 64).model_copy(update={"added_at": "2024-01-02T00:00:00+00:00"})
    store.put_document(second)
    store.put_document(first)
    store.put_document(first.model_copy(update={"status": "ready", "added_at": None}))
    assert [d.id for d in store.list_documents()] == ["d2", "d1"]
    again = store.get_document("d2")
    assert again.status == "ready" and again.added_at == "2024-01-01T00:00:00+00:00"
    assert store.find_document_by_sha("3" * 64) is None


def test_vectors_delete_by_owner_and_key_and_models(make_store, tmp_path):
    store = make_store(tmp_path)
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((4, 5)).astype(np.float32)
    store.put_vectors("v1", ["k0", "k1", "k2", "k3"], matrix, model="e5", doc_ids=["d1", "d1", "d2", None])
    store.put_vectors("v2", ["k0"], matrix[:1, :3], model="clip")
    store.put_vectors("v1", ["k0"], matrix[3:4], model="e5")  # replaces the row
    keys, loaded = store.load_vectors("v1")
    assert keys == ["k0", "k1", "k2", "k3"] and loaded.dtype == np.float32
    assert np.array_equal(loaded, matrix[[3, 1, 2, 3]])  # bit-exact
    assert store.vector_models() == {"v1": "e5", "v2": "clip"}
    assert store.has_vectors("v1") and store.has_vectors("v2") and not store.has_vectors("v3")
    assert store.delete_vectors("v1", doc_id="d1") == 1  # k0 lost its owner when replaced
    assert store.delete_vectors("v1", keys=["k2", "nope"]) == 1
    assert store.load_vectors("v1")[0] == ["k0", "k3"]
    assert store.delete_vectors("v2") == 1 and store.vector_models() == {"v1": "e5"}
    assert not store.has_vectors("v2")
    empty_keys, empty = store.load_vectors("v2")
    assert empty_keys == [] and empty.shape == (0, 0)


def test_cache_many(make_store, tmp_path):
    store = make_store(tmp_path)
    keys = [f"k{i}" for i in range(1203)]  # more than one lookup batch
    store.cache_put_many("embed:m", [(k, k.encode() + b"\x00\xff") for k in keys[::2]])
    store.cache_put("embed:other", "k1", b"elsewhere")
    found = store.cache_get_many("embed:m", keys + ["k0", "missing"])
    assert found == {k: k.encode() + b"\x00\xff" for k in keys[::2]}
    store.cache_put_many("embed:m", [("k0", b"new"), ("k1", b"one")])  # replaces and adds
    assert store.cache_get_many("embed:m", ["k0", "k1", "k3"]) == {"k0": b"new", "k1": b"one"}
    assert store.cache_get("embed:m", "k0") == b"new"
    assert store.cache_get_many("embed:m", []) == {}
    store.cache_put_many("embed:m", [])


def test_cache_and_meta(make_store, tmp_path):
    store = make_store(tmp_path)
    assert store.cache_get("llm", "k") is None and store.get_meta("embedding_model") is None
    store.cache_put("llm", "k", b"\x00\xffbytes")
    store.cache_put("llm", "k", b"\x00\xffnew")
    store.set_meta("embedding_model", "e5")
    store.set_meta("embedding_model", "e5-large")
    assert store.cache_get("llm", "k") == b"\x00\xffnew" and store.cache_get("other", "k") is None
    assert store.get_meta("embedding_model") == "e5-large"
