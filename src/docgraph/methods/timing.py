"""Per-stage wall-clock timings for ``Evidence.timings`` / ``Answer.timings``: one timer for
every method.

``with timer.stage("rerank"): …`` adds the block's seconds to ``timings["rerank"]``;
``timer.lap("embed")`` adds the seconds since the previous lap (or the start) for code that
runs stage after stage; ``timer.total("retrieve")`` records the seconds since the start.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class Timer:
    """Accumulates wall seconds per stage into ``timings`` (a new dict when none is given)."""

    def __init__(self, timings: dict[str, float] | None = None):
        self.timings = {} if timings is None else timings
        self._start = self._last = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self._last = time.perf_counter()
            self.timings[name] = self.timings.get(name, 0.0) + self._last - start

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + now - self._last
        self._last = now

    def total(self, name: str) -> None:
        self.timings[name] = time.perf_counter() - self._start
