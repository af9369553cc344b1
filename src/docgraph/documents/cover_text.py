"""The cover's display line: the words a document's first page prints in its largest type.

A person picks a report from a shelf by what its cover prints largest. The layout model
does not always make that a heading: a paper's title is merged with its authors into one
paragraph, a prospectus's name is plain text over a photograph. The PDF's own type sizes
tell them apart. ``display_line`` reads the first page's horizontal lines (a rotated arXiv
stamp in the margin is no title) with their type size, and returns the lines set in the
largest size (within ``SAME_SIZE``), top to bottom — when that size stands out from the
rest of the page (at least ``PROMINENCE`` times the median of the other lines' sizes; a
page of nothing else only when set in display type, ``DISPLAY_SIZE``) and the lines are
short enough to be a name; otherwise None (a cover set in text type has none). A byline
("By …") is never one. The label guesser (``metadata.better_title``) takes it when the
document's own headings name no document.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

SAME_SIZE = 0.9  # lines at least this share of the largest size are set in it
PROMINENCE = 1.3  # a display size is at least this many times the median line's
DISPLAY_SIZE = 16.0  # points: on a page of one size, type at least this large is display type
MAX_CHARS = 120
_BYLINE = re.compile(r"^by\s", re.IGNORECASE)  # "BY Jacob Poushter and …": who wrote it, not what it is


def display_line(pdf_path: Path | str) -> str | None:
    """The first page's display line (see the module docstring), or None; None too when the
    file cannot be read."""
    import pymupdf

    try:
        with pymupdf.open(pdf_path) as doc:
            if doc.page_count == 0:
                return None
            blocks = doc[0].get_text("dict").get("blocks", [])
    except (RuntimeError, ValueError, OSError):
        return None
    lines: list[tuple[float, float, str]] = []  # (type size, top, text)
    for block in blocks:
        for line in block.get("lines", []):
            direction = line.get("dir", (1.0, 0.0))
            spans = [s for s in line.get("spans", []) if s.get("text", "").strip()]
            text = _joined(spans)
            if abs(direction[1]) > 0.1 or sum(ch.isalpha() for ch in text) < 3 or _BYLINE.match(text):
                continue
            lines.append((max(s["size"] for s in spans), line["bbox"][1], text))
    if not lines:
        return None
    largest = max(size for size, _, _ in lines)
    rest = [size for size, _, _ in lines if size < SAME_SIZE * largest]
    if largest < PROMINENCE * statistics.median(rest) if rest else largest < DISPLAY_SIZE:
        return None
    shown = [text for size, _, text in sorted(lines, key=lambda line: line[1]) if size >= SAME_SIZE * largest]
    words = re.sub(r"- ", "-", " ".join(shown)) if shown else ""  # "AB-" over "STRACTION": one word
    words = re.sub(r"\b(\w+)( \1\b)+", r"\1", words)  # text printed twice over itself ("The The Limes")
    return words if len(words) <= MAX_CHARS else None


def _joined(spans: list[dict]) -> str:
    """A line's spans as text: a space where the PDF leaves a gap between two spans and writes
    none (titles set letter by letter, or in small capitals, come as many spans)."""
    out = spans[0]["text"] if spans else ""
    for before, span in zip(spans, spans[1:]):
        if not out.endswith(" ") and not span["text"].startswith(" "):
            out += " " if span["bbox"][0] - before["bbox"][2] > 0.15 * span["size"] else ""
        out += span["text"]
    return " ".join(out.split())
