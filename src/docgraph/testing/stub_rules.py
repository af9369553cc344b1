"""What the loopback model stub (``openai_stub``) works with: the requests it saw, the fault
kinds it can play, and the rules that choose a reply or a fault for a request."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

STAGE_HEADER = "X-Docgraph-Stage"
FAULT_KINDS = (
    "400",
    "401",
    "404",
    "429",
    "500",
    "503",
    "hang",
    "malformed",
    "truncated",
    "disconnect",
    "reset",
    "schema",
    "empty",
    "broken",
)
# What a flaky endpoint does (issue 15's model faults): every kind a client must survive.
ENDPOINT_FAULTS = ("hang", "429", "500", "reset", "disconnect", "malformed")
REPLY_FAULTS = ("truncated", "schema", "empty", "broken")
MODEL_FAULTS = ENDPOINT_FAULTS + REPLY_FAULTS
JSON_ONLY_FAULTS = ("schema", "broken")  # drawn only for requests that ask for JSON
_WRONG_SHAPE = [[{"wrong": True}]]  # fails a str, number, list-of-anything or object field alike

Reply = Any  # str | dict | list | Callable[[SeenRequest], str | dict | list]
Matcher = Any  # None | str (substring of the prompt) | Callable[[SeenRequest], bool]


@dataclass
class SeenRequest:
    """One request as the stub received it, and what it answered."""

    path: str
    body: Any
    headers: dict[str, str]
    status: int = 200
    fault: str | None = None

    @property
    def stage(self) -> str | None:
        return self.headers.get(STAGE_HEADER.lower())

    def _parts(self) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for m in (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []:
            content = m.get("content")
            if isinstance(content, str):
                parts.append({"type": "text", "text": content})
            elif isinstance(content, list):
                parts.extend(p for p in content if isinstance(p, dict))
        return parts

    @property
    def texts(self) -> list[str]:
        """Every text part of the messages (chat) or the inputs (embeddings), in order."""
        if isinstance(self.body, dict) and "input" in self.body:
            value = self.body["input"]
            return [value] if isinstance(value, str) else [str(v) for v in value]
        if isinstance(self.body, dict) and "query" in self.body:
            return [self.body["query"], *map(str, self.body.get("documents", []))]
        return [p.get("text", "") for p in self._parts() if p.get("type") == "text"]

    @property
    def prompt(self) -> str:
        return "\n".join(self.texts)

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The request's ``response_format``, if it sent one."""
        return self.body.get("response_format") if isinstance(self.body, dict) else None

    @property
    def image_urls(self) -> list[str]:
        return [p["image_url"]["url"] for p in self._parts() if p.get("type") == "image_url"]


@dataclass
class Rule:
    reply: Reply
    match: Matcher = None
    stage: str | None = None
    times: int | None = None
    path: str = "/chat/completions"
    kind: str | None = None  # fault kind; None for a reply rule
    retry_after: float | None = None
    used: int = field(default=0)

    def applies(self, req: SeenRequest) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        if not req.path.endswith(self.path):
            return False
        if self.stage is not None and req.stage != self.stage:
            return False
        if self.match is None:
            return True
        if isinstance(self.match, str):
            return self.match in req.prompt
        return bool(self.match(req))


@dataclass
class RateRule:
    """A seeded random share ``rate`` of the requests matching ``path``/``stage`` get a fault."""

    rate: float
    kinds: tuple[str, ...]
    rng: random.Random
    path: str = "/chat/completions"
    stage: str | None = None
    retry_after: float | None = None

    def draw(self, req: SeenRequest) -> str | None:
        """A fault kind for ``req``, or None; ``JSON_ONLY_FAULTS`` only for a request that asks for
        JSON (free text has no JSON to break: another kind is drawn instead)."""
        if not req.path.endswith(self.path) or (self.stage is not None and req.stage != self.stage):
            return None
        if self.rng.random() >= self.rate:
            return None
        kinds = self.kinds if req.response_format else tuple(k for k in self.kinds if k not in JSON_ONLY_FAULTS)
        return self.rng.choice(kinds or self.kinds)


def broken_json(text: str) -> str:
    """``text``'s JSON as a small model might write it (repairable: ``models.chat.jsonrepair``)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    written = repr(value)
    if isinstance(value, (dict, list)):  # a comment inside: even {} needs repairing
        written = written[0] + " // as asked\n" + written[1:]
    return "Here is the JSON you asked for:\n" + written


def wrong_shape(req: SeenRequest) -> str:
    """JSON that parses but violates the request's schema (see ``_WRONG_SHAPE``)."""
    fmt = req.response_format or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    props = (schema or {}).get("properties") or {}
    return json.dumps({name: _WRONG_SHAPE for name in props} if props else _WRONG_SHAPE)
