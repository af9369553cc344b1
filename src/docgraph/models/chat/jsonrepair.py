"""Finding and repairing the JSON in a model reply (pure functions, no model calls).

``extract_json(text)`` returns the decoded value of the first JSON object/array in a reply:
inside a Markdown fence if there is one, else from the first ``{``/``[`` to its matching
bracket (trailing prose ignored). If strict decoding fails, ``repair_json`` rewrites the
common defects small models produce: trailing commas, single-quoted strings, unquoted keys,
Python literals (``True``/``False``/``None``), ``//`` comments, missing commas between
items, and output cut short (an open string is closed, a dangling key gets ``null``, open
brackets are closed). ``JSONNotFound`` is raised when nothing usable is there.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|js|javascript)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_LITERALS = {
    "true": "true",
    "false": "false",
    "null": "null",
    "True": "true",
    "False": "false",
    "None": "null",
    "NaN": "null",
    "Infinity": "null",
    "undefined": "null",
}
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_$][\w$\-]*")


class JSONNotFound(ValueError):
    """The reply holds no JSON object or array, even after repair."""


def extract_json(text: str) -> Any:
    """The JSON value in a model reply (fenced or embedded in prose), repaired if needed."""
    return extract_json_repaired(text)[0]


def extract_json_repaired(text: str) -> tuple[Any, bool]:
    """``extract_json`` and whether the value needed ``repair_json`` (usage counts repairs)."""
    errors: list[str] = []
    for candidate in _candidates(text):
        try:
            return json.loads(candidate), False
        except json.JSONDecodeError as exc:
            errors.append(str(exc))
        try:
            return json.loads(repair_json(candidate)), True
        except (json.JSONDecodeError, JSONNotFound) as exc:
            errors.append(str(exc))
    detail = f" ({errors[0]})" if errors else ""
    raise JSONNotFound(f"no JSON object or array found in the reply{detail}")


def _candidates(text: str) -> list[str]:
    """Fenced blocks first, then the span from the first bracket to its match (or the end)."""
    out = [m.group(1).strip() for m in _FENCE.finditer(text) if "{" in m.group(1) or "[" in m.group(1)]
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        out.append(text[start : _matching_end(text, start)])
    return [c for c in dict.fromkeys(out) if c]


def _matching_end(text: str, start: int) -> int:
    """Index after the bracket closing the one at ``start`` (strings respected), or len(text)."""
    depth, quote, i = 0, "", start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and (ch == '"' or _is_string_start(text, i)):
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _is_string_start(text: str, i: int) -> bool:
    """A single quote opens a string only where a JSON value or key can start (not in "it's")."""
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j < 0 or text[j] in "{[,:"


def _tokens(src: str) -> list[tuple[str, str]]:
    """(kind, json_text) tokens: kinds 'punct', 'string', 'value', 'word'. Lenient lexer."""
    toks: list[tuple[str, str]] = []
    i, n = 0, len(src)
    while i < n:
        ch = src[i]
        if ch in " \t\r\n":
            i += 1
        elif src.startswith("//", i) or ch == "#":
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch in "{}[]:,":
            toks.append(("punct", ch))
            i += 1
        elif ch in "\"'":
            value, i = _read_string(src, i)
            toks.append(("string", json.dumps(value, ensure_ascii=False)))
        else:
            m = _NUMBER.match(src, i)
            if m and m.end() > i:
                num = m.group(0)
                if num.endswith("."):
                    num += "0"
                if num.startswith(".") or num.startswith("-."):
                    num = num.replace(".", "0.", 1)
                toks.append(("value", num))
                i = m.end()
                continue
            m = _WORD.match(src, i)
            if m:
                word = m.group(0)
                toks.append(("value", _LITERALS[word]) if word in _LITERALS else ("word", json.dumps(word)))
                i = m.end()
            else:
                i += 1  # stray character: dropped
    return toks


def _read_string(src: str, i: int) -> tuple[str, int]:
    """Decode a quoted string starting at ``src[i]``; an unterminated one runs to the end."""
    quote, buf, j = src[i], [], i + 1
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"', "'": "'"}
    while j < len(src):
        ch = src[j]
        if ch == "\\" and j + 1 < len(src):
            nxt = src[j + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", src[j + 2 : j + 6] or ""):
                buf.append(chr(int(src[j + 2 : j + 6], 16)))
                j += 6
                continue
            buf.append(escapes.get(nxt, nxt))
            j += 2
            continue
        if ch == quote:
            return "".join(buf), j + 1
        buf.append(ch)
        j += 1
    return "".join(buf), j


def repair_json(src: str) -> str:
    """Strict JSON text for a defective JSON-like ``src`` (see module doc for what is fixed)."""
    toks = _tokens(src)
    if not toks or toks[0] != ("punct", "{") and toks[0] != ("punct", "["):
        raise JSONNotFound("no JSON object or array to repair")
    out: list[str] = []
    stack: list[str] = []  # open containers: '{' or '['
    prev = ""  # previous emitted token: 'open', 'key', 'colon', 'value', 'comma'
    for kind, text in toks:
        if not stack and out:
            break  # the top-level value is complete; ignore what follows
        if kind == "punct" and text in "}]":
            if not stack:
                continue
            _finish_item(out, prev)
            out.append("}" if stack.pop() == "{" else "]")
            prev = "value"
        elif kind == "punct" and text == ",":
            if prev == "value":
                out.append(",")
                prev = "comma"
        elif kind == "punct" and text == ":":
            if prev == "key":
                out.append(":")
                prev = "colon"
        else:  # a key, a value or an opening bracket
            if prev == "value":  # missing comma between items
                out.append(",")
                prev = "comma"
            if stack and stack[-1] == "{" and prev in ("open", "comma"):
                if kind == "punct":
                    raise JSONNotFound("an object or array stands where an object key belongs")
                out.append(text if kind in ("string", "word") else json.dumps(text))
                prev = "key"
                continue
            if prev == "key":  # missing colon
                out.append(":")
            out.append(text)
            if kind == "punct":
                stack.append(text)
                prev = "open"
            else:
                prev = "value"
    if not out:
        raise JSONNotFound("nothing to repair")
    _finish_item(out, prev)  # output cut short: finish the open structure
    for opener in reversed(stack):
        out.append("}" if opener == "{" else "]")
    return "".join(out)


def _finish_item(out: list[str], prev: str) -> None:
    """Before a closing bracket: drop a trailing comma, give a dangling key or colon ``null``."""
    if prev == "comma":
        out.pop()
    elif prev == "key":
        out.append(":null")
    elif prev == "colon":
        out.append("null")
