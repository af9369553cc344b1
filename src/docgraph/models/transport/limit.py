"""A concurrency limit on calls to one endpoint, safe across threads.

``LimitedChat`` holds a semaphore slot for the whole inner call (retries and their
backoff included, so a rate-limited server sees fewer requests, not more). Several
wrappers may share one ``Limit`` (e.g. two roles on the same server).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..base import ChatModel, ChatResult, Message
from ..chat.wrapper import ChatWrapper


class Limit:
    """At most ``max_concurrency`` holders at a time; counts the peak for diagnostics."""

    def __init__(self, max_concurrency: int):
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        self._sem = threading.BoundedSemaphore(max_concurrency)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def __enter__(self) -> Limit:
        self._sem.acquire()
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.in_flight -= 1
        self._sem.release()


class LimitedChat(ChatWrapper):
    """A ChatModel that lets at most ``limit.max_concurrency`` calls run at once."""

    def __init__(self, inner: ChatModel, limit: Limit | int):
        super().__init__(inner)
        self.limit = limit if isinstance(limit, Limit) else Limit(limit)

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        with self.limit:
            return self.inner.complete(messages, stage=stage, schema=schema, **params)
