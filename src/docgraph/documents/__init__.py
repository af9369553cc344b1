"""Reading files into Documents: PDF parsing, page rendering, layout components, OCR for
scanned pages, Office and image inputs, Set-of-Marks drawing, masking and crops.

Entry points: ``ingest`` (files → stored documents), ``draw_marks`` / ``marks_image`` /
``crop_components`` (Set-of-Marks and crops), ``register_parser`` (another layout backend).
"""

from .ingest import IngestReport, ingest
from .marks import crop_components, draw_marks, marks_image
from .parser import Parser, available_parsers, get_parser, register_parser
from .render import remove_document_files

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
