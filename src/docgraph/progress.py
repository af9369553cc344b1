"""Progress reporting for long work (ingest, build, eval): a protocol, a terminal bar, a null one.

Reporters receive counts plus free-form stats (rounds, calls, tokens); the terminal bar
shows them with an ETA. The web app implements the same protocol to stream progress.
Between updates the terminal bar shows the model calls still running (``in_flight``,
``longest_s``, from ``models.inflight``), refreshed by a heartbeat thread.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol


def running_calls() -> dict[str, Any]:
    """The model calls in flight in this process (``{}`` when none)."""
    from .models.inflight import CALLS

    return CALLS.summary()


class Progress(Protocol):
    def start(self, total: int, description: str) -> None: ...
    def advance(self, n: int = 1, **stats: Any) -> None: ...
    def note(self, message: str) -> None:
        """A line for the user (a warning, a skipped file) that must not break the bar."""

    def close(self) -> None: ...


class NullProgress:
    def start(self, total: int, description: str) -> None:
        pass

    def advance(self, n: int = 1, **stats: Any) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def close(self) -> None:
        pass


class RecordingProgress(NullProgress):
    """Keeps every event; used by tests and by the web app's build status."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.description = ""
        self.stats: dict[str, Any] = {}
        self.notes: list[str] = []

    def start(self, total: int, description: str) -> None:
        self.total, self.done, self.description = total, 0, description

    def advance(self, n: int = 1, **stats: Any) -> None:
        self.done += n
        self.stats.update(stats)

    def note(self, message: str) -> None:
        self.notes.append(message)


class StatsProgress(NullProgress):
    """Shows a nested stage as a stat of the enclosing one: ``start``/``advance`` of the inner
    work become ``outer.advance(0, <stat>="done/total")``, so a long inner step (embedding a
    document's chunks) moves the enclosing bar without replacing it; notes pass through."""

    def __init__(self, outer: Progress, stat: str = "embedded") -> None:
        self.outer, self.stat = outer, stat
        self.total = self.done = 0

    def start(self, total: int, description: str) -> None:
        self.total, self.done = total, 0

    def advance(self, n: int = 1, **stats: Any) -> None:
        self.done += n
        self.outer.advance(0, **{self.stat: f"{self.done}/{self.total}"})

    def note(self, message: str) -> None:
        self.outer.note(message)


class TerminalProgress:
    """A tqdm bar on stderr with stats as postfix (pages, rounds, calls, tokens) and an ETA.

    When stderr is not a terminal (a log file, CI, ``nohup``) there is no bar: a plain line
    (``description: done/total (pct) elapsed, eta, stats``) is printed when work starts, at
    most every ``interval_s`` seconds while it runs, and when it ends.
    """

    HEARTBEAT_S = 1.0

    def __init__(
        self,
        enabled: bool | None = None,
        interval_s: float = 30.0,
        live: Callable[[], dict[str, Any]] | None = running_calls,
    ) -> None:
        self._enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar = None
        self.interval_s = interval_s
        self.live = live
        self._plain: dict[str, Any] | None = None
        self._stats: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._stop: threading.Event | None = None

    def start(self, total: int, description: str) -> None:
        self.close()
        with self._lock:
            self._stats = {}
            if not self._enabled:
                now = time.monotonic()
                self._plain = {
                    "total": total,
                    "done": 0,
                    "description": description,
                    "started": now,
                    "printed": now,
                    "stats": {},
                }
                print(self._plain_line(), file=sys.stderr, flush=True)
            else:
                from tqdm import tqdm

                self._bar = tqdm(total=total, desc=description, unit="page", file=sys.stderr, dynamic_ncols=True)
        if self.live is not None:
            self._stop = threading.Event()
            threading.Thread(target=self._heartbeat, args=(self._stop,), name="progress-heartbeat", daemon=True).start()

    def _live(self) -> dict[str, Any]:
        try:
            return self.live() if self.live is not None else {}
        except Exception:  # noqa: BLE001 - a progress line never breaks the work
            return {}

    def _heartbeat(self, stop: threading.Event) -> None:
        """While calls run: refresh the bar every second, print a plain line every interval."""
        while not stop.wait(self.HEARTBEAT_S):
            live = self._live()
            if not live:
                continue
            with self._lock:
                if self._bar is not None:
                    self._bar.set_postfix({**self._stats, **live}, refresh=True)
                elif self._plain is not None:
                    now = time.monotonic()
                    if now - self._plain["printed"] >= max(self.interval_s, self.HEARTBEAT_S):
                        self._plain["printed"] = now
                        print(self._plain_line(live), file=sys.stderr, flush=True)

    def _plain_line(self, live: dict[str, Any] | None = None) -> str:
        state = self._plain or {}
        done, total = state["done"], state["total"]
        elapsed = time.monotonic() - state["started"]
        line = f"{state['description']}: {done}/{total}"
        if total:
            line += f" ({100.0 * done / total:.0f}%)"
        line += f" {elapsed:.0f} s"
        if 0 < done < total:
            line += f", eta {elapsed / done * (total - done):.0f} s"
        shown = {**state["stats"], **(live or {})}
        if shown:
            line += ", " + ", ".join(f"{k}={v}" for k, v in shown.items())
        return line

    def advance(self, n: int = 1, **stats: Any) -> None:
        with self._lock:
            self._stats.update(stats)
            if self._plain is not None:
                self._plain["done"] += n
                self._plain["stats"].update(stats)
                now = time.monotonic()
                if now - self._plain["printed"] >= self.interval_s:
                    self._plain["printed"] = now
                    print(self._plain_line(self._live()), file=sys.stderr, flush=True)
            if self._bar is not None:
                if stats:
                    self._bar.set_postfix({**self._stats, **self._live()}, refresh=False)
                self._bar.update(n)

    def note(self, message: str) -> None:
        if self._bar is not None:
            self._bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._plain is not None:
            print(
                self._plain_line() + " done" * (self._plain["done"] >= self._plain["total"]),
                file=sys.stderr,
                flush=True,
            )
            self._plain = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
