"""Running lines: what a document prints at the top or bottom of page after page.

A report prints its own name in its running header ("The Limes Residential Home —
Inspection report", "Object Storage Service Product Introduction"), a publisher its name
in a footer ("Copyright © Huawei Technologies Co., Ltd."), a filing its registrant over
its statements ("THE COCA-COLA COMPANY AND SUBSIDIARIES") — often where the cover prints
them only as a picture, or not at all. ``running_lines(pages)`` reads the short lines in
the top or bottom ``MARGIN`` of each page (and page furniture), counts on how many pages
each recurs — numbers aside, so "3 The Limes … 12/05/2015" on page 3 and "4 The Limes …"
on page 4 are one line — and returns those on at least ``MIN_SHARE`` of the pages read and
at least ``MIN_PAGES`` of them, most frequent first, as their words without the page
number, date or "Page 3 of 17" around them, with the share of pages that print them. A
line that only numbers or navigates ("Page 3", "Table of Contents", "Exhibit 31.1", a web
address) is none. Pure; the label guesser (``metadata``) reads the pages ``sample_numbers``
picks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..types import Page
from .page_numbers import in_margin

MIN_SHARE = 0.25  # of the pages read, the share a line must recur on
MIN_PAGES = 3  # and at least this many pages
MAX_WORDS = 14  # a longer margin line is running text, not a header
SAMPLE = 40  # pages read, spread evenly over a long document

_NUMBERS = re.compile(r"\d+")
_NUMBER = r"(?:page\s+)?(?:\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{1,3}(?:\s+of\s+\d{1,3})?)"  # a date, "Page 3 of 17", "3"
_EDGE_NOISE = re.compile(  # a page number or date, and separators, at either end: not a year ("Report 2021")
    rf"^\s*{_NUMBER}(?:\s*[|•·–—:-]+\s*|\s+)|(?:\s*[|•·–—:-]+\s*|\s+){_NUMBER}\s*$",
    re.IGNORECASE,
)
_NAVIGATION = re.compile(
    r"^(?:table\s+of\s+contents|contents|index|exhibit\b.*|chapter\b.*|section\b.*|appendix\b.*|page\b.*|"
    r"confidential\b.*|draft\b.*|continued\b.*|\(?continued\)?|back\s+to\s+.*|notes?\s+to\s+.*)$|"
    r"https?://|www\.|\.(?:com|org|net|gov|edu)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class RunningLine:
    text: str  # the line's words, without page numbers and dates around them
    share: float  # of the pages read, the share that print it


def sample_numbers(numbers: Iterable[int], size: int = SAMPLE) -> list[int]:
    """At most ``size`` of a document's page numbers, spread evenly from first to last."""
    ordered = sorted(numbers)
    if len(ordered) <= size:
        return ordered
    step = (len(ordered) - 1) / (size - 1)
    return sorted({ordered[round(i * step)] for i in range(size)})


def clean_line(text: str) -> str:
    """A margin line's words without the page number, date or separators around them."""
    line = " ".join(text.split())
    line = _EDGE_NOISE.sub("", line).strip(" |•·–—-:")
    return line


def running_lines(pages: Iterable[Page]) -> list[RunningLine]:
    """The lines the pages repeat in their margins (see the module docstring), most
    frequent first; empty for fewer than ``MIN_PAGES`` pages."""
    pages = list(pages)
    seen: Counter[str] = Counter()  # a line's key (numbers aside, case aside) → pages showing it
    shown: dict[str, Counter[str]] = {}  # key → its cleaned forms
    for page in pages:
        keys: set[str] = set()
        for comp in page.components:
            text = " ".join(comp.text.split())
            if not text or len(text.split()) > MAX_WORDS or not (comp.furniture or in_margin(comp, page)):
                continue
            cleaned = clean_line(text)
            if len(_WORD.findall(cleaned)) < 2 or _NAVIGATION.search(cleaned):
                continue
            key = _NUMBERS.sub("#", cleaned.lower())
            if key not in keys:
                keys.add(key)
                shown.setdefault(key, Counter())[cleaned] += 1
        seen.update(keys)
    needed = max(MIN_PAGES, MIN_SHARE * len(pages))
    return [
        RunningLine(shown[key].most_common(1)[0][0], count / len(pages))
        for key, count in seen.most_common()
        if count >= needed
    ]
