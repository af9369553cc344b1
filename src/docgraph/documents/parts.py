"""Parts of a document: runs of pages that were made as one piece.

A file is not always one document. A binder scanned into one PDF, a report bound from
separately paginated parts, a corpus of reports concatenated into one file (KG4VD's packed
setting) each hold pieces that were written, laid out and numbered apart, and a question is
usually about one of them. ``part_starts(pages, printed)`` finds where a new piece begins,
without a model, from what a piece's pages share:

- **the sheet**: every page of a piece is printed on one paper size and orientation, so a
  page whose size or orientation differs from the page before starts a part (a landscape
  deck after a portrait report, Letter after A4);
- **the numbering**: a piece numbers its own pages from its start (``documents.page_numbers``),
  so a page whose printed number goes back — no greater than the last printed number
  before it — starts a part. Numbers that jump ahead are the same piece with pages left
  unnumbered (a full-page chart, a chapter opener, the financial statements' F-pages).

Pages without a printed number continue the part they are in. A part may be finer than a
piece (a fold-out landscape page, front matter numbered apart): what reads parts
(``methods.retrieval.document_nodes``) treats them as pieces to choose between, and a
finer cut costs it little. The result is the sorted first pages of the parts, ``[1]`` (or
the first page) for a document of one piece.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..types import Page
from .page_numbers import stored_printed_numbers

if TYPE_CHECKING:
    from ..store.base import Store

PARTS_NAMESPACE = "documents.parts"  # one record per document, written at ingest


def _sheet(page: Page) -> tuple[int, int]:
    """A page's paper size in whole points (orientation included)."""
    return round(page.width), round(page.height)


def part_starts(pages: Iterable[Page], printed: Mapping[int, int]) -> list[int]:
    """The first page of each part of a document (see the module docstring); ``printed``
    maps file page numbers to printed ones (``documents.page_numbers``)."""
    starts: list[int] = []
    previous: Page | None = None
    last: int | None = None  # the printed number of the last numbered page
    for page in sorted(pages, key=lambda p: p.number):
        shown = printed.get(page.number)
        if previous is None:
            starts.append(page.number)
        elif _sheet(page) != _sheet(previous) or (shown is not None and last is not None and shown <= last):
            starts.append(page.number)
        if shown is not None:
            last = shown
        previous = page
    return starts


def part_ranges(starts: list[int], page_count: int) -> list[tuple[int, int]]:
    """``part_starts`` as (first page, last page) of each part of a document of ``page_count``
    pages."""
    ends = [start - 1 for start in starts[1:]] + [page_count]
    return list(zip(starts, ends))


def store_parts(store: Store, doc_id: str, pages: Iterable[Page], printed: Mapping[int, int]) -> list[int]:
    """Find the document's parts and keep them with the document (its record goes when the
    document does)."""
    starts = part_starts(pages, printed)
    store.put_record(PARTS_NAMESPACE, doc_id, starts, doc_id=doc_id)
    return starts


def stored_parts(
    store: Store, doc_ids: Iterable[str], printed: Mapping[str, Mapping[int, int]] | None = None
) -> dict[str, list[int]]:
    """``part_starts`` of each document, as ingestion stored them; a document ingested before
    ingestion stored them is read from its pages (and not written: readers do not write),
    with ``printed`` (document → its printed numbers) when the caller has them already."""
    wanted = sorted(set(doc_ids))
    stored = store.get_records(PARTS_NAMESPACE, wanted)
    out: dict[str, list[int]] = {}
    for doc_id in wanted:
        value = stored.get(doc_id)
        if value is not None:
            out[doc_id] = [int(v) for v in value]
            continue
        numbers = printed.get(doc_id) if printed is not None else None
        if numbers is None:
            numbers = stored_printed_numbers(store, [doc_id])[doc_id]
        out[doc_id] = part_starts(store.iter_pages(doc_id), numbers)
    return out
