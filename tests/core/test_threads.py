"""Query-time BLAS threads (``docgraph.threads``): one thread while a query is answered,
the libraries' own count back afterwards, overlapping queries counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.threads import blas_threads, query_threads


@pytest.fixture()
def two_blas_threads(monkeypatch):
    """The BLAS libraries on 2 threads for the test (whatever the machine's core count), no
    count pinned."""
    from threadpoolctl import threadpool_limits

    from docgraph import threads

    monkeypatch.setattr(threads, "_pinned", False)
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() and set(blas_threads()) == {2}
        yield


def test_a_block_runs_on_one_thread_and_the_count_comes_back(two_blas_threads):
    with query_threads(1):
        assert set(blas_threads()) == {1}
        with query_threads(1):
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {1}, "a nested block ending does not lift the outer one's limit"
    assert set(blas_threads()) == {2}
    with query_threads(0):
        assert set(blas_threads()) == {2}, "0 leaves the libraries as they are"


def test_overlapping_blocks_restore_the_count_only_after_the_last(two_blas_threads):
    first, second = query_threads(1), query_threads(1)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first query ends while the second still runs
    assert set(blas_threads()) == {1}
    second.__exit__(None, None, None)
    assert set(blas_threads()) == {2}


def test_a_pinned_count_stays_and_blocks_leave_it(two_blas_threads):
    from docgraph import threads

    threads.pin_blas_threads(1)
    try:
        assert threads._pinned and set(blas_threads()) == {1}
        with query_threads(1):
            pass
        assert set(blas_threads()) == {1}, "a block neither lifts nor restores a pinned count"
    finally:
        threads._pinned = False


def test_workspace_retrieve_answers_on_one_blas_thread_by_default(openstax_ws: Path, monkeypatch, two_blas_threads):
    from docgraph import Workspace
    from docgraph.methods.baselines import bm25

    during: list[list[int]] = []
    original = bm25.BM25Baseline.rank

    def rank(self, *args, **kwargs):
        during.append(blas_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bm25.BM25Baseline, "rank", rank)
    with Workspace(openstax_ws) as ws:
        ws.build("bm25")
        assert ws.retrieve("What did the Persian empire build?", method="bm25").pages
        assert set(during[-1]) == {1}
        assert set(blas_threads()) == {2}
    with Workspace(openstax_ws, overrides={"retrieval": {"blas_threads": 0}}) as ws:
        ws.retrieve("What did the Persian empire build?", method="bm25")
        assert set(during[-1]) == {2}
