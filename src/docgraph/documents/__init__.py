"""Reading files into Documents: PDF parsing, page rendering, layout components, OCR for
scanned pages, Office and image inputs, Set-of-Marks drawing, masking and crops.

Entry points: ``ingest`` (files → stored documents), ``draw_marks`` / ``marks_image`` /
``crop_components`` (Set-of-Marks and crops), ``register_parser`` (another layout backend).
They are imported on first use: a question over a workspace reads labels, printed page
numbers and parts from this package and needs no PDF library loaded.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ingestion import IngestReport, ingest
    from .marks import crop_components, draw_marks, marks_image
    from .parser import Parser, available_parsers, get_parser, register_parser
    from .render import remove_document_files

_HOMES = {
    "IngestReport": ".ingestion",
    "ingest": ".ingestion",
    "crop_components": ".marks",
    "draw_marks": ".marks",
    "marks_image": ".marks",
    "Parser": ".parser",
    "available_parsers": ".parser",
    "get_parser": ".parser",
    "register_parser": ".parser",
    "remove_document_files": ".render",
}

__all__ = [
    "IngestReport",
    "ingest",
    "crop_components",
    "draw_marks",
    "marks_image",
    "Parser",
    "available_parsers",
    "get_parser",
    "register_parser",
    "remove_document_files",
]


def __getattr__(name: str) -> Any:
    """An entry point, imported from its module the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value
    return value
