"""Document-wide structure: the title, heading levels and each component's section path.

Heading levels rank the distinct heading sizes of the whole document (largest = level 1,
at most six levels), so they are consistent across pages however the pages were processed.
A component's section path is ``[document title, enclosing headings…]`` in reading order
across pages; a heading's own path holds the headings above it. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..types import ComponentKind, Page

MAX_LEVELS = 6
MAX_HEADING_CHARS = 120
_GENERIC_TITLE = re.compile(
    r"^(untitled.*|title|document\s*\d*|presentation\s*\d*|slide\s*\d*|new document|print|pdf|"
    r"microsoft (word|powerpoint|excel)\b.*|powerpoint[- ]?(pr[äa]sentation|presentation))$",
    re.IGNORECASE,
)
_LABEL = re.compile(
    r"^(chapter|unit|part|section|lesson|module|appendix|book|volume)\s+([0-9]+|[ivxlc]+)\.?$", re.IGNORECASE
)
_FILE_NAME = re.compile(r"\.(pdf|docx?|pptx?|odt|odp|rtf|tex|dvi|indd|qxd|xlsx?)$", re.IGNORECASE)


def _clean(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_HEADING_CHARS else text[: MAX_HEADING_CHARS - 1].rstrip() + "…"


def meaningful_title(title: str | None, stem: str) -> bool:
    """Whether a PDF metadata title names the document (not "Untitled", "Microsoft Word - x.docx", …)."""
    if not title:
        return False
    title = " ".join(title.split())
    return (
        sum(ch.isalpha() for ch in title) >= 3
        and not _GENERIC_TITLE.match(title)
        and not _FILE_NAME.search(title)
        and title.lower() != stem.lower()
    )


def choose_title(
    metadata_title: str | None, pages: list[Page], heading_sizes: Mapping[tuple[int, str], float], stem: str
) -> str:
    """Metadata title if meaningful, else the largest heading of the first page with one, else ``stem``.

    A heading that is only a label ("Chapter 2", "Unit 4", "Part II") is joined with the
    next heading on its page that is not a label ("Chapter 2: Methods and Data"). When that
    page lists several labels of one kind ("Chapter 14", "Chapter 15", … on a unit opener
    or a contents page), the label names a part, not the document: a page header of that
    page that is no running head (its text, digits aside, heads no other page) is then the
    title, as a unit or book title typed as a page header. (Otherwise page headers are never
    used: the layout model types running heads as headers.)"""
    if metadata_title and meaningful_title(metadata_title, stem):
        return _clean(metadata_title)
    ordered_pages = sorted(pages, key=lambda p: p.number)
    for page in ordered_pages:
        ordered = sorted(page.components, key=lambda c: c.order)
        headings = [c for c in ordered if c.kind is ComponentKind.TITLE and not c.furniture and c.text.strip()]
        if headings:
            best = max(headings, key=lambda c: heading_sizes.get((page.number, c.id), 0.0))
            label = _LABEL.match(" ".join(best.text.split()))
            if not label:
                return _clean(best.text)
            kind = label.group(1).lower()
            siblings = [
                h for h in headings if (m := _LABEL.match(" ".join(h.text.split()))) and m.group(1).lower() == kind
            ]
            header = _own_header(page, ordered_pages) if len(siblings) > 1 else None
            return _clean(header.text if header is not None else _named_label(best.text, headings))
    return stem


def _running_head_key(text: str) -> str:
    return re.sub(r"[\d\W_]+", " ", text).strip().lower()


def _own_header(page: Page, pages: list[Page]):
    """The first page header of ``page`` that is no running head: its text (digits and
    punctuation aside) heads no other page, and it has at least two words."""
    others = {
        _running_head_key(c.text)
        for p in pages
        if p.number != page.number
        for c in p.components
        if c.kind is ComponentKind.HEADER
    }
    for comp in sorted(page.components, key=lambda c: c.order):
        key = _running_head_key(comp.text)
        if comp.kind is ComponentKind.HEADER and len(key.split()) >= 2 and key not in others:
            return comp
    return None


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
