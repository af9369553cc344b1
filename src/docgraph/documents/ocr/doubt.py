"""When the ``"auto"`` OCR engine distrusts Tesseract's reading of a page and reads it again
with rapidocr's PP-OCR.

Tesseract reads dense text as well as PP-OCR at a quarter of the CPU, but stylised slide
text — light titles on coloured bands, text over photos, logos — comes back as confident
silence or as low-confidence garbage ("si X=) oS ro) mu" for "Steps for Measurement on Any
Social Channel"). Tesseract says so itself. On the 64 scanned pages of the calibration
(docs/eval.md, "scanned slides read again"), plain print (textbook, report and audit pages)
read at a mean line confidence of 0.88–0.96 with at most 2 % of its words on lines below
0.6. The slide pages whose words PP-OCR recovered and Tesseract did not sat at 0.00–0.84,
or had a clean title over a garbled screenshot (0.89, 8 % of the words on lines below 0.6).
A page is doubtful when

- the word-weighted mean confidence of its lines is below ``min_confidence``, or
- more than ``MAX_GARBLED_SHARE`` of its words are on lines below ``GARBLED_LINE``, or
- no line was read although the layout network found a text or title region on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...types import ComponentKind
from .layout import OcrLine, Region

TEXT_KINDS = (ComponentKind.PARAGRAPH, ComponentKind.TITLE)
GARBLED_LINE = 0.6  # a line read with less confidence is most likely garbage
MAX_GARBLED_SHARE = 0.05  # of a page's words; clean print stays at 0-2 %


def mean_confidence(lines: Iterable[OcrLine]) -> float | None:
    """The lines' confidence weighted by their words; None without words."""
    weighted, words = 0.0, 0
    for line in lines:
        n = len(line.text.split())
        weighted += n * line.confidence
        words += n
    return weighted / words if words else None


def garbled_share(lines: list[OcrLine]) -> float:
    """The share of the words that lie on lines read with confidence below ``GARBLED_LINE``."""
    words = sum(len(line.text.split()) for line in lines)
    low = sum(len(line.text.split()) for line in lines if line.confidence < GARBLED_LINE)
    return low / words if words else 0.0


def doubtful(lines: list[OcrLine], regions: list[Region], min_confidence: float) -> bool:
    """Whether a reading of a page should be replaced (module docstring)."""
    confidence = mean_confidence(lines)
    if confidence is None:
        return any(region.kind in TEXT_KINDS for region in regions)
    return confidence < min_confidence or garbled_share(lines) > MAX_GARBLED_SHARE
