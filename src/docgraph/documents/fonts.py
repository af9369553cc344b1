"""Pages whose fonts are broken or missing: found while the page is processed, reported per file.

Two things go wrong with a PDF's fonts, and neither stops MuPDF from rendering the page:

- an embedded font program is damaged (MuPDF says so while loading it and draws the glyphs
  with a substitute font): the page image looks slightly different, the text layer (from
  the font's ToUnicode map) is fine — ``damaged_fonts`` finds the font names in MuPDF's
  warnings;
- a font's dictionary is missing or empty (the object was deleted, or never written): the
  character codes cannot be mapped to text, so the text layer is mostly U+FFFD, control and
  private-use characters, and the page image shows the wrong glyphs too, so OCR cannot
  recover it either — ``unreadable_share`` measures that share.

The page is ingested either way (what the PDF shows is what docgraph stores); ``ingest``
reports one note per document and problem naming the file and its pages, so the user knows
search and answers over those pages will be poor and can re-export the PDF.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import pymupdf

UNREADABLE_MIN_SHARE = 0.2  # a page whose text is at least this share unreadable is reported
UNREADABLE_MIN_CHARS = 20  # ... and has at least this many unreadable characters
_DAMAGED = re.compile(r"FT_New_Memory_Face\(([^)]*)\)")
_BAD_CATEGORIES = ("Cc", "Co", "Cs")  # control, private use, surrogates


@dataclass(frozen=True)
class FontProblem:
    """One problem of one page: ``kind`` ("damaged-font" or "unreadable-text") and details."""

    kind: str
    detail: str
    share: float = 0.0


def reset_warnings() -> None:
    """Forget MuPDF's warnings so far (this process), before a page is processed."""
    pymupdf.TOOLS.mupdf_warnings(reset=True)


def damaged_fonts(warnings: str) -> list[str]:
    """Names of embedded fonts MuPDF could not load, from its warnings text."""
    names = [name.split("+", 1)[-1] for name in _DAMAGED.findall(warnings)]
    if not names and "error when loading embedded font" in warnings:
        names = ["(unnamed)"]
    return list(dict.fromkeys(names))


def unreadable_share(text: str) -> tuple[int, float]:
    """(unreadable characters, their share of the non-space characters) of ``text``."""
    bad = total = 0
    for char in text:
        if char.isspace():
            continue
        total += 1
        bad += char == "\ufffd" or unicodedata.category(char) in _BAD_CATEGORIES
    return bad, (bad / total if total else 0.0)


def page_font_problems(text: str) -> list[FontProblem]:
    """The font problems of the page just processed: MuPDF's warnings since
    ``reset_warnings`` and the page's extracted ``text``."""
    problems = []
    names = damaged_fonts(pymupdf.TOOLS.mupdf_warnings(reset=True))
    if names:
        problems.append(FontProblem("damaged-font", ", ".join(names)))
    bad, share = unreadable_share(text)
    if bad >= UNREADABLE_MIN_CHARS and share >= UNREADABLE_MIN_SHARE:
        problems.append(FontProblem("unreadable-text", f"{share:.0%}", share))
    return problems


def page_ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"pages 1-3, 7"`` (``"page 4"`` for one)."""
    numbers = sorted(set(numbers))
    parts, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ("page " if len(numbers) == 1 else "pages ") + ", ".join(parts)


def font_notes(name: str, problems: dict[int, list[FontProblem]]) -> list[str]:
    """One line per kind of problem of the document ``name``: which pages, what it means."""
    lines = []
    damaged = {n: p for n, ps in problems.items() for p in ps if p.kind == "damaged-font"}
    if damaged:
        fonts = ", ".join(dict.fromkeys(f for p in damaged.values() for f in p.detail.split(", ")))
        lines.append(
            f"{name} ({page_ranges(list(damaged))}): embedded font(s) {fonts} are damaged; the page "
            "images use a substitute font (the text is read as usual) - re-export the PDF if they "
            "look wrong"
        )
    unreadable = {n: p for n, ps in problems.items() for p in ps if p.kind == "unreadable-text"}
    if unreadable:
        worst = max(p.share for p in unreadable.values())
        lines.append(
            f"{name} ({page_ranges(list(unreadable))}): the text cannot be read (up to {worst:.0%} of "
            "the characters map to no letter: the PDF's fonts are missing or broken), so search and "
            "answers over these pages will be poor - re-export the PDF with its fonts embedded"
        )
    return lines
