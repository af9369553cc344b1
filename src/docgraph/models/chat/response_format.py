"""The ``response_format`` a chat request sends for a stage's pydantic schema.

Servers that constrain decoding to a JSON schema (llama.cpp, vLLM, SGLang, Ollama, OpenAI)
turn a small model's free text into JSON of the schema's shape. Three modes, from most to
least constrained (``ChatSettings.structured_output``):

- ``json_schema``: ``{"type": "json_schema", "json_schema": {"name", "schema"}}``, every
  array bounded with ``maxItems`` (the call's own bounds, else a default cap) so a model
  repeating an item cannot run on until the token limit;
- ``json_object``: ``{"type": "json_object"}`` (any JSON);
- ``none``: no ``response_format`` at all.

``downgrade(mode)`` is the next mode down; ``rejects_format(error)`` says whether a failed
request was the server refusing the parameter (then the client downgrades and resends).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

MODES = ("json_schema", "json_object", "none")
_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_REJECTION = re.compile(
    r"response_format|json_schema|json_object|grammar|guided|structured output|schema", re.IGNORECASE
)


def bound_arrays(
    schema: dict[str, Any], default_max: int | None, max_items: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """A copy of a JSON schema whose arrays carry ``maxItems``.

    ``max_items`` maps a property name to its bound (wherever that property is an array,
    ``$defs`` included); other arrays without a bound get ``default_max`` (None: left as is).
    A bound already in the schema is kept unless ``max_items`` names a tighter one.
    """
    out = copy.deepcopy(schema)
    named = dict(max_items or {})

    def visit(node: Any, name: str | None) -> None:
        if isinstance(node, dict):
            if node.get("type") == "array" or "items" in node:
                bound = named.get(name) if name is not None else None
                current = node.get("maxItems")
                if bound is not None:
                    node["maxItems"] = min(bound, current) if current is not None else bound
                elif current is None and default_max is not None:
                    node["maxItems"] = default_max
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    for prop, sub in value.items():
                        visit(sub, prop)
                elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
                    for sub in value:
                        visit(sub, name)  # Optional[list[...]] keeps the property's name
                elif key != "properties":
                    visit(value, None)
        elif isinstance(node, list):
            for sub in node:
                visit(sub, None)

    visit(out, None)
    return out


def json_schema_format(
    schema: type[BaseModel], *, max_items: Mapping[str, int] | None = None, default_max: int | None = None
) -> dict[str, Any]:
    """The ``json_schema`` response_format for ``schema`` with bounded arrays (see ``bound_arrays``)."""
    body = bound_arrays(schema.model_json_schema(), default_max, max_items)
    return {
        "type": "json_schema",
        "json_schema": {"name": _NAME.sub("_", schema.__name__)[:64] or "reply", "schema": body},
    }


def format_for(
    mode: str, schema: type[BaseModel], given: dict[str, Any] | None, default_max: int | None
) -> dict[str, Any] | None:
    """What to send as ``response_format`` in ``mode``: ``given`` (a call's own json_schema
    format) or one built from ``schema``; ``{"type": "json_object"}``; or None."""
    if mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object"}
    if given is not None:
        if given.get("type") == "json_schema" and default_max is not None:
            inner = dict(given.get("json_schema") or {})
            inner["schema"] = bound_arrays(inner.get("schema") or {}, default_max)
            return {**given, "json_schema": inner}
        return given
    return json_schema_format(schema, default_max=default_max)


def downgrade(mode: str) -> str:
    """The next, less constrained mode (``none`` stays ``none``)."""
    return MODES[min(MODES.index(mode) + 1, len(MODES) - 1)]


def rejects_format(status: int | None, message: str) -> bool:
    """True when an HTTP error is the server refusing ``response_format`` (400/422 naming it)."""
    return status in (400, 422, 501) and bool(_REJECTION.search(message))
