"""A progress recorder for tests that look at the stats of every update, in order."""

from __future__ import annotations

from typing import Any

from ..progress import RecordingProgress


class StatsHistory(RecordingProgress):
    """``RecordingProgress`` that also keeps each ``advance``'s stats in ``history``."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[dict[str, Any]] = []

    def advance(self, n: int = 1, **stats: Any) -> None:
        super().advance(n, **stats)
        self.history.append(dict(stats))
