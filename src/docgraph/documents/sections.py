"""Document-wide structure: the title, heading levels and each component's section path.

Heading levels rank the distinct heading sizes of the whole document (largest = level 1,
at most six levels), so they are consistent across pages however the pages were processed.
A component's section path is ``[document title, enclosing headings…]`` in reading order
across pages; a heading's own path holds the headings above it. Pure functions.
"""

from __future__ import annotations

import re
from typing import Mapping

from ..types import ComponentKind, Page

MAX_LEVELS = 6
MAX_HEADING_CHARS = 120
_GENERIC_TITLE = re.compile(
    r"^(untitled.*|title|document\s*\d*|presentation\s*\d*|slide\s*\d*|new document|print|pdf|"
    r"microsoft (word|powerpoint|excel)\b.*|powerpoint[- ]?(pr[äa]sentation|presentation))$", re.IGNORECASE)
_LABEL = re.compile(r"^(chapter|unit|part|section|lesson|module|appendix|book|volume)\s+([0-9]+|[ivxlc]+)\.?$",
                    re.IGNORECASE)
_FILE_NAME = re.compile(r"\.(pdf|docx?|pptx?|odt|odp|rtf|tex|dvi|indd|qxd|xlsx?)$", re.IGNORECASE)


def _clean(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_HEADING_CHARS else text[:MAX_HEADING_CHARS - 1].rstrip() + "…"


def meaningful_title(title: str | None, stem: str) -> bool:
    """Whether a PDF metadata title names the document (not "Untitled", "Microsoft Word - x.docx", …)."""
    if not title:
        return False
    title = " ".join(title.split())
    return (sum(ch.isalpha() for ch in title) >= 3 and not _GENERIC_TITLE.match(title)
            and not _FILE_NAME.search(title) and title.lower() != stem.lower())


def choose_title(metadata_title: str | None, pages: list[Page], heading_sizes: Mapping[tuple[int, str], float],
                 stem: str) -> str:
    """Metadata title if meaningful, else the largest heading of the first page with one, else ``stem``.

    A heading that is only a label ("Chapter 2", "Unit 4", "Part II") is joined with the
    next heading on its page that is not a label ("Chapter 2: Methods and Data").
    (Page headers are never used: the layout model types running heads as headers.)"""
    if metadata_title and meaningful_title(metadata_title, stem):
        return _clean(metadata_title)
    for page in sorted(pages, key=lambda p: p.number):
        ordered = sorted(page.components, key=lambda c: c.order)
        headings = [c for c in ordered if c.kind is ComponentKind.TITLE and not c.furniture and c.text.strip()]
        if headings:
            best = max(headings, key=lambda c: heading_sizes.get((page.number, c.id), 0.0))
            if _LABEL.match(" ".join(best.text.split())):
                return _clean(_named_label(best.text, headings))
            return _clean(best.text)
    return stem


def _named_label(label: str, headings: list) -> str:
    """The title for a page whose largest heading is only a label (see ``choose_title``)."""
    start = next(h.order for h in headings if h.text == label)
    later = [c for c in headings if c.order > start and not _LABEL.match(" ".join(c.text.split()))]
    return f"{label}: {later[0].text}" if later else label


def heading_levels(sizes: list[float]) -> dict[int, int]:
    """Rounded heading size → level 1..6 (the six largest distinct sizes; smaller ones are 6)."""
    distinct = sorted({round(s) for s in sizes}, reverse=True)
    return {size: min(i + 1, MAX_LEVELS) for i, size in enumerate(distinct)}


def assign_sections(pages: list[Page], heading_sizes: Mapping[tuple[int, str], float], title: str) -> None:
    """Set ``heading_level`` of headings and ``section_path`` of every component, in place."""
    levels = heading_levels(list(heading_sizes.values()))
    stack: list[tuple[int, str]] = []
    for page in sorted(pages, key=lambda p: p.number):
        for comp in sorted(page.components, key=lambda c: c.order):
            if comp.furniture:
                comp.section_path = [title]
                continue
            if comp.kind is ComponentKind.TITLE:
                size = heading_sizes.get((page.number, comp.id))
                level = levels.get(round(size), MAX_LEVELS) if size is not None else MAX_LEVELS
                comp.heading_level = level
                while stack and stack[-1][0] >= level:
                    stack.pop()
                comp.section_path = [title] + [text for _, text in stack]
                text = _clean(comp.text)
                if text and not (not stack and text.lower() == title.lower()):
                    stack.append((level, text))
            else:
                comp.section_path = [title] + [text for _, text in stack]
