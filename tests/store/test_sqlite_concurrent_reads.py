"""SQLite store: reads from other threads do not wait for a transaction (the web app during a build)."""

from __future__ import annotations

import threading
import time

import pytest

from docgraph.errors import StoreError
from docgraph.store import SQLiteStore


def test_a_read_from_another_thread_does_not_wait_for_an_open_transaction(tmp_path):
    store = SQLiteStore(tmp_path)
    store.put_records("ns", [("committed", {"v": 1}, None)])
    inside, release = threading.Event(), threading.Event()
    seen_inside: list = []

    def long_build_transaction():
        with store.transaction():
            store.put_records("ns", [("pending", {"v": 2}, None)])
            seen_inside.append(store.get_record("ns", "pending"))  # the writer sees its own rows
            inside.set()
            release.wait(30)

    writer = threading.Thread(target=long_build_transaction)
    writer.start()
    try:
        assert inside.wait(30)
        answered: list = []
        reader = threading.Thread(
            target=lambda: answered.append(
                (
                    store.get_record("ns", "committed"),
                    store.get_record("ns", "pending"),
                    store.get_meta("schema_version"),
                )
            )
        )
        reader.start()
        reader.join(10)
        # the transaction is still open: the reader answered from the last committed state
        assert not reader.is_alive(), "a read waited for another thread's transaction"
        assert answered == [({"v": 1}, None, "1")]
        assert writer.is_alive()
    finally:
        release.set()
        writer.join(30)
    assert seen_inside == [{"v": 2}]
    assert store.get_record("ns", "pending") == {"v": 2}
    # a busy read after the commit sees the committed rows
    done: list = []
    with store.transaction():
        t = threading.Thread(target=lambda: done.append(store.get_record("ns", "pending")))
        t.start()
        t.join(10)
    assert done == [{"v": 2}]
    store.close()


def test_reads_are_read_only_and_closed_with_the_store(tmp_path):
    store = SQLiteStore(tmp_path)
    hold = threading.Event()
    errors: list = []

    def busy_reader():
        try:
            conn = store._reader()
            with pytest.raises(Exception, match="readonly|read-only|query_only|attempt to write"):
                conn.execute("INSERT INTO meta (key, value) VALUES ('x', 'y')")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        hold.set()

    t = threading.Thread(target=busy_reader)
    t.start()
    assert hold.wait(10)
    t.join(10)
    assert not errors
    assert len(store._reader_connections) == 1
    store.close()
    assert store._reader_connections == []
    with pytest.raises(StoreError, match="closed"):
        store._reader()  # this thread has no reader yet: none is opened after close


def test_many_readers_while_a_writer_commits_page_by_page(tmp_path):
    store = SQLiteStore(tmp_path)
    stop = threading.Event()
    counts: list[int] = []

    def write():
        for i in range(200):
            with store.transaction():
                store.put_records("pages", [(f"p{i}", {"i": i}, None)])
        stop.set()

    def read():
        while not stop.is_set():
            counts.append(len(store.record_keys("pages")))
            time.sleep(0.001)

    readers = [threading.Thread(target=read) for _ in range(3)]
    writer = threading.Thread(target=write)
    for t in readers + [writer]:
        t.start()
    for t in readers + [writer]:
        t.join(60)
    assert len(store.record_keys("pages")) == 200
    assert counts and all(0 <= c <= 200 for c in counts)
    store.close()
