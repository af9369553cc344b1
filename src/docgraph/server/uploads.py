"""Uploads: allowed types, safe names, size limits, and saving into ``<workspace>/uploads/``.

Two limits guard the size: an ASGI middleware refuses a request body larger than the
limit (by its ``Content-Length`` when given, else by counting the bytes as they arrive),
and :func:`save_upload` counts each file's bytes again while writing it. The type is
checked twice too: by the name's extension before anything is written, then by the file's
first bytes (a ``.pdf`` must start like a PDF).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path

from fastapi import HTTPException, UploadFile
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_ZIP = (b"PK\x03\x04",)
UPLOAD_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    ".pdf": (b"%PDF-",),
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".pptx": _ZIP,
    ".docx": _ZIP,
    ".odp": _ZIP,
    ".odt": _ZIP,
}
SNIFF_BYTES = 16
UPLOAD_DIR = "uploads"
MULTIPART_SLACK = 1 << 20  # room for the multipart headers around the files
CHUNK = 1 << 20


def allowed_types() -> str:
    return ", ".join(sorted(e.lstrip(".") for e in UPLOAD_SIGNATURES))


def safe_upload_name(filename: str | None) -> str:
    """A plain file name for an uploaded file: no folders, no control or shell-special
    characters, at most 120 characters, extension kept (lower-cased)."""
    name = unicodedata.normalize("NFKC", (filename or "").replace("\\", "/").rsplit("/", 1)[-1])
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    stem = re.sub(r"[^\w.\- ]+", "_", stem).strip(" ._") or "upload"
    ext = re.sub(r"[^A-Za-z0-9]+", "", ext).lower()
    stem = stem[: 120 - len(ext) - 1]
    return f"{stem}.{ext}" if ext else stem


def extension_error(name: str) -> str | None:
    """Why a file of this name is refused by its extension, or None."""
    ext = Path(name).suffix.lower()
    if ext not in UPLOAD_SIGNATURES:
        return f"{name}: unsupported file type {ext or '(none)'}; upload one of: {allowed_types()}"
    return None


def content_error(name: str, head: bytes) -> str | None:
    """Why a file of this (allowed) name starting with ``head`` is refused, or None."""
    ext = Path(name).suffix.lower()
    if not any(head.startswith(sig) for sig in UPLOAD_SIGNATURES.get(ext, ())):
        return f"{name}: the content is not a {ext.lstrip('.').upper()} file"
    return None


def too_large(limit_bytes: int) -> HTTPException:
    return HTTPException(
        status_code=413,
        detail=f"upload larger than the limit of {limit_bytes / (1 << 20):g} MB (serve --max-upload-mb)",
    )


async def save_upload(upload: UploadFile, root: Path, budget: int) -> tuple[Path, int, bool]:
    """Write one uploaded file to ``uploads/<sha256[:12]>/<name>``; returns (path, size, created).

    ``budget`` is how many bytes this file may still take (413 past it). 415 for a type
    that is not allowed or content that does not match the extension, 400 for an empty file.
    An identical upload already kept is reused (``created`` false).
    """
    name = safe_upload_name(upload.filename)
    if error := extension_error(name):
        raise HTTPException(status_code=415, detail=error)
    incoming = root / UPLOAD_DIR / ".incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    digest, size, head = hashlib.sha256(), 0, b""
    fd, tmp_name = tempfile.mkstemp(dir=incoming, suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := await upload.read(CHUNK):
                size += len(chunk)
                if size > budget:
                    raise too_large(budget)
                if len(head) < SNIFF_BYTES:
                    head += chunk[: SNIFF_BYTES - len(head)]
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise HTTPException(status_code=400, detail=f"{name}: the file is empty")
        if error := content_error(name, head):
            raise HTTPException(status_code=415, detail=error)
        sha = digest.hexdigest()
        dest = (root / UPLOAD_DIR / sha[:12]).resolve() / name
        dest.relative_to(root.resolve())  # the name is sanitised; this is belt and braces
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_file():
            tmp.unlink()
            return dest, size, False
        os.replace(tmp, dest)
        return dest, size, True
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class BodyLimit:
    """ASGI middleware: 413 for a request to ``paths`` whose body exceeds ``max_bytes``.

    A declared ``Content-Length`` over the limit is refused before reading anything; a body
    that grows past it while streaming is cut off by raising 413 from ``receive`` (FastAPI
    passes HTTP exceptions raised while parsing a body through to its handler).
    """

    def __init__(self, app: ASGIApp, max_bytes: int, paths: tuple[str, ...] = ("/api/upload",)) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            error = too_large(self.max_bytes - MULTIPART_SLACK)
            await JSONResponse({"detail": error.detail}, status_code=413)(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise too_large(self.max_bytes - MULTIPART_SLACK)
            return message

        await self.app(scope, limited_receive, send)
