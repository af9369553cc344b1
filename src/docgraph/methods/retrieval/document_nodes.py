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
when every node scores alike. When the name router speaks, names say which document is meant
and shared words only suggest it, so the words then choose only between the parts of each
document (``within_documents``: every document's best part weighs 1) — a named filing's
exhibits against its body, as in a workspace of that filing alone.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...models.bm25 import BM25
from ...types import PageKey


@dataclass(frozen=True)
class DocumentNodes:
    """One BM25 node per document part; ``nodes[i]`` is node i's (document, first page),
    ``codes[p]`` the node of page p of the layer and ``node_doc[i]`` node i's document as an
    index (its documents in order of first appearance)."""

    nodes: list[PageKey]
    codes: np.ndarray
    index: BM25
    node_doc: np.ndarray

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
        opening: dict[str, int] = {}  # each document's first page in the layer
        codes = np.zeros(len(pages), dtype=np.int64)
        tokens: list[list[str]] = []
        for p, (doc, number) in enumerate(pages):
            starts = parts.get(doc) if parts else None
            if starts and number >= starts[0]:
                first = starts[bisect_right(starts, number) - 1]
            else:
                first = opening.setdefault(doc, number)
            node = position.setdefault((doc, first), len(position))
            if node == len(tokens):
                tokens.append([])
            tokens[node].extend(page_tokens[p])
            codes[p] = node
        nodes = list(position)
        documents: dict[str, int] = {}
        node_doc = np.array([documents.setdefault(doc, len(documents)) for doc, _ in nodes], dtype=np.int64)
        return cls(nodes, codes, BM25(tokens), node_doc)

    def match(self, terms: Sequence[str], within_documents: bool = False) -> np.ndarray | None:
        """Per node how well its whole text holds ``terms``, the best node 1 — or, with
        ``within_documents``, the best part of each document 1 (a document whose parts hold
        none of the terms, or of one part, all 1); None when routing by content abstains."""
        if len(self.nodes) < 2 or not terms:
            return None
        scores = self.index.scores(list(terms))
        if within_documents:
            best = np.zeros(int(self.node_doc.max()) + 1)
            np.maximum.at(best, self.node_doc, scores)
            own = best[self.node_doc]  # each node's document's best part
            scores = np.divide(scores, own, out=np.ones(len(scores)), where=own > 0)
            return None if scores.min() == 1.0 else scores
        top = float(scores.max())
        if top <= 0.0 or float(scores.min()) == top:
            return None
        return scores / top

    def page_weights(self, terms: Sequence[str], floor: float, within_documents: bool = False) -> np.ndarray | None:
        """Per page: its node's weight ``floor + (1 - floor) · match`` (``match``; None:
        abstain, or ``floor`` 1, routing off)."""
        match = self.match(terms, within_documents) if floor < 1.0 else None
        if match is None:
            return None
        return (floor + (1.0 - floor) * match)[self.codes]
