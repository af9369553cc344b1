"""One ``top_k`` and one ``minmax`` for every method (issue 16)."""

from __future__ import annotations

import numpy as np

from docgraph.scoring import minmax, top_k


def test_top_k_breaks_ties_by_row_even_at_the_cut():
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1, 0.5])
    rows, values = top_k(scores, 3)
    assert rows.tolist() == [1, 0, 2] and values.tolist() == [0.9, 0.5, 0.5]
    rows, _ = top_k(scores, 2, rows=np.array([5, 3, 2]))
    assert rows.tolist() == [2, 3]
    assert top_k(scores, 0)[0].size == 0 and top_k(scores, 10)[0].tolist() == [1, 0, 2, 3, 5, 4]


def test_minmax_constant_vectors():
    assert minmax([3.0, 3.0]).tolist() == [1.0, 1.0] and minmax([-1.0, -1.0]).tolist() == [0.0, 0.0]
    assert minmax([1.0, 3.0, 2.0]).tolist() == [0.0, 1.0, 0.5]
