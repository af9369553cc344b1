"""The ``Parser`` seam: what a layout backend must provide, and the registry that picks one by name.

A backend opens a PDF (optionally with a password) and answers, per 1-based page number:

- ``page_info``: page size in points and how much text layer the page has (cheap; decides
  between the layout path and the OCR path);
- ``layout``: the page's layout blocks in reading order, with boxes in PDF points
  (origin top-left), text, table Markdown and, for headings, their visual size.

Everything else (rendering, OCR, ids, section paths, storage) is the pipeline's, so a
permissively licensed backend (e.g. pypdfium2 + pdfplumber + rapid-layout) is one new
module plus one ``register_parser`` call. Backends receive only PDFs: images and Office
files are converted before parsing (see ``formats``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from ..errors import ConfigError
from ..types import ComponentKind


@dataclass(frozen=True)
class PageInfo:
    """Size (points) and text-layer facts of one page."""

    width: float
    height: float
    text_chars: int  # non-whitespace characters in the text layer
    has_images: bool  # raster images (a scan is one big image)


@dataclass(frozen=True)
class LayoutBlock:
    """One layout region as a backend reports it, before ids and section paths are assigned.

    ``heading_size`` is set for headings only (``TITLE``): a prominence measure (font size in
    points) from which heading levels are ranked across the whole document.
    """

    kind: ComponentKind
    bbox: tuple[float, float, float, float]
    text: str = ""
    markdown: str | None = None
    heading_size: float | None = None
    source: Literal["pdf", "ocr"] = "pdf"


class ParsedPdf(Protocol):
    """An open PDF. Page numbers are 1-based. Not shared across processes."""

    page_count: int

    def page_info(self, number: int) -> PageInfo: ...
    def layout(self, number: int) -> list[LayoutBlock]:
        """Layout blocks of the page in reading order (text-layer path; no OCR)."""

    def close(self) -> None: ...


class Parser(Protocol):
    name: str

    def open(self, path: Path, password: str | None = None) -> ParsedPdf:
        """Open ``path``; raises ``InputError`` naming the file for unreadable/encrypted input."""


_REGISTRY: dict[str, str] = {
    "pymupdf": "docgraph.documents.pymupdf_parser:PyMuPDFParser",
    "pymupdf-fast": "docgraph.documents.pymupdf_parser:FastPyMuPDFParser",
}


def register_parser(name: str, target: str) -> None:
    """Make a backend available as ``IngestSettings.parser = name``.

    ``target`` is an import path ``"package.module:Factory"`` (a class or a function returning a
    ``Parser``): page workers are separate processes and import the backend by this path.
    """
    if ":" not in target:
        raise ConfigError(f"parser target {target!r} must look like 'package.module:Factory'")
    _REGISTRY[name] = target


def available_parsers() -> list[str]:
    return sorted(_REGISTRY)


def parser_target(name: str) -> str:
    """The import path registered for ``name`` (what page workers load)."""
    if name not in _REGISTRY:
        raise ConfigError(f"unknown parser {name!r}; set ingest.parser to one of {', '.join(available_parsers())}")
    return _REGISTRY[name]


def load_parser(target: str) -> Parser:
    """A new parser from an import path ``"package.module:Factory"``."""
    module, _, attr = target.partition(":")
    try:
        factory: Callable[[], Parser] = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"parser backend {target} cannot be loaded ({exc})") from exc
    return factory()


def get_parser(name: str) -> Parser:
    """A new parser instance for ``name``."""
    return load_parser(parser_target(name))
