"""Score helpers shared by the models and every method: one ``top_k``, one ``minmax``, and the
calibration of cosines by their median (``median_cosine``, ``calibrated_cut``).

Pure numpy; ties are always broken by position so rankings are deterministic.

A cosine threshold means different things for different embedders: e5-small puts
unrelated texts at a median cosine of ~0.83–0.90, a spread-out embedder near 0. A
*calibrated* threshold t is applied to the cosine rescaled so that the median cosine ``b``
between the rows (when positive) maps to 0 and identity to 1: ``(cos − b) / (1 − b) ≥ t``,
i.e. a raw cut of ``b + t·(1 − b)`` (HippoRAG's synonym edges, KG4VD's cross-page floor).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np


def top_k(scores: np.ndarray, k: int, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` (rows, scores), best first, ties by row; over ``rows`` when given."""
    scores = np.asarray(scores)
    rows = np.arange(len(scores)) if rows is None else np.asarray(rows)
    if k <= 0 or len(rows) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    values = scores[rows]
    if k < len(rows):
        part = np.argpartition(-values, k - 1)[:k]
        # keep every row tied with the k-th score, so ties are settled by row below
        cut = values[part].min()
        part = np.flatnonzero(values >= cut)
        rows, values = rows[part], values[part]
    order = np.lexsort((rows, -values))[:k]
    return rows[order], values[order]


def ranked(scores: np.ndarray, first: int = 64, positive: bool = False) -> Iterator[tuple[int, float]]:
    """Every (row, score) best first, ties by row — the order of a full sort — computed in
    growing blocks (``first``, then 4x more each time, with ``top_k``), so a caller that stops
    after the first few rows pays O(n) per block instead of a full O(n log n) sort.
    ``positive`` leaves out rows scoring <= 0 (a BM25 non-match)."""
    scores = np.asarray(scores)
    n = int(np.count_nonzero(scores > 0)) if positive else len(scores)
    done, k = 0, max(1, first)
    while done < n:
        rows, values = top_k(scores, min(k, n))
        yield from zip(rows[done:].tolist(), values[done:].tolist())
        done, k = len(rows), k * 4


def minmax(values: np.ndarray) -> np.ndarray:
    """Scaled to [0, 1]; a constant vector becomes all 1 (if positive) or all 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-12:
        return np.full_like(values, 1.0 if hi > 0 else 0.0)
    return (values - lo) / (hi - lo)


def blend_rerank(
    rerank: Sequence[float] | np.ndarray, prior: Sequence[float] | np.ndarray, weight: float
) -> np.ndarray:
    """A reranked candidate's final score: ``weight · mm(rerank) + (1 − weight) · mm(prior)``
    (mm: ``minmax`` over the candidates)."""
    return weight * minmax(np.asarray(rerank, dtype=np.float64)) + (1.0 - weight) * minmax(np.asarray(prior))


class RowMatrix(Protocol):
    """What the cosine calibration reads of a matrix: its shape and rows by an index array
    (a numpy array, or ``kg4vd.crosspage.RowStack``'s blocks read as one)."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    def __getitem__(self, rows: np.ndarray, /) -> np.ndarray: ...


def median_cosine(matrix: RowMatrix, sample: int = 2000, seed: int = 0) -> float:
    """Median cosine between distinct rows (on a fixed random sample of at most ``sample`` rows)."""
    n = matrix.shape[0]
    if n < 2:
        return 0.0
    rows = np.random.default_rng(seed).choice(n, size=min(n, sample), replace=False)
    sims = matrix[rows] @ matrix[rows].T
    return float(np.median(sims[~np.eye(len(rows), dtype=bool)]))


def calibrated_cut(matrix: RowMatrix, threshold: float) -> float:
    """The raw cosine that the calibrated ``threshold`` corresponds to (see the module docstring)."""
    baseline = max(median_cosine(matrix), 0.0)
    return baseline + threshold * (1.0 - baseline)
