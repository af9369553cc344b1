"""Documents as nodes of the structural layer: routing a library by what its documents say.

Most questions over a shelf name no document ("According to this report, which group is
larger…"), so the name router (``routing.DocumentRouter``) abstains on them, and the pages
of a long document compete one by one with every other document's pages. A person picks the
document first — the one that is *about* the question — and reads its pages then.
``DocumentNodes`` gives each document of the layer one node whose text is the whole document
(its pages' BM25 tokens) — one node per *part* where a file holds several pieces
(``documents.parts``: a binder, a report bound from parts, documents packed into one PDF) —
and scores the question's own words against those nodes with BM25: the document that holds
the question's terms together, over its pages, scores high, while a page that happens to
share a word or two with the question gets no help from its document.

``page_weights`` turns the scores into a weight per page, its node's
``floor + (1 - floor) · score / best score``. The evidence layer multiplies pages' scores by
it after the page signals are fused (``EvidenceLayer.flat``), so it decides between
documents (parts) and never within one: a node's pages keep their order, and each node keeps
``floor`` of its scores at the least, so a question still reaches every page. It abstains
(None) with fewer than two nodes, when no word of the question occurs in any of them, and
when every node scores alike; the layer also leaves it out when the name router speaks
(names say which document is meant, shared words only suggest it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...models.bm25 import BM25

PageKey = tuple[str, int]


@dataclass(frozen=True)
class DocumentNodes:
    """One BM25 node per document part; ``nodes[i]`` is node i's (document, first page) and
    ``codes[p]`` the node of page p of the layer."""

    nodes: list[PageKey]
    codes: np.ndarray
    index: BM25

    @classmethod
    def build(
        cls,
        pages: Sequence[PageKey],
        page_tokens: Sequence[Sequence[str]],
        parts: Mapping[str, Sequence[int]] | None = None,
    ) -> DocumentNodes:
        """Nodes of ``pages`` (the layer's, sorted by document then number) from each page's
        tokens (``page_tokens[p]``, as ``docgraph.text.tokenize`` makes them); ``parts`` gives a
        document's part starts (``documents.parts``; a document absent from it is one part)."""
        position: dict[PageKey, int] = {}
        codes = np.zeros(len(pages), dtype=np.int64)
        tokens: list[list[str]] = []
        for p, (doc, number) in enumerate(pages):
            starts = parts.get(doc) if parts else None
            first = starts[bisect_right(starts, number) - 1] if starts and number >= starts[0] else None
            node = position.setdefault((doc, first if first is not None else 0), len(position))
            if node == len(tokens):
                tokens.append([])
            tokens[node].extend(page_tokens[p])
            codes[p] = node
        return cls(list(position), codes, BM25(tokens))

    def match(self, terms: Sequence[str]) -> np.ndarray | None:
        """Per node how well its whole text holds ``terms``, the best node 1; None when
        routing by content abstains."""
        if len(self.nodes) < 2 or not terms:
            return None
        scores = self.index.scores(list(terms))
        best = float(scores.max())
        if best <= 0.0 or float(scores.min()) == best:
            return None
        return scores / best

    def page_weights(self, terms: Sequence[str], floor: float) -> np.ndarray | None:
        """Per page: its node's weight ``floor + (1 - floor) · match`` (None: abstain, or
        ``floor`` 1, routing off)."""
        match = self.match(terms) if floor < 1.0 else None
        if match is None:
            return None
        return (floor + (1.0 - floor) * match)[self.codes]
