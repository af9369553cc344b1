"""Recorded-response replay: run model-driven stages without a live model.

A replay file is JSONL, one reply per line::

    {"stage": "kg4vd.extract", "text": "{\\"entities\\": []}"}
    {"stage": "kg4vd.reflect", "key": "<request sha256>", "text": "...", "usage": {"input_tokens": 812}}

``text`` may also be a JSON object/array (it is serialised). ``ReplayChat`` is a backend:
``ModelHub`` puts it under the same structured/cache/usage wrappers as the HTTP client
(``ModelsSettings.replay_file`` selects it), so prompts and parsing are exercised exactly
as in production. A request is answered by:

1. the line whose ``key`` equals the request's ``keys.request_key`` (model + messages +
   default params overlaid with the call's + schema) — reusable any number of times;
2. otherwise the next unused line of that ``stage`` (or of stage ``"*"``), in file order;
3. otherwise ``ModelError`` naming the stage, the key and the file.

``RecordingChat`` wraps a real backend (below the structured layer, so raw replies and
re-asks are kept) and appends every reply it sees, with its key, to such a file.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...config import ChatSettings
from ...errors import ModelError
from ...types import Usage
from ..base import ChatModel, ChatResult, Message
from .keys import request_key
from .wrapper import ChatWrapper

ANY_STAGE = "*"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def write_replay(path: Path | str, entries: Iterable[Mapping[str, Any] | tuple[str, Any]]) -> Path:
    """Write a replay file from dicts (``stage``, ``text``, optional ``key``/``usage``/…) or
    ``(stage, text)`` pairs; ``text`` may be a str or a JSON-able object. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for entry in entries:
            item = {"stage": entry[0], "text": entry[1]} if isinstance(entry, tuple) else dict(entry)
            item["text"] = _as_text(item.get("text", ""))
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    return path


def read_replay(path: Path | str) -> list[dict[str, Any]]:
    """The entries of a replay file; ``ModelError`` naming the line when one is invalid."""
    path = Path(path)
    if not path.exists():
        raise ModelError(f"replay file {path} does not exist; record one or fix models.replay_file")
    out: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or "stage" not in item or "text" not in item:
                raise ValueError("needs 'stage' and 'text'")
        except ValueError as exc:
            raise ModelError(f"{path}:{number}: not a replay entry ({exc})") from None
        item["text"] = _as_text(item["text"])
        out.append(item)
    return out


class ReplayChat:
    """A ChatModel answering from a replay file (see the module doc for the lookup order)."""

    supports_vision = True

    def __init__(self, path: Path | str, settings: ChatSettings | None = None, role: str = "build"):
        self.path = Path(path)
        self.settings = settings or ChatSettings()
        self.model = self.settings.model
        self.endpoint = f"replay file {self.path} (role {role})"
        self._entries = read_replay(self.path)
        self._by_key = {e["key"]: i for i, e in enumerate(self._entries) if e.get("key")}
        self._queues: dict[str, deque[int]] = {}
        for i, entry in enumerate(self._entries):
            self._queues.setdefault(entry["stage"], deque()).append(i)
        self._used: set[int] = set()
        self._lock = threading.Lock()

    @property
    def default_params(self) -> dict[str, Any]:
        return {"temperature": self.settings.temperature, "max_tokens": self.settings.max_output_tokens}

    def remaining(self, stage: str | None = None) -> int:
        """Unused ordered entries (of ``stage``, or all)."""
        with self._lock:
            stages = [stage] if stage else list(self._queues)
            return sum(1 for s in stages for i in self._queues.get(s, ()) if i not in self._used)

    def _take(self, key: str, stage: str) -> dict[str, Any] | None:
        with self._lock:
            index = self._by_key.get(key)
            if index is None:
                for name in (stage, ANY_STAGE):
                    queue = self._queues.get(name, deque())
                    while queue and queue[0] in self._used:
                        queue.popleft()
                    if queue:
                        index = queue.popleft()
                        break
            if index is None:
                return None
            self._used.add(index)
            return self._entries[index]

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        key = request_key(self.model, messages, {**self.default_params, **params}, schema)
        entry = self._take(key, stage)
        if entry is None:
            raise ModelError(
                f"{self.endpoint}: no recorded reply for stage {stage!r} (request key {key[:16]}…); "
                "add a line for this stage or re-record the file against a live model"
            )
        usage = Usage(calls=1, images=sum(len(m.images) for m in messages))
        if isinstance(entry.get("usage"), dict):
            usage = Usage.model_validate({**entry["usage"], "calls": 1, "images": usage.images})
        return ChatResult(
            text=entry["text"],
            usage=usage,
            model=entry.get("model") or self.model,
            finish_reason=entry.get("finish_reason", "stop"),
        )


class RecordingChat(ChatWrapper):
    """Appends each reply of ``inner`` (with stage and request key) to a replay file."""

    def __init__(self, inner: ChatModel, path: Path | str):
        super().__init__(inner)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        result = self.inner.complete(messages, stage=stage, schema=schema, **params)
        key = request_key(self.model, messages, {**self.default_params, **params}, schema)
        line = {
            "stage": stage,
            "key": key,
            "model": result.model,
            "text": result.text,
            "finish_reason": result.finish_reason,
            "usage": {"input_tokens": result.usage.input_tokens, "output_tokens": result.usage.output_tokens},
        }
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        return result
