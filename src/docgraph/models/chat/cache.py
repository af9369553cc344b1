"""The persistent response cache: a finished model call is never paid for twice.

``CachedChat`` keys each call by ``keys.request_key`` (model + messages with image
content hashes + the backend's default parameters overlaid with the call's + schema) and
stores the reply in the workspace store (namespace ``"chat"``). A hit makes no call below
and returns a ``ChatResult`` equal in text, parsed value and model to the original, with
``cached=True`` and usage ``Usage(cache_hits=1)``. Only successful (validated) replies
are stored, so a failure is retried next time. A stored reply that no longer validates
against the schema counts as a miss.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ...store.base import Store
from ...types import Usage
from ..base import ChatModel, ChatResult, Message
from .keys import request_key
from .wrapper import ChatWrapper

NAMESPACE = "chat"


class CachedChat(ChatWrapper):
    """Serves repeated requests from ``store``; see the module doc for the key and contract."""

    def __init__(self, inner: ChatModel, store: Store, namespace: str = NAMESPACE):
        super().__init__(inner)
        self.store = store
        self.namespace = namespace

    def key(self, messages: Sequence[Message], schema: type[BaseModel] | None, params: dict[str, Any]) -> str:
        return request_key(self.model, messages, {**self.default_params, **params}, schema)

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        key = self.key(messages, schema, params)
        hit = self._lookup(key, schema)
        if hit is not None:
            return hit
        result = self.inner.complete(messages, stage=stage, schema=schema, **params)
        record = {
            "text": result.text,
            "model": result.model,
            "finish_reason": result.finish_reason,
            "parsed": result.parsed.model_dump(mode="json") if result.parsed is not None else None,
            "usage": result.usage.model_dump(),
            "stage": stage,
        }
        self.store.cache_put(self.namespace, key, json.dumps(record, ensure_ascii=False).encode("utf-8"))
        return result

    def _lookup(self, key: str, schema: type[BaseModel] | None) -> ChatResult | None:
        raw = self.store.cache_get(self.namespace, key)
        if raw is None:
            return None
        try:
            record = json.loads(raw)
            parsed = schema.model_validate(record["parsed"]) if schema is not None else None
        except (ValueError, KeyError, TypeError, ValidationError):
            return None
        return ChatResult(
            text=record["text"],
            parsed=parsed,
            usage=Usage(cache_hits=1),
            cached=True,
            model=record.get("model", self.model),
            finish_reason=record.get("finish_reason", ""),
        )
