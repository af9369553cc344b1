"""Hybrid (sparse + dense) scoring of retrievable units: the strongest flat retriever.

``HybridIndex`` holds BM25 over the units' texts and their L2-normalised vectors (rows
aligned); ``scores(query, qvec, settings)`` fuses the two per unit:

- ``fusion = "score"`` (default): ``w · mm(bm25) + (1 − w) · mm(cosine)`` with min–max
  scaling over the units. ``w`` starts from ``sparse_weight`` (0.3) and, per query, leans
  towards the signal that separates its best units from the rest more sharply
  (``confidence_k``; see ``fusion_weight``): a question that quotes a document's exact
  terms gets a peaked BM25 and more lexical weight, one whose words are everywhere in the
  corpus (distractor passages share them) gets more dense weight.
- ``fusion = "rrf"``: reciprocal-rank fusion,
  ``w / (k + rank_bm25) + (1 − w) / (k + rank_dense)``, ranks 1-based, a unit that shares
  no term with the query gets no BM25 term; ``k = rrf_k`` (60).

Chosen on all shared development sets together (docs/eval.md): rank fusion at w = 0.5
helped on MMLongBench-Doc but cost 4–9 recall@5 points on HotpotQA and MuSiQue, where
BM25 is far weaker than dense; score fusion at w = 0.3 kept MMLongBench-Doc and came
within a point or three of dense on the multi-hop sets. No fixed weight suits both: 0.45
gains on MMLongBench-Doc and loses 5–7 points on MuSiQue, 0.15 the reverse; the
per-query weight gains on all four sets.
Used by the ``hybrid`` baseline, KG4VD (page anchors, entity seeds) and HVM (chunks,
concept anchors). ``group_max`` turns unit scores into page scores (a page scores as its
best unit, so a long page is found by its last paragraph too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from ...models.bm25 import BM25
from ...scoring import minmax

Signal = Literal["hybrid", "dense", "sparse"]


class FusionSettingsLike(Protocol):
    """What score fusion reads of its settings (``config.RetrievalSettings`` has them)."""

    @property
    def fusion(self) -> str: ...
    @property
    def rrf_k(self) -> int: ...
    @property
    def sparse_weight(self) -> float: ...
    @property
    def confidence_k(self) -> int: ...


def ranks(scores: np.ndarray, present: np.ndarray | None = None) -> np.ndarray:
    """1-based rank of every entry (best = 1, ties by position); ``inf`` where not ``present``."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.arange(len(scores)), -scores))
    out = np.empty(len(scores), dtype=np.float64)
    out[order] = np.arange(1, len(scores) + 1)
    if present is not None:
        out[~present] = np.inf
    return out


def separation(scores: np.ndarray, k: int) -> float:
    """How sharply ``scores`` single out their best entries: ``(best − k-th best) /
    (best − median)`` in [0, 1] (0 when nothing rises above the median). Invariant to the
    signal's scale and offset, so BM25 and cosines compare."""
    if not len(scores):
        return 0.0
    top = -np.partition(-scores, min(k, len(scores)) - 1)[: min(k, len(scores))]
    best, kth, median = float(top.max()), float(top.min()), float(np.median(scores))
    return (best - kth) / (best - median) if best > median else 0.0


def fusion_weight(sparse: np.ndarray, dense: np.ndarray, settings: FusionSettingsLike) -> float:
    """BM25's share of a score fusion for this query: ``sparse_weight`` (w) alone when
    ``confidence_k`` is 0, else ``w·c_s / (w·c_s + (1 − w)·c_d)`` with ``c`` each signal's
    ``separation`` at depth ``confidence_k`` (w again when neither separates anything)."""
    w = float(settings.sparse_weight)
    if settings.confidence_k <= 0:
        return w
    c_sparse, c_dense = separation(sparse, settings.confidence_k), separation(dense, settings.confidence_k)
    mixed = w * c_sparse + (1.0 - w) * c_dense
    return w * c_sparse / mixed if mixed > 0 else w


def fuse_scores(sparse: np.ndarray, dense: np.ndarray, settings: FusionSettingsLike) -> np.ndarray:
    """Fused score per unit (see module doc); higher is better, non-negative."""
    sparse = np.asarray(sparse, dtype=np.float64)
    dense = np.asarray(dense, dtype=np.float64)
    if settings.fusion == "score":
        w = fusion_weight(sparse, dense, settings)
        return w * minmax(sparse) + (1.0 - w) * minmax(dense)
    w = float(settings.sparse_weight)
    k = float(settings.rrf_k)
    return w / (k + ranks(sparse, sparse > 0)) + (1.0 - w) / (k + ranks(dense))


@dataclass
class HybridIndex:
    """BM25 and vectors over the same units, in the same order."""

    bm25: BM25
    vectors: np.ndarray  # (n, dim) float32, L2-normalised rows

    @classmethod
    def build(cls, texts: Sequence[str], vectors: np.ndarray) -> HybridIndex:
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts for {len(vectors)} vectors")
        return cls(bm25=BM25(list(texts)), vectors=np.asarray(vectors, dtype=np.float32))

    def __len__(self) -> int:
        return len(self.bm25)

    def dense(self, qvec: np.ndarray) -> np.ndarray:
        if not len(self):
            return np.zeros(0)
        return (self.vectors @ np.asarray(qvec, dtype=np.float32).reshape(-1)).astype(np.float64)

    def sparse(self, query: str | Sequence[str]) -> np.ndarray:
        return self.bm25.scores(query) if len(self) else np.zeros(0)

    def scores(
        self, query: str | Sequence[str], qvec: np.ndarray, settings: FusionSettingsLike, signal: Signal = "hybrid"
    ) -> np.ndarray:
        """Per-unit scores from one signal: fused (default), dense cosine or BM25. ``query`` is
        text, or its BM25 terms already read (``question.QuestionReading.sparse_terms``)."""
        if signal == "dense":
            return self.dense(qvec)
        if signal == "sparse":
            return self.sparse(query)
        return fuse_scores(self.sparse(query), self.dense(qvec), settings)


def rank_fusion(score_lists: Sequence[tuple[np.ndarray, bool, float]], k: int, n: int) -> np.ndarray:
    """Σ weight/(k + rank) over ``(scores, sparse, weight)`` lists of ``n`` entries (ranks
    1-based); in a sparse list an entry scoring ≤ 0 (a BM25 non-match) gets nothing from it."""
    out = np.zeros(n)
    for scores, sparse, weight in score_lists:
        scores = np.asarray(scores, dtype=np.float64)
        out += weight / (k + ranks(scores, scores > 0 if sparse else None))
    return out


def group_max(groups: np.ndarray, scores: np.ndarray, n_groups: int, empty: float = 0.0) -> np.ndarray:
    """The best score of each group (``groups[i]`` is unit i's group); ``empty`` for none."""
    out = np.full(n_groups, -np.inf)
    if len(scores):
        np.maximum.at(out, np.asarray(groups, dtype=np.int64), np.asarray(scores, dtype=np.float64))
    out[~np.isfinite(out)] = empty
    return out
