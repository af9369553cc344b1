"""Printed page numbers: the number a reader sees on a page, which is often not its
position in the file ("the figure on page 2" of a manual whose page 2 is the file's
6th page, after a cover and a table of contents).

``printed_page_numbers(pages)`` reads the numbers a document prints in its page margins
— page furniture (headers, footers) and short lines in the top or bottom ``MARGIN`` of
the page — and keeps those that form a *numbering run*: consecutive pages (gaps of at
most ``MAX_GAP`` pages) whose numbers share one offset from the file's page numbers. A
running page number moves with the page; a year, an issue number or a "2/2" of a web
printout does not, so noise forms no run. A file can hold several runs — a report bound
from parts that each start at 1, front matter then the body, documents packed into one
PDF — and each is kept. Pages inside a run without a visible number (a chapter opener)
get the number its offset gives them; pages before a run's printed 1 get none.

Contract: a run needs ``MIN_SUPPORT`` pages showing it, and at least ``MIN_SHARE`` of its
pages that show any candidate number must agree with it (the best-supported run wins a
page claimed twice). A page showing two consecutive numbers is a spread of two printed
pages and supports no run (a file of spreads gets no map). The result maps the file's
page number to the printed one for every page in a run; it is empty when there is no run,
or when every printed number equals the file's page number (nothing to translate).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..types import Component, Page

if TYPE_CHECKING:
    from ..store.base import Store

MARGIN = 0.12  # top/bottom share of the page height where a bare number counts
MIN_SUPPORT = 3  # pages of a run that must show its numbering
MIN_SHARE = 0.5  # of a run's pages with a candidate number, how many must agree
MAX_GAP = 4  # a run goes on across at most this many pages without a number
_MAX_WORDS = 8  # a furniture line longer than this is running text, not a page number
_BARE = re.compile(
    r"^\s*(?:page|p\.|pg\.?|slide)?\s*[-–—(\[]?\s*(\d{1,4})\s*[-–—)\]]?"
    r"\s*(?:(?:/|of)\s*\d{1,4})?\s*$",
    re.IGNORECASE,
)
_EDGE = re.compile(r"^\s*(\d{1,4})\s*(?:[|•·–—]|\s{2,})|(?:[|•·–—]|\s{2,})\s*(\d{1,4})\s*$")


def _candidates(page: Page) -> set[int]:
    """Numbers the page shows where page numbers go."""
    found: set[int] = set()
    for comp in page.components:
        text = comp.text.strip()
        if not text or len(text.split()) > _MAX_WORDS:
            continue
        bare = _BARE.match(text)
        if bare and (comp.furniture or in_margin(comp, page)):
            found.add(int(bare.group(1)))
        elif comp.furniture:
            edge = _EDGE.search(text)
            if edge:
                found.add(int(edge.group(1) or edge.group(2)))
    return found


def in_margin(comp: Component, page: Page) -> bool:
    if page.height <= 0:
        return False
    top, bottom = comp.bbox.y0 / page.height, comp.bbox.y1 / page.height
    return bottom <= MARGIN or top >= 1.0 - MARGIN


def printed_page_numbers(pages: Iterable[Page]) -> dict[int, int]:
    """File page number → printed page number for every page in a numbering run (see the
    module docstring); empty when no run is found or every printed number equals the file's."""
    shown = {page.number: _candidates(page) for page in pages}
    for number, found in shown.items():
        if any(n + 1 in found for n in found):
            shown[number] = set()  # two facing pages on one: a spread's numbers support no run
    supporters: dict[int, list[int]] = defaultdict(list)  # offset → the pages showing it
    for number in sorted(shown):
        for printed in shown[number]:
            supporters[number - printed].append(number)
    runs: list[tuple[int, int, int, int]] = []  # (support, offset, first page, last page)
    for offset, numbers in supporters.items():
        start = 0
        for i in range(1, len(numbers) + 1):
            if i == len(numbers) or numbers[i] - numbers[i - 1] > MAX_GAP:
                if i - start >= MIN_SUPPORT:
                    runs.append((i - start, offset, numbers[start], numbers[i - 1]))
                start = i
    out: dict[int, int] = {}
    for support, offset, first, last in sorted(runs, key=lambda run: (-run[0], run[2])):
        span = [n for n in shown if first <= n <= last]
        if support < MIN_SHARE * sum(1 for n in span if shown[n]):
            continue  # most numbers in these margins disagree: not a numbering
        for number in span:
            if number not in out and number - offset >= 1:
                out[number] = number - offset
    return {} if all(number == printed for number, printed in out.items()) else out


PRINTED_NUMBERS_NAMESPACE = "documents.printed_page_numbers"  # one record per document, written at ingest


def stored_printed_numbers(store: Store, doc_ids: Iterable[str]) -> dict[str, dict[int, int]]:
    """``printed_page_numbers`` of each document, as ingestion stored it; a document ingested
    before ingestion stored them is read from its pages (and not written: readers do not write)."""
    wanted = sorted(set(doc_ids))
    stored = store.get_records(PRINTED_NUMBERS_NAMESPACE, wanted)
    out: dict[str, dict[int, int]] = {}
    for doc_id in wanted:
        value = stored.get(doc_id)
        out[doc_id] = (
            {int(k): int(v) for k, v in value.items()}
            if value is not None
            else printed_page_numbers(store.iter_pages(doc_id))
        )
    return out


def store_printed_numbers(store: Store, doc_id: str, pages: Iterable[Page]) -> dict[int, int]:
    """Detect the document's printed numbers and keep them with the document (its record goes
    when the document does)."""
    numbers = printed_page_numbers(pages)
    store.put_record(PRINTED_NUMBERS_NAMESPACE, doc_id, {str(k): v for k, v in numbers.items()}, doc_id=doc_id)
    return numbers
