"""Usage accounting per stage: calls, cache hits, tokens, images, seconds, failures, retries, repairs.

``UsageMeter`` keeps running totals in memory (for per-answer reports) and adds every
record to the workspace store (``store.add_usage``, what ``docgraph usage`` shows).
``snapshot()``/``diff()`` or ``track()`` give the usage of one piece of work::

    with hub.meter.track() as used:
        answer = method.answer(ctx, question)
    answer.usage = used            # {stage: Usage}, only stages that changed

(totals are process-wide: work running concurrently in other threads is counted too).

Embeddings are metered by the embedding cache (``embed_cache.CachedTextEmbedder``) under
``embed.<label>``: the label the caller set with ``embedding_stage`` ("kg4vd entity
vectors", "dense chunks", …), else the text kind (``passage`` / ``query``); ``calls`` are
texts embedded, ``cache_hits`` texts answered by the cache, ``input_tokens`` the tokens
embedded when the embedder can count them.

``MeteredChat`` is the outermost chat wrapper: a reply adds its ``usage`` (a cache hit
adds ``cache_hits=1`` and no call); an exception adds ``failures=1`` plus whatever usage
the failed attempts carried (``exc.usage``), then propagates. While a call runs it is
listed in ``inflight.CALLS`` (what the progress line shows between page updates).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from ..store.base import Store
from ..types import Usage
from .base import ChatModel, ChatResult, Message
from .chat.wrapper import ChatWrapper
from .inflight import CALLS

_FIELDS = tuple(Usage.model_fields)


_EMBEDDING_STAGE: ContextVar[str | None] = ContextVar("embedding_stage", default=None)


@contextmanager
def embedding_stage(label: str) -> Iterator[None]:
    """Embeddings inside the block are metered as ``embed.<label>`` (this thread/context)."""
    token = _EMBEDDING_STAGE.set(label)
    try:
        yield
    finally:
        _EMBEDDING_STAGE.reset(token)


EMBED_PREFIX = "embed."  # usage stages of embeddings: embed.<label>


def is_embedding_stage(stage: str) -> bool:
    """Whether a usage stage counts embeddings (texts embedded) rather than model calls."""
    return stage.startswith(EMBED_PREFIX)


def model_stages(usages: dict[str, Usage]) -> dict[str, Usage]:
    """The stages of model (chat) calls only."""
    return {stage: u for stage, u in usages.items() if not is_embedding_stage(stage)}


def embedding_stage_name(kind: str) -> str:
    """The usage stage of an embedding of ``kind`` ("passage"/"query") made now."""
    return f"{EMBED_PREFIX}{_EMBEDDING_STAGE.get() or kind}"


def subtract(after: Usage, before: Usage) -> Usage:
    return Usage(**{k: getattr(after, k) - getattr(before, k) for k in _FIELDS})


def is_zero(usage: Usage) -> bool:
    return not any(getattr(usage, k) for k in _FIELDS)


def total(usages: dict[str, Usage]) -> Usage:
    """The sum over stages."""
    out = Usage()
    for u in usages.values():
        out = out.add(u)
    return out


def failed_call_usage(exc: BaseException, started: float) -> Usage:
    """What a failed call spent: the usage the error carries (retries, tokens), with the
    seconds since ``started`` (``time.perf_counter``) when it carries none, plus one failure."""
    carried = getattr(exc, "usage", None)
    spent = carried if isinstance(carried, Usage) else Usage()
    if not spent.seconds:
        spent = spent.add(Usage(seconds=time.perf_counter() - started))
    return spent.add(Usage(failures=1))


class UsageMeter:
    """Thread-safe per-stage totals, persisted to ``store`` (when given) as they happen."""

    def __init__(self, store: Store | None = None):
        self.store = store
        self._lock = threading.Lock()
        self._totals: dict[str, Usage] = {}

    def record(self, stage: str, usage: Usage) -> None:
        """Add ``usage`` to ``stage`` in memory and in the store."""
        if is_zero(usage):
            return
        with self._lock:
            self._totals[stage] = self._totals.get(stage, Usage()).add(usage)
        if self.store is not None:
            self.store.add_usage(stage, usage)

    def snapshot(self) -> dict[str, Usage]:
        """A copy of the in-memory totals per stage (this process only)."""
        with self._lock:
            return {k: v.model_copy() for k, v in self._totals.items()}

    def diff(self, before: dict[str, Usage], after: dict[str, Usage] | None = None) -> dict[str, Usage]:
        """Per-stage usage between two snapshots (``after`` defaults to now); zero stages omitted."""
        after = self.snapshot() if after is None else after
        out = {stage: subtract(u, before.get(stage, Usage())) for stage, u in after.items()}
        return {k: v for k, v in sorted(out.items()) if not is_zero(v)}

    @contextmanager
    def track(self) -> Iterator[dict[str, Usage]]:
        """Yields a dict that holds, once the block exits, the usage recorded inside it."""
        before = self.snapshot()
        used: dict[str, Usage] = {}
        try:
            yield used
        finally:
            used.update(self.diff(before))


class MeteredChat(ChatWrapper):
    """Records each call's usage under its stage (see the module doc)."""

    def __init__(self, inner: ChatModel, meter: UsageMeter):
        super().__init__(inner)
        self.meter = meter

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        start = time.perf_counter()
        token = CALLS.begin(stage)
        try:
            result = self.inner.complete(messages, stage=stage, schema=schema, **params)
        except Exception as exc:
            self.meter.record(stage, failed_call_usage(exc, start))
            raise
        finally:
            CALLS.end(token)
        self.meter.record(stage, result.usage)
        return result
