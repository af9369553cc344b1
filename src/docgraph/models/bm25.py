"""Okapi BM25 over a small in-memory corpus (pure; baselines and the fusion reranker use it).

Tokens come from ``docgraph.text.tokenize`` (lowercase, NFKC, Latin and Greek diacritics
folded, stopwords dropped), so every BM25 in the project tokenises the same way. IDF is the
non-negative BM25+ form ``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..text import tokenize

__all__ = ["BM25", "tokenize", "bm25_scores"]


class BM25:
    """An index over ``documents`` (strings, or pre-tokenised lists)."""

    def __init__(self, documents: Sequence[str | Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.k1 = k1
        self.b = b
        docs = _tokenized(documents)  # not kept: the postings and lengths are all scoring reads
        self.lengths, self.avgdl = _lengths(docs)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, doc in enumerate(docs):
            for term, f in Counter(doc).items():
                ids, tfs = postings.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(f)
        n = len(docs)
        # term -> (document indices, term frequencies, idf): an inverted index
        self.postings = {
            t: (np.array(ids), np.array(tfs, dtype=np.float64), _idf(n, len(ids))) for t, (ids, tfs) in postings.items()
        }

    def __len__(self) -> int:
        return len(self.lengths)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for ``query`` (0 where no term matches)."""
        terms = tokenize(query) if isinstance(query, str) else list(query)
        return _accumulate(terms, self.postings.get, self.lengths, self.avgdl, self.k1, self.b)

    def absent_terms(self, query: str | Sequence[str], documents: Sequence[int]) -> list[str]:
        """The query's distinct indexed terms (``query``: text, or its terms) that occur in none
        of ``documents``."""
        out = []
        for term in dict.fromkeys(tokenize(query) if isinstance(query, str) else query):
            posting = self.postings.get(term)
            if posting is not None and not np.isin(posting[0], documents).any():
                out.append(term)
        return out

    def top_k(self, query: str | Sequence[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best (index, score) pairs with a positive score, best first (ties by index)."""
        s = self.scores(query)
        order = np.argsort(-s, kind="stable")[:k]
        return [(int(i), float(s[i])) for i in order if s[i] > 0]


@lru_cache(maxsize=8192)
def _recent_tokens(text: str) -> tuple[str, ...]:
    """``tokenize(text)``, remembered for the texts reranked lately: a workspace's queries
    rerank the same pages, entities and relations again and again."""
    return tuple(tokenize(text))


def _tokenized(documents: Sequence[str | Sequence[str]]) -> list[list[str]]:
    return [tokenize(d) if isinstance(d, str) else list(d) for d in documents]


def _lengths(docs: Sequence[Sequence[str]]) -> tuple[np.ndarray, float]:
    """Each document's length in tokens, and their mean (1 when there are none)."""
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    return lengths, float(lengths.mean()) if len(docs) and lengths.sum() else 1.0


def _idf(n: int, df: int) -> float:
    """BM25+ IDF of a term in ``df`` of ``n`` documents (never negative)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _accumulate(terms: Sequence[str], posting, lengths: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """Σ over ``terms`` (in order, repeats counted) of each document's BM25 term score;
    ``posting(term)`` gives (document indices ascending, term frequencies, idf) or None."""
    out = np.zeros(len(lengths), dtype=np.float64)
    norm = k1 * (1.0 - b + b * lengths / avgdl)
    for term in terms:
        found = posting(term)
        if found is None:
            continue
        ids, tfs, idf = found
        out[ids] += idf * tfs * (k1 + 1.0) / (tfs + norm[ids])
    return out


def bm25_scores(query: str, documents: Sequence[str], k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """One-shot BM25 scores of ``documents`` for ``query``: the scores of ``BM25(documents)``,
    without indexing the terms the query does not have (the per-query reranker calls this)."""
    docs = [_recent_tokens(d) if isinstance(d, str) else list(d) for d in documents]
    terms = tokenize(query) if isinstance(query, str) else list(query)
    lengths, avgdl = _lengths(docs)
    wanted = set(terms)
    counts = [Counter(t for t in doc if t in wanted) for doc in docs]
    postings: dict[str, tuple[np.ndarray, np.ndarray, float] | None] = {}
    for term in wanted:
        ids = [i for i, c in enumerate(counts) if term in c]
        postings[term] = (
            (np.array(ids), np.array([counts[i][term] for i in ids], dtype=np.float64), _idf(len(docs), len(ids)))
            if ids
            else None
        )
    return _accumulate(terms, postings.get, lengths, avgdl, k1, b)
