"""Okapi BM25 over a small in-memory corpus (pure; baselines and the fusion reranker use it).

Tokens come from ``docgraph.text.tokenize`` (lowercase, NFKC, stopwords dropped), so
every BM25 in the project tokenises the same way. IDF is the non-negative BM25+ form
``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

from ..text import tokenize

__all__ = ["BM25", "tokenize", "bm25_scores"]


class BM25:
    """An index over ``documents`` (strings, or pre-tokenised lists)."""

    def __init__(self, documents: Sequence[str | Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self.docs = [tokenize(d) if isinstance(d, str) else list(d) for d in documents]
        self.lengths = np.array([len(d) for d in self.docs], dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if len(self.docs) and self.lengths.sum() else 1.0
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, doc in enumerate(self.docs):
            for term, f in Counter(doc).items():
                ids, tfs = postings.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(f)
        n = len(self.docs)
        # term -> (document indices, term frequencies, idf): an inverted index
        self.postings = {t: (np.array(ids), np.array(tfs, dtype=np.float64),
                             math.log(1.0 + (n - len(ids) + 0.5) / (len(ids) + 0.5)))
                         for t, (ids, tfs) in postings.items()}

    def __len__(self) -> int:
        return len(self.docs)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for ``query`` (0 where no term matches)."""
        terms = tokenize(query) if isinstance(query, str) else list(query)
        out = np.zeros(len(self.docs), dtype=np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * self.lengths / self.avgdl)
        for term in terms:
            posting = self.postings.get(term)
            if posting is None:
                continue
            ids, tfs, idf = posting
            out[ids] += idf * tfs * (self.k1 + 1.0) / (tfs + norm[ids])
        return out

    def top_k(self, query: str | Sequence[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best (index, score) pairs with a positive score, best first (ties by index)."""
        s = self.scores(query)
        order = np.argsort(-s, kind="stable")[:k]
        return [(int(i), float(s[i])) for i in order if s[i] > 0]


def bm25_scores(query: str, documents: Sequence[str], k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """One-shot BM25 scores of ``documents`` for ``query``."""
    return BM25(documents, k1=k1, b=b).scores(query)
