"""Score helpers shared by the models and every method: one ``top_k`` and one ``minmax``.

Pure numpy; ties are always broken by position so rankings are deterministic.
"""

from __future__ import annotations

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


def minmax(values: np.ndarray) -> np.ndarray:
    """Scaled to [0, 1]; a constant vector becomes all 1 (if positive) or all 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-12:
        return np.full_like(values, 1.0 if hi > 0 else 0.0)
    return (values - lo) / (hi - lo)
