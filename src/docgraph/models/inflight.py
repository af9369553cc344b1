"""Model calls in flight, process-wide: what a progress line shows while a page waits on a model.

``MeteredChat`` brackets each call with ``CALLS.begin(stage)`` / ``CALLS.end(token)``;
``CALLS.summary()`` gives ``{"in_flight": n, "longest_s": s}`` (empty when none), which
``progress.TerminalProgress`` appends to its line between page updates, so a build whose
calls take minutes shows them running instead of ``calls=0`` standing still.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any


class InFlight:
    """Thread-safe registry of running calls: token -> (stage, start time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, tuple[str, float]] = {}
        self._ids = itertools.count()

    def begin(self, stage: str) -> int:
        token = next(self._ids)
        with self._lock:
            self._running[token] = (stage, time.monotonic())
        return token

    def end(self, token: int) -> None:
        with self._lock:
            self._running.pop(token, None)

    def by_stage(self) -> dict[str, int]:
        """Running calls per stage."""
        with self._lock:
            out: dict[str, int] = {}
            for stage, _ in self._running.values():
                out[stage] = out.get(stage, 0) + 1
            return out

    def summary(self) -> dict[str, Any]:
        """``{"in_flight": n, "longest_s": seconds}`` for the running calls; ``{}`` when none."""
        with self._lock:
            if not self._running:
                return {}
            oldest = min(start for _, start in self._running.values())
            return {"in_flight": len(self._running), "longest_s": round(time.monotonic() - oldest)}


CALLS = InFlight()
