"""Input files: which ones (folders expanded), what kind, and checks before anything is written.

Kinds: ``pdf`` (by content, whatever the name), ``image`` (PNG/JPEG, one page each) and
``office`` (DOCX/PPTX/ODT/ODP/DOC/PPT through LibreOffice). Every refusal is an
``InputError`` naming the file and what to do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..config import IngestSettings
from ..errors import InputError
from .images import image_to_pdf
from .office import OFFICE_SUFFIXES, convert_to_pdf
from .pdf import open_pdf
from .render import check_render_size

Kind = Literal["pdf", "image", "office"]
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg"}
SUPPORTED_SUFFIXES = {".pdf"} | IMAGE_SUFFIXES | OFFICE_SUFFIXES
_MAGIC = {b"\x89PNG\r\n\x1a\n": "image", b"\xff\xd8\xff": "image"}
SUPPORTED_HINT = "docgraph reads PDF, PNG/JPEG page images and DOCX/PPTX/ODT/ODP/DOC/PPT"


def collect_inputs(paths: Iterable[Path]) -> tuple[list[Path], list[InputError], list[str]]:
    """Files to ingest (folders recursively, sorted), failures for missing paths, and notes for
    files a folder holds that are skipped (hidden or unsupported)."""
    files: list[Path] = []
    failures: list[InputError] = []
    notes: list[str] = []
    for path in map(Path, paths):
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                rel = child.relative_to(path)
                if any(part.startswith(".") for part in rel.parts):
                    continue
                if child.suffix.lower() in SUPPORTED_SUFFIXES:
                    files.append(child)
                else:
                    notes.append(f"{child}: skipped, unsupported file type ({SUPPORTED_HINT})")
        elif path.is_file():
            files.append(path)
        else:
            failures.append(InputError("does not exist; check the path", path=str(path)))
    return files, failures, notes


def classify(path: Path, max_file_mb: int) -> Kind:
    """The kind of ``path``, or ``InputError`` for empty, oversized, mislabelled or unsupported files."""
    size = path.stat().st_size
    if size == 0:
        raise InputError("is empty (0 bytes); the copy or download probably failed", path=str(path))
    if size > max_file_mb * 1024 * 1024:
        raise InputError(
            f"is {size / 2**20:.0f} MB, over ingest.max_file_mb={max_file_mb}; split it or raise the limit",
            path=str(path),
        )
    with path.open("rb") as fh:
        head = fh.read(1024)
        fh.seek(max(0, size - 2048))
        tail = fh.read()
    suffix = path.suffix.lower()
    if b"%PDF-" in head:
        if b"%%EOF" not in tail:
            raise InputError(
                "looks truncated (its end-of-file marker is missing); the download or copy was "
                "probably cut short - get the complete file again",
                path=str(path),
            )
        return "pdf"
    sniffed = next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)
    if suffix == ".pdf":
        raise InputError(
            "is not really a PDF (no %PDF header); check what the file is and re-export it as PDF", path=str(path)
        )
    if suffix in IMAGE_SUFFIXES:
        if sniffed != "image":
            raise InputError(f"is named {suffix} but is not a PNG/JPEG image; re-export it", path=str(path))
        return "image"
    if sniffed == "image":
        return "image"
    if suffix in OFFICE_SUFFIXES:
        return "office"
    raise InputError(f"unsupported file type {suffix or '(no extension)'!r}; {SUPPORTED_HINT}", path=str(path))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def to_pdf(path: Path, kind: Kind, workdir: Path, settings: IngestSettings) -> Path:
    """The PDF to parse for ``path``: the file itself, or a conversion written under ``workdir``."""
    if kind == "pdf":
        return path
    if kind == "image":
        return image_to_pdf(path, workdir / "image.pdf", dpi=settings.dpi, max_render_pixels=settings.max_render_pixels)
    return convert_to_pdf(path, workdir, settings.office_timeout_s)


@dataclass
class CheckedPdf:
    """What validation learnt from a PDF that opened, has pages, and renders within the cap."""

    page_count: int
    metadata_title: str | None


def check_pdf(pdf: Path, settings: IngestSettings, *, password: str | None, display_name: str) -> CheckedPdf:
    """Open ``pdf`` and check every page's render size; raises ``InputError`` naming the file (and page)."""
    doc = open_pdf(pdf, password, display_name=display_name)
    try:
        if doc.page_count == 0:
            raise InputError("has no pages; it is empty or too damaged to read - re-export it", path=display_name)
        for index in range(doc.page_count):
            try:
                rect = doc[index].rect
            except (RuntimeError, ValueError) as exc:
                raise InputError(
                    f"page cannot be read ({exc}); the file is damaged - re-export it",
                    path=display_name,
                    page=index + 1,
                ) from exc
            check_render_size(
                rect.width, rect.height, settings.dpi, settings.max_render_pixels, path=display_name, page=index + 1
            )
        return CheckedPdf(doc.page_count, (doc.metadata or {}).get("title") or None)
    finally:
        doc.close()
