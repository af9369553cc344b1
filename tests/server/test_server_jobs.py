"""Live progress and the background job queue behind builds and uploads."""

from __future__ import annotations

import threading
import time

import pytest

from docgraph.server.jobs import JobManager, LiveProgress
from docgraph.types import Usage


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_snapshot_counts_stats_notes_and_eta():
    clock = Clock()
    progress = LiveProgress(clock=clock)
    assert progress.snapshot()["eta_s"] is None
    progress.start(10, "extracting pages")
    clock.now += 8
    progress.advance(2, rounds=3, calls=5, tokens=1200, detail={"x": 1}, path=object())
    progress.note("page 3: no text layer, OCR used")
    snap = progress.snapshot()
    assert (snap["done"], snap["total"], snap["description"], snap["phase"]) == (2, 10, "extracting pages", 1)
    assert snap["eta_s"] == pytest.approx(32.0)  # 8 s for 2 pages, 8 pages left
    assert snap["elapsed_s"] == pytest.approx(8.0)
    assert snap["stats"]["rounds"] == 3 and snap["stats"]["tokens"] == 1200
    assert "detail" not in snap["stats"] and isinstance(snap["stats"]["path"], str)
    assert snap["notes"] == ["page 3: no text layer, OCR used"]
    progress.advance(8)
    assert progress.snapshot()["eta_s"] == 0.0
    progress.start(4, "connecting pages")  # a new phase restarts the count and the rate
    snap = progress.snapshot()
    assert (snap["done"], snap["total"], snap["phase"], snap["eta_s"]) == (0, 4, 2, None)


def test_progress_is_safe_across_threads():
    progress = LiveProgress()
    progress.start(8000, "x")

    def work():
        for _ in range(1000):
            progress.advance(1, calls=1)
            progress.snapshot()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert progress.snapshot()["done"] == 8000


def usage_source(total: list[Usage]):
    return lambda: {"stage": total[0]}


def test_jobs_run_one_at_a_time_in_order_and_report_usage():
    spent = [Usage()]
    manager = JobManager(usage_source(spent))
    order, running = [], []
    gate = threading.Event()

    def job(name, wait=False):
        def run(progress):
            running.append(name)
            assert len(running) == 1, "two jobs ran at once"
            if wait:
                gate.wait(5)
            progress.start(2, name)
            progress.advance(2)
            spent[0] = spent[0].add(Usage(calls=2, input_tokens=50))
            order.append(name)
            running.remove(name)
            return {"name": name}

        return run

    first, created = manager.submit("build", "build:a", "build A", job("a", wait=True), method="a")
    second, _ = manager.submit("build", "build:b", "build B", job("b"), method="b")
    twin, twin_created = manager.submit("build", "build:a", "build A again", job("a2"), method="a")
    assert created and not twin_created and twin is first
    time.sleep(0.05)
    assert manager.busy() and second.state == "queued"
    gate.set()
    assert second.finished.wait(5)
    assert order == ["a", "b"] and not manager.busy()
    snap = manager.snapshot(first)
    assert snap["state"] == "done" and snap["result"] == {"name": "a"} and snap["progress"]["done"] == 2
    assert snap["usage"]["calls"] == 2 and snap["usage"]["input_tokens"] == 50
    assert manager.snapshot(second)["usage"]["calls"] == 2
    again, created_again = manager.submit("build", "build:a", "build A", job("a3"), method="a")
    assert created_again and again is not first  # finished jobs do not block a new one
    assert again.finished.wait(5)
    assert manager.shutdown(timeout=2)


def test_a_failing_job_is_recorded_and_the_queue_goes_on():
    manager = JobManager(lambda: {})

    def boom(progress):
        raise ValueError("page 2 cannot be read")

    bad, _ = manager.submit("ingest", "ingest:x", "add x", boom)
    good, _ = manager.submit("ingest", "ingest:y", "add y", lambda p: {"ok": True})
    assert good.finished.wait(5)
    assert bad.state == "failed" and bad.error == "ValueError: page 2 cannot be read"
    assert good.state == "done" and manager.snapshot(bad)["progress"]["closed"] is True
    assert [j.id for j in manager.jobs()] == [bad.id, good.id]
    manager.shutdown()


def test_shutdown_cancels_queued_jobs_and_refuses_new_ones():
    manager = JobManager(lambda: {})
    gate = threading.Event()
    ran = []
    running, _ = manager.submit("build", "build:a", "a", lambda p: gate.wait(5) and {})
    queued, _ = manager.submit("build", "build:b", "b", lambda p: ran.append("b") or {})
    time.sleep(0.05)
    stopper = threading.Thread(target=manager.shutdown, kwargs={"timeout": 5})
    stopper.start()
    time.sleep(0.05)
    gate.set()
    stopper.join(5)
    assert running.state == "done" and queued.state == "failed" and "cancelled" in queued.error
    assert ran == []
    with pytest.raises(RuntimeError):
        manager.submit("build", "build:c", "c", lambda p: {})
