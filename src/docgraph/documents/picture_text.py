"""Text drawn inside the pictures of a page that has a text layer.

A born-digital page can carry words as pixels: a chart exported as an image, a screenshot,
an infographic, a form pasted into a report. Its text layer holds none of them, so no
retriever finds the page by them and no answer can quote them. Scanned pages are read
whole by OCR (``pages.process_page``); this reads the pictures of the other pages.

Contract: a picture component is read when it is large enough to hold text (at least
``MIN_PAGE_SHARE`` of the page and ``MIN_SIDE_PT`` on each side: logos and icons are
smaller) and raster images cover at least ``MIN_RASTER_SHARE`` of it (a vector chart's
words are in the layer already). Lines the OCR engine reads with less than
``MIN_LINE_CONFIDENCE``, and lines whose words the layer already holds inside the picture
(vector labels drawn over an image), are dropped; what is left is appended to the
component's text in reading order. Components are changed in place; nothing else is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import pymupdf
from PIL import Image

from ..types import BBox, Component, ComponentKind
from .ocr.layout import OcrLine
from .render import crop

MIN_PAGE_SHARE = 0.04  # of the page's area
MIN_SIDE_PT = 36.0  # half an inch
MIN_RASTER_SHARE = 0.5  # of the picture's area
MIN_LINE_CONFIDENCE = 0.6  # below it Tesseract's lines on photos are noise ("TNS N Soe")
KNOWN_WORD_SHARE = 0.6  # a line with this share of its words in the layer already is a duplicate
_WORD = re.compile(r"[^\W_]{2,}")


class LineReading(Protocol):
    """What reads the text lines of an RGB image (``ocr.reader.OcrEngine.lines``)."""

    def lines(self, rgb: np.ndarray, scale: float) -> list[OcrLine]: ...


def _overlap(a: Sequence[float], b: Sequence[float]) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def raster_share(box: BBox, images: Sequence[Sequence[float]]) -> float:
    """The share of ``box`` that the raster images' display boxes ``images`` cover (at most 1;
    images that overlap each other count once each)."""
    area = box.width * box.height
    if area <= 0:
        return 0.0
    covered = sum(_overlap(box.as_tuple(), image) for image in images)
    return min(1.0, covered / area)


def pictures_to_read(
    components: Sequence[Component], images: Sequence[Sequence[float]], width: float, height: float
) -> list[Component]:
    """The picture components of a page (``width`` x ``height`` points) worth reading."""
    page_area = width * height
    return [
        c
        for c in components
        if c.kind is ComponentKind.IMAGE
        and not c.furniture
        and c.bbox.width >= MIN_SIDE_PT
        and c.bbox.height >= MIN_SIDE_PT
        and c.bbox.width * c.bbox.height >= MIN_PAGE_SHARE * page_area
        and raster_share(c.bbox, images) >= MIN_RASTER_SHARE
    ]


def new_lines(lines: Sequence[OcrLine], layer_words: set[str]) -> list[str]:
    """The lines worth keeping, top to bottom: read surely, and not already in the layer."""
    kept = []
    for line in sorted(lines, key=lambda ln: (round(ln.bbox[1]), ln.bbox[0])):
        words = [w.lower() for w in _WORD.findall(line.text)]
        if line.confidence < MIN_LINE_CONFIDENCE or not words:
            continue
        if sum(w in layer_words for w in words) >= KNOWN_WORD_SHARE * len(words):
            continue
        kept.append(line.text)
    return kept


def read_picture_text(
    page: pymupdf.Page,
    page_image: Image.Image,
    image_dpi: int,
    components: Sequence[Component],
    reader: Callable[[], LineReading],
    dpi: int,
) -> int:
    """Append the text drawn inside ``page``'s pictures to their components (see the module
    doc); ``reader`` gives the OCR engine, called only when a picture is read; ``dpi`` is the
    resolution OCR reads at. Returns how many pictures gained text."""
    images = [info["bbox"] for info in page.get_image_info()]
    chosen = pictures_to_read(components, images, page.rect.width, page.rect.height) if images else []
    gained = 0
    for comp in chosen:
        region = crop(page, page_image, image_dpi, comp.bbox, dpi)
        if region is None:
            continue
        lines = reader().lines(np.asarray(region), dpi / 72.0)
        layer = page.get_text("text", clip=pymupdf.Rect(comp.bbox.as_tuple()))
        text = "\n".join(new_lines(lines, {w.lower() for w in _WORD.findall(layer)}))
        if text:
            comp.text = f"{comp.text}\n{text}".strip() if comp.text else text
            gained += 1
    return gained
