"""Structured output: parse and validate a reply against a pydantic schema, repair or re-ask.

``StructuredChat`` wraps any ChatModel (HTTP backend or replay), so every path parses the
same way. With ``schema=`` given:

1. the JSON is extracted from the reply (fences, trailing prose) and repaired
   (``jsonrepair``), then validated with ``schema.model_validate``;
2. on failure the model is asked once more: the conversation plus its reply plus a user
   message naming the validation error and the schema;
3. a reply cut at the token limit (``finish_reason == "length"``) is never accepted, even
   when its JSON could be patched up (the cut item would be kept half-written): it is
   re-asked without the cut reply, asking for a shorter answer, with ``max_tokens`` raised
   to at most ``TRUNCATION_GROWTH`` times the call's original limit (never more, however
   many re-asks);
4. if that fails too, ``ModelOutputError`` is raised with the raw reply — the subclass
   ``ModelOutputTruncated`` when the last reply was cut at the limit — and the exchange
   is saved as JSON under ``<workspace>/model_errors/`` (path in ``exc.saved_to``).

The returned ``ChatResult.usage`` sums both attempts; a failing call's usage is attached
to the exception as ``exc.usage`` so accounting still sees it. Without ``schema`` the
call passes through unchanged.
"""

from __future__ import annotations

import json
import re
import time
import typing
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ValidationError

from ..errors import ModelOutputError
from ..types import Usage
from .base import ChatModel, ChatResult, Message
from .jsonrepair import JSONNotFound, extract_json
from .keys import request_key
from .wrapper import ChatWrapper

ERRORS_DIR = "model_errors"
TRUNCATION_GROWTH = 2  # a re-ask after a cut reply gets at most this times the original max_tokens


class ModelOutputTruncated(ModelOutputError):
    """The reply stopped at the token limit before its JSON was complete."""


def parse_reply(text: str, schema: type[BaseModel]) -> BaseModel:
    """The validated schema instance in ``text``; raises ``ValueError`` saying what is wrong."""
    try:
        data = extract_json(text)
    except JSONNotFound as exc:
        raise ValueError(str(exc)) from None
    data = _wrap_bare_list(data, schema)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        lines = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:10]]
        raise ValueError("the JSON does not match the schema: " + "; ".join(lines)) from None


def _wrap_bare_list(data: Any, schema: type[BaseModel]) -> Any:
    """A bare list for a schema with exactly one list field becomes ``{field: list}``."""
    if not isinstance(data, list):
        return data
    list_fields = [name for name, f in schema.model_fields.items()
                   if typing.get_origin(f.annotation) in (list, tuple, set) or f.annotation in (list, tuple)]
    return {list_fields[0]: data} if len(list_fields) == 1 else data


def reask_message(error: str, schema: type[BaseModel], truncated: bool) -> Message:
    """The follow-up user message asking for a corrected reply."""
    cut = " Your reply was cut off at the token limit; answer more concisely." if truncated else ""
    body = json.dumps(schema.model_json_schema(), separators=(",", ":"))
    return Message("user", f"Your previous reply could not be used: {error}.{cut}\n"
                           f"Reply again with only one JSON value that matches this JSON schema, no prose:\n{body}")


class StructuredChat(ChatWrapper):
    """Parses/validates replies when a schema is given; re-asks once; saves failures."""

    def __init__(self, inner: ChatModel, errors_dir: Path | None = None, reasks: int = 1):
        super().__init__(inner)
        self.errors_dir = Path(errors_dir) if errors_dir is not None else None
        self.reasks = reasks

    def complete(self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None,
                 **params: Any) -> ChatResult:
        if schema is None:
            return self.inner.complete(messages, stage=stage, **params)
        conversation = list(messages)
        replies: list[str] = []
        usage = Usage()
        error = ""
        truncated = False
        call_params = dict(params)
        original = call_params.get("max_tokens") or self.default_params.get("max_tokens")
        for _ in range(self.reasks + 1):
            result = self.inner.complete(conversation, stage=stage, schema=schema, **call_params)
            usage = usage.add(result.usage)
            replies.append(result.text)
            truncated = result.finish_reason == "length"
            try:
                parsed = parse_reply(result.text, schema)
                if truncated:
                    raise ValueError("the reply was cut off at the token limit "
                                     f"(max_tokens={call_params.get('max_tokens') or original})")
            except ValueError as exc:
                error = str(exc)
            else:
                return ChatResult(text=result.text, parsed=parsed, usage=usage, cached=result.cached,
                                  model=result.model, finish_reason=result.finish_reason)
            if truncated:
                if original:
                    current = int(call_params.get("max_tokens") or original)
                    call_params["max_tokens"] = min(current * 2, int(original) * TRUNCATION_GROWTH)
                conversation = [*messages, reask_message(error, schema, True)]
            else:
                conversation = [*conversation, Message("assistant", result.text), reask_message(error, schema, False)]
        saved = self._save(stage, schema, messages, replies, error, params)
        kind = ModelOutputTruncated if truncated else ModelOutputError
        hint = (" — raise max_output_tokens for this role, or lower schema_max_items so the reply fits"
                if truncated else "")
        exc = kind(f"{self.endpoint}: stage {stage!r} gave no valid {schema.__name__} after "
                   f"{len(replies)} attempt(s): {error}{hint}", raw=replies[-1], saved_to=saved)
        exc.usage = usage  # type: ignore[attr-defined]
        raise exc

    def _save(self, stage: str, schema: type[BaseModel], messages: Sequence[Message], replies: list[str],
              error: str, params: dict[str, Any]) -> str | None:
        """Write the failed exchange to ``model_errors/``; the path, or None when not possible."""
        if self.errors_dir is None:
            return None
        key = request_key(self.model, messages, params, schema)
        safe_stage = re.sub(r"[^\w.-]+", "_", stage)
        path = self.errors_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe_stage}-{key[:12]}.json"
        record = {"stage": stage, "model": self.model, "endpoint": self.endpoint, "schema": schema.__name__,
                  "error": error, "replies": replies, "params": params,
                  "messages": [{"role": m.role, "text": m.text, "images": len(m.images)} for m in messages]}
        try:
            self.errors_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        except OSError:
            return None
        return str(path)
