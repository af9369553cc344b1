"""The answer falls back to the offline (extractive) one when the answer model fails.

An answer model that stays down or unusable after its retries and repairs (a
``ModelError``: the endpoint refusing or timing out, or replies that cannot be used) must
not make ``ask`` fail. Every method's answer path runs through :func:`answer_with_fallback`
with two callables over the same evidence:

- ``model(chat)``: the model answer; its calls go through ``chat``, an :class:`AnswerCalls`
  that keeps each stage's usage — a failed call's too (its retries, repairs, the failure) —
  so the usage of the calls made before a failure is not lost;
- ``offline(reason)``: the method's offline answer, whose first line gives ``reason``
  (``extractive.NO_MODEL`` when no answer model is configured, ``extractive.MODEL_FAILED``
  when this is the fallback).

On a ``ModelError`` the offline answer is returned, marked: ``model_used`` False, one line
in ``Answer.warnings`` naming the stage and the error, the failed calls' usage in
``Answer.usage``, and ``fallbacks=1`` under the failed stage, in the answer's usage and in
the workspace's (``docgraph usage``'s ``fallbk`` column). The CLI prints the warnings; the
web API returns them in the Answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ...errors import ModelError
from ...models.base import ChatModel, ChatResult, Message
from ...models.chat.wrapper import ChatWrapper
from ...models.usage import failed_call_usage
from ...types import Answer, Usage
from .extractive import MODEL_FAILED, NO_MODEL

if TYPE_CHECKING:
    from ..base import MethodContext

ERROR_CHARS = 400  # the error as the warning quotes it


class AnswerCalls(ChatWrapper):
    """The answer model, keeping the usage of each stage called (``usage``) and the stage
    whose call failed (``failed_stage``)."""

    def __init__(self, inner: ChatModel):
        super().__init__(inner)
        self.usage: dict[str, Usage] = {}
        self.failed_stage: str | None = None

    def _add(self, stage: str, usage: Usage) -> None:
        self.usage[stage] = self.usage.get(stage, Usage()).add(usage)

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        start = time.perf_counter()
        try:
            result = self.inner.complete(messages, stage=stage, schema=schema, **params)
        except ModelError as exc:
            self._add(stage, failed_call_usage(exc, start))
            self.failed_stage = stage
            raise
        self._add(stage, result.usage)
        return result


def fallback_warning(stage: str, exc: Exception) -> str:
    """The warning line of a fallback answer."""
    error = " ".join(str(exc).split())
    if len(error) > ERROR_CHARS:
        error = error[:ERROR_CHARS] + " …"
    return (
        f"the answer model failed at {stage} ({type(exc).__name__}: {error}); this is the offline "
        f"(extractive) answer over the same evidence"
    )


def answer_with_fallback(
    ctx: MethodContext, chat: ChatModel | None, model: Callable[[AnswerCalls], Answer], offline: Callable[[str], Answer]
) -> Answer:
    """``offline(NO_MODEL)`` without an answer model; else ``model``'s answer, or on a
    ``ModelError`` the offline answer marked as a fallback (see the module doc)."""
    if chat is None:
        return offline(NO_MODEL)
    calls = AnswerCalls(chat)
    try:
        return model(calls)
    except ModelError as exc:
        stage = calls.failed_stage or "answer"
        answer = offline(MODEL_FAILED)
        error = exc
    for name, used in calls.usage.items():
        answer.usage[name] = answer.usage.get(name, Usage()).add(used)
    answer.usage[stage] = answer.usage.get(stage, Usage()).add(Usage(fallbacks=1))
    ctx.models.meter.record(stage, Usage(fallbacks=1))
    answer.model_used = False
    answer.warnings.append(fallback_warning(stage, error))
    return answer
