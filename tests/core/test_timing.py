"""One stage timer for every method (issue 16)."""

from __future__ import annotations

import time

from docgraph.methods.timing import Timer


def test_stages_laps_and_total():
    timings: dict[str, float] = {"given": 1.0}
    timer = Timer(timings)
    with timer.stage("a"):
        time.sleep(0.01)
    time.sleep(0.01)
    timer.lap("b")  # since the end of stage a
    with timer.stage("a"):
        pass
    timer.total("all")
    assert timer.timings is timings and timings["given"] == 1.0
    assert 0.01 <= timings["a"] < 0.05 and 0.01 <= timings["b"] < 0.05
    assert timings["all"] >= timings["a"] + timings["b"]
