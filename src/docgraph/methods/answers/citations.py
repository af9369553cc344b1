"""Turning grounded evidence into numbered citations a person can open.

``CitationBook`` hands out citation numbers: the same page regions get the same number,
every citation carries the boxes of its components (so the page viewer can outline
them), and unknown component ids are dropped rather than cited.
"""

from __future__ import annotations

from ...documents.metadata import shown_title
from ...documents.metadata_store import read_metadata
from ...store.base import Store
from ...types import Citation, Mention, Page


class CitationBook:
    """Collects citations for one answer; ``cite`` returns the citation number."""

    def __init__(self, store: Store):
        self._store = store
        self._pages: dict[tuple[str, int], Page | None] = {}
        self._titles: dict[str, str] = {}
        self._by_key: dict[tuple[str, int, tuple[str, ...]], Citation] = {}
        self.citations: list[Citation] = []

    def page(self, doc_id: str, number: int) -> Page | None:
        key = (doc_id, number)
        if key not in self._pages:
            self._pages[key] = self._store.get_page(doc_id, number)
        return self._pages[key]

    def _title(self, doc_id: str) -> str:
        """The document's title as its shelf label gives it (``documents.metadata.shown_title``),
        else its id (a document no longer stored)."""
        if doc_id not in self._titles:
            doc = self._store.get_document(doc_id)
            label = read_metadata(self._store, [doc_id]).get(doc_id)
            self._titles[doc_id] = shown_title(doc, label) if doc is not None else doc_id
        return self._titles[doc_id]

    def cite(self, doc_id: str, page_number: int, component_ids: list[str], quote: str = "") -> int | None:
        """Number of the citation for these regions (new or existing); None if nothing resolves."""
        page = self.page(doc_id, page_number)
        if page is None:
            return None
        comps = [c for cid in dict.fromkeys(component_ids) if (c := page.component(cid)) is not None]
        if not comps:
            # Cite the whole page when no component resolves; still clickable, still honest.
            comps_ids: tuple[str, ...] = ()
        else:
            comps_ids = tuple(c.id for c in comps)
        key = (doc_id, page_number, comps_ids)
        if key in self._by_key:
            return self._by_key[key].number
        citation = Citation(
            number=len(self.citations) + 1,
            doc_id=doc_id,
            page=page_number,
            component_ids=list(comps_ids),
            bboxes=[c.bbox for c in comps],
            quote=quote[:500],
            document_title=self._title(doc_id),
        )
        self._by_key[key] = citation
        self.citations.append(citation)
        return citation.number

    def cite_mention(self, mention: Mention, quote: str = "") -> int | None:
        return self.cite(mention.doc_id, mention.page, mention.component_ids, quote)


def marker(numbers: list[int | None]) -> str:
    """``[1][3]`` for the given citation numbers (None dropped, duplicates removed)."""
    return "".join(f"[{n}]" for n in dict.fromkeys(n for n in numbers if n is not None))
