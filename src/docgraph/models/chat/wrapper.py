"""The base of every ChatModel wrapper (structured, retry, limit, cache, usage, recorder).

A wrapper is a ChatModel around an ``inner`` ChatModel. It forwards the attributes the
layers above may read: ``model`` (the served model name), ``default_params`` (the
parameters the backend applies when a call gives none, part of the cache key),
``supports_vision`` and ``endpoint`` (a human-readable description for error messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..base import ChatModel, ChatResult, Message


class ChatWrapper:
    """Forwards ``complete`` and the descriptive attributes to ``inner``; subclasses override."""

    def __init__(self, inner: ChatModel):
        self.inner = inner

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def default_params(self) -> dict[str, Any]:
        return dict(getattr(self.inner, "default_params", {}) or {})

    @property
    def supports_vision(self) -> bool:
        return bool(getattr(self.inner, "supports_vision", True))

    @property
    def endpoint(self) -> str:
        return str(getattr(self.inner, "endpoint", self.model))

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        return self.inner.complete(messages, stage=stage, schema=schema, **params)

    def unwrap(self, kind: type) -> Any:
        """The first layer (self or below) that is an instance of ``kind``, else None."""
        layer: Any = self
        while layer is not None:
            if isinstance(layer, kind):
                return layer
            layer = getattr(layer, "inner", None)
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"
