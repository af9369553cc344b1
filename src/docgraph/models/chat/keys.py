"""Content fingerprints of chat requests, shared by the response cache and replay.

``request_key`` is the one definition of "the same request": the model name, every
message's role and text, each image's *content* hash (never its bytes or path), the
call parameters and the schema (name plus a hash of its JSON schema, so a changed schema
misses the cache instead of failing validation). Image digests are memoised per file
(path, size, mtime), so a cache hit on a page image does not re-read the file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..base import ImagePart, Message

_digest_lock = threading.Lock()
_file_digests: dict[tuple[str, int, int], str] = {}
_MAX_MEMO = 50_000


def image_bytes_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def image_digest(part: ImagePart) -> str:
    """sha256 of the image's bytes; file digests are memoised by (path, size, mtime)."""
    if part.data is not None or part.path is None:
        return image_bytes_digest(part.read())
    path = Path(part.path)
    st = path.stat()
    memo_key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _digest_lock:
        hit = _file_digests.get(memo_key)
    if hit is not None:
        return hit
    digest = image_bytes_digest(path.read_bytes())
    with _digest_lock:
        if len(_file_digests) >= _MAX_MEMO:
            _file_digests.clear()
        _file_digests[memo_key] = digest
    return digest


def sniff_mime(data: bytes, declared: str = "image/png") -> str:
    """The image type from its magic bytes (PNG, JPEG, GIF, WebP), else ``declared``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return declared


def data_uri(part: ImagePart) -> str:
    """``data:<mime>;base64,<…>`` for an image part (mime sniffed from the bytes)."""
    data = part.read()
    return f"data:{sniff_mime(data, part.mime)};base64,{base64.b64encode(data).decode('ascii')}"


@lru_cache(maxsize=512)
def schema_fingerprint(schema: type[BaseModel] | None) -> str:
    """``Name@hash12`` of a pydantic schema (``""`` for none)."""
    if schema is None:
        return ""
    body = json.dumps(schema.model_json_schema(), sort_keys=True, separators=(",", ":"))
    return f"{schema.__name__}@{hashlib.sha256(body.encode()).hexdigest()[:12]}"


def messages_payload(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """JSON-able form of messages with images as content digests."""
    return [{"role": m.role, "text": m.text, "images": [image_digest(i) for i in m.images]} for m in messages]


def request_key(
    model: str, messages: Sequence[Message], params: Mapping[str, Any], schema: type[BaseModel] | None
) -> str:
    """sha256 hex of model + messages (image content hashes) + params + schema."""
    payload = {
        "model": model,
        "messages": messages_payload(messages),
        "params": {k: params[k] for k in sorted(params)},
        "schema": schema_fingerprint(schema),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
