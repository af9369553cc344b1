"""Structured output: parse and validate a reply against a pydantic schema, repair or re-ask.

``StructuredChat`` wraps any ChatModel (HTTP backend or replay), so every path parses the
same way. With ``schema=`` given:

1. the JSON is extracted from the reply (fences, trailing prose) and repaired
   (``jsonrepair``; a repair counts in ``usage.repairs``), then validated with
   ``schema.model_validate``;
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

The returned ``ChatResult.usage`` sums both attempts and counts each re-ask in
``repairs``; a failing call's usage is attached to the exception as ``exc.usage`` (also
when the endpoint fails during a re-ask) so accounting still sees it.

Without ``schema`` (free text) the reply is used as it is, except that an empty reply is
re-asked with a note saying so (``ModelOutputError`` if it stays empty) and a reply cut at
the token limit is re-asked with ``max_tokens`` raised as above (the last reply is kept if
it is cut again: text cut short is still text).
"""

from __future__ import annotations

import json
import re
import time
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ...errors import ModelOutputError
from ...types import Usage
from ..base import ChatModel, ChatResult, Message
from .jsonrepair import JSONNotFound, extract_json_repaired
from .keys import request_key
from .wrapper import ChatWrapper

ERRORS_DIR = "model_errors"
TRUNCATION_GROWTH = 2  # a re-ask after a cut reply gets at most this times the original max_tokens


EMPTY_REASK = "Your previous reply was empty. Answer the request above."


def _grow_limit(params: dict[str, Any], original: Any) -> None:
    """Double the call's ``max_tokens``, never past ``TRUNCATION_GROWTH`` times ``original``."""
    if original:
        current = int(params.get("max_tokens") or original)
        params["max_tokens"] = min(current * 2, int(original) * TRUNCATION_GROWTH)


class ModelOutputTruncated(ModelOutputError):
    """The reply stopped at the token limit before its JSON was complete."""


def parse_reply(text: str, schema: type[BaseModel]) -> BaseModel:
    """The validated schema instance in ``text``; raises ``ValueError`` saying what is wrong."""
    return parse_reply_repaired(text, schema)[0]


def parse_reply_repaired(text: str, schema: type[BaseModel]) -> tuple[BaseModel, bool]:
    """``parse_reply`` and whether the JSON needed repairing (``jsonrepair.repair_json``)."""
    try:
        data, repaired = extract_json_repaired(text)
    except JSONNotFound as exc:
        raise ValueError(str(exc)) from None
    data = _wrap_bare_list(data, schema)
    try:
        return schema.model_validate(data), repaired
    except ValidationError as exc:
        lines = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:10]]
        raise ValueError("the JSON does not match the schema: " + "; ".join(lines)) from None


def _wrap_bare_list(data: Any, schema: type[BaseModel]) -> Any:
    """A bare list for a schema with exactly one list field becomes ``{field: list}``."""
    if not isinstance(data, list):
        return data
    list_fields = [
        name
        for name, f in schema.model_fields.items()
        if typing.get_origin(f.annotation) in (list, tuple, set) or f.annotation in (list, tuple)
    ]
    return {list_fields[0]: data} if len(list_fields) == 1 else data


def reask_message(error: str, schema: type[BaseModel], truncated: bool) -> Message:
    """The follow-up user message asking for a corrected reply."""
    cut = " Your reply was cut off at the token limit; answer more concisely." if truncated else ""
    body = json.dumps(schema.model_json_schema(), separators=(",", ":"))
    return Message(
        "user",
        f"Your previous reply could not be used: {error}.{cut}\n"
        f"Reply again with only one JSON value that matches this JSON schema, no prose:\n{body}",
    )


class StructuredChat(ChatWrapper):
    """Parses/validates replies when a schema is given; re-asks once; saves failures."""

    def __init__(self, inner: ChatModel, errors_dir: Path | None = None, reasks: int = 1):
        super().__init__(inner)
        self.errors_dir = Path(errors_dir) if errors_dir is not None else None
        self.reasks = reasks

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        if schema is None:
            return self._free_text(messages, stage, params)
        conversation = list(messages)
        replies: list[str] = []
        usage = Usage()
        error = ""
        truncated = False
        call_params = dict(params)
        original = call_params.get("max_tokens") or self.default_params.get("max_tokens")
        for attempt in range(self.reasks + 1):
            if attempt:
                usage = usage.add(Usage(repairs=1))
            result = self._ask(conversation, stage, schema, call_params, usage)
            usage = usage.add(result.usage)
            replies.append(result.text)
            truncated = result.finish_reason == "length"
            try:
                parsed, repaired = parse_reply_repaired(result.text, schema)
                if truncated:
                    raise ValueError(
                        "the reply was cut off at the token limit "
                        f"(max_tokens={call_params.get('max_tokens') or original})"
                    )
            except ValueError as exc:
                error = str(exc)
            else:
                return ChatResult(
                    text=result.text,
                    parsed=parsed,
                    usage=usage.add(Usage(repairs=int(repaired))),
                    cached=result.cached,
                    model=result.model,
                    finish_reason=result.finish_reason,
                )
            if truncated:
                _grow_limit(call_params, original)
                conversation = [*messages, reask_message(error, schema, True)]
            else:
                conversation = [*conversation, Message("assistant", result.text), reask_message(error, schema, False)]
        saved = self._save(stage, schema, messages, replies, error, params)
        kind = ModelOutputTruncated if truncated else ModelOutputError
        hint = (
            " — raise max_output_tokens for this role, or lower schema_max_items so the reply fits" if truncated else ""
        )
        failure = kind(
            f"{self.endpoint}: stage {stage!r} gave no valid {schema.__name__} after "
            f"{len(replies)} attempt(s): {error}{hint}",
            raw=replies[-1],
            saved_to=saved,
        )
        failure.usage = usage  # type: ignore[attr-defined]  # exceptions carry the usage of the failed call
        raise failure

    def _ask(
        self,
        conversation: Sequence[Message],
        stage: str,
        schema: type[BaseModel] | None,
        params: dict[str, Any],
        usage: Usage,
    ) -> ChatResult:
        """One request below; an exception leaves carrying the usage of the attempts before it."""
        try:
            return self.inner.complete(conversation, stage=stage, schema=schema, **params)
        except Exception as exc:
            if usage != Usage():
                exc.usage = usage.add(getattr(exc, "usage", None) or Usage())  # type: ignore[attr-defined]  # exceptions carry the usage of the failed call
            raise

    def _free_text(self, messages: Sequence[Message], stage: str, params: dict[str, Any]) -> ChatResult:
        """A free-text call: empty and cut replies re-asked (see the module doc)."""
        conversation = list(messages)
        call_params = dict(params)
        original = call_params.get("max_tokens") or self.default_params.get("max_tokens")
        usage = Usage()
        for attempt in range(self.reasks + 1):
            if attempt:
                usage = usage.add(Usage(repairs=1))
            result = self._ask(conversation, stage, None, call_params, usage)
            usage = usage.add(result.usage)
            empty = not result.text.strip()
            if not empty and (result.finish_reason != "length" or attempt == self.reasks):
                result.usage = usage
                return result
            if empty:
                conversation = [*messages, Message("user", EMPTY_REASK)]
            else:
                _grow_limit(call_params, original)
                conversation = list(messages)
        exc = ModelOutputError(
            f"{self.endpoint}: stage {stage!r} gave an empty reply {self.reasks + 1} time(s); "
            "check the server's logs (out of memory? a stop sequence at the start?)",
            raw="",
        )
        exc.usage = usage  # type: ignore[attr-defined]  # exceptions carry the usage of the failed call
        raise exc

    def _save(
        self,
        stage: str,
        schema: type[BaseModel],
        messages: Sequence[Message],
        replies: list[str],
        error: str,
        params: dict[str, Any],
    ) -> str | None:
        """Write the failed exchange to ``model_errors/``; the path, or None when not possible."""
        if self.errors_dir is None:
            return None
        key = request_key(self.model, messages, params, schema)
        safe_stage = re.sub(r"[^\w.-]+", "_", stage)
        path = self.errors_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe_stage}-{key[:12]}.json"
        record = {
            "stage": stage,
            "model": self.model,
            "endpoint": self.endpoint,
            "schema": schema.__name__,
            "error": error,
            "replies": replies,
            "params": params,
            "messages": [{"role": m.role, "text": m.text, "images": len(m.images)} for m in messages],
        }
        try:
            self.errors_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        except OSError:
            return None
        return str(path)
