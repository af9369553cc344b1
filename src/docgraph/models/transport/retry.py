"""Retries with exponential backoff and jitter for every endpoint call.

``RetryPolicy.call(fn, endpoint)`` runs ``fn``; a retryable ``EndpointError`` (timeout,
connection error, 429, 5xx, unreadable response) is retried up to ``max_retries`` times,
sleeping ``min(backoff_max_s, backoff_base_s * 2**attempt)`` scaled by a random factor in
[0.5, 1] — or the server's Retry-After when it sent one (capped at ``backoff_max_s``).
When attempts run out it raises ``ModelError`` naming the endpoint, what failed and what
to check. Non-retryable errors (401, 404, …) are raised at once. ``RetryingChat`` applies
the policy to a ChatModel and counts what it retried: a reply's ``usage.retries`` (and a
failure's ``exc.usage.retries``) is how many requests were sent again, so ``docgraph usage``
shows every endpoint fault survived; the embedding and rerank backends use ``RetryPolicy.call``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from ...config import ChatSettings
from ...errors import ModelError
from ...types import Usage
from ..base import ChatModel, ChatResult, Message
from ..chat.wrapper import ChatWrapper
from .http import EndpointError

log = logging.getLogger(__name__)
R = TypeVar("R")

_ADVICE = {
    "timeout": "check that the server is up and not overloaded, or raise timeout_s",
    "connection": "check that the server is running and base_url (host, port, /v1) is right",
    "rate_limit": "the server keeps rate-limiting; lower max_concurrency or raise max_retries",
    "server": "the server keeps failing; check its logs (out of memory? model loaded?)",
    "malformed": "the server's responses are not OpenAI-compatible JSON; check base_url points at the API",
}


class RetriesExhausted(ModelError):
    """An endpoint kept failing with retryable errors; ``last`` is the final ``EndpointError``."""

    def __init__(self, message: str, last: EndpointError, attempts: int):
        self.last = last
        self.attempts = attempts
        super().__init__(message)


@dataclass
class RetryPolicy:
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)

    @classmethod
    def from_settings(cls, settings: ChatSettings | Any) -> RetryPolicy:
        """From any settings section with max_retries/backoff fields (defaults where absent)."""
        return cls(
            max_retries=getattr(settings, "max_retries", 4),
            backoff_base_s=getattr(settings, "backoff_base_s", 1.0),
            backoff_max_s=getattr(settings, "backoff_max_s", 60.0),
        )

    def delay(self, attempt: int, error: EndpointError) -> float:
        """Seconds to wait before retry number ``attempt + 1`` (0-based ``attempt``)."""
        if error.retry_after is not None:
            return min(error.retry_after, self.backoff_max_s)
        base = min(self.backoff_max_s, self.backoff_base_s * (2**attempt))
        return base * (0.5 + 0.5 * self.rng.random())

    def call(self, fn: Callable[[], R], endpoint: str, on_retry: Callable[[EndpointError], None] | None = None) -> R:
        """``fn()`` with retries; ``RetriesExhausted`` or the non-retryable error when it fails.
        ``on_retry(error)`` is called before each retry."""
        attempt = 0
        while True:
            try:
                return fn()
            except EndpointError as exc:
                if not exc.retryable:
                    raise
                if attempt >= self.max_retries:
                    advice = _ADVICE.get(exc.kind, "check the endpoint")
                    raise RetriesExhausted(
                        f"{endpoint} failed after {attempt + 1} attempt(s): {exc} — {advice}",
                        last=exc,
                        attempts=attempt + 1,
                    ) from exc
                wait = self.delay(attempt, exc)
                log.info("%s: %s; retry %d/%d in %.2fs", endpoint, exc.kind, attempt + 1, self.max_retries, wait)
                if on_retry is not None:
                    on_retry(exc)
                self.sleep(wait)
                attempt += 1


class RetryingChat(ChatWrapper):
    """A ChatModel whose calls are retried by ``policy``."""

    def __init__(self, inner: ChatModel, policy: RetryPolicy):
        super().__init__(inner)
        self.policy = policy

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        retried: list[EndpointError] = []
        try:
            result = self.policy.call(
                lambda: self.inner.complete(messages, stage=stage, schema=schema, **params),
                endpoint=self.endpoint,
                on_retry=retried.append,
            )
        except ModelError as exc:
            if retried:
                carried = getattr(exc, "usage", Usage())
                exc.usage = carried.add(Usage(retries=len(retried)))  # type: ignore[attr-defined]  # exceptions carry the usage of the failed call
            raise
        if retried:
            result.usage = result.usage.add(Usage(retries=len(retried)))
        return result
