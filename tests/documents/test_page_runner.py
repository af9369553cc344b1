"""The page-worker pool (``documents.runner.PageRunner``): every worker is started by the
start-up probe, side by side, before the first page is handed out."""

from __future__ import annotations

from docgraph.documents.runner import PageRunner


def test_the_probe_starts_every_worker_at_once():
    notes: list[str] = []
    runner = PageRunner(2, notes.append)
    try:
        pool = runner._executor()
        assert pool is not None, notes
        processes = list(pool._processes.values())  # the executor's own table of its workers
        assert len(processes) == 2 and all(p.is_alive() for p in processes)
        assert len({p.pid for p in processes}) == 2
    finally:
        runner.close()
    assert notes == []
