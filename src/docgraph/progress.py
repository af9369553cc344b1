"""Progress reporting for long work (ingest, build, eval): a protocol, a terminal bar, a null one.

Reporters receive counts plus free-form stats (rounds, calls, tokens); the terminal bar
shows them with an ETA. The web app implements the same protocol to stream progress.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol


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


class TerminalProgress:
    """A tqdm bar on stderr with stats as postfix (pages, rounds, calls, tokens) and an ETA."""

    def __init__(self, enabled: bool | None = None) -> None:
        self._enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar = None

    def start(self, total: int, description: str) -> None:
        self.close()
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=description, unit="page", file=sys.stderr,
                         disable=not self._enabled, dynamic_ncols=True)

    def advance(self, n: int = 1, **stats: Any) -> None:
        if self._bar is not None:
            if stats:
                self._bar.set_postfix(stats, refresh=False)
            self._bar.update(n)

    def note(self, message: str) -> None:
        if self._bar is not None and self._enabled:
            self._bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
