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


def test_ranked_is_a_full_sort_computed_lazily():
    import itertools

    from docgraph.scoring import ranked

    rng = np.random.default_rng(3)
    scores = np.round(rng.random(1000), 2)  # many ties, settled by row
    full = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    assert [row for row, _ in ranked(scores, first=7)] == full, "every block boundary keeps the total order"
    assert [row for row, _ in itertools.islice(ranked(scores), 5)] == full[:5]
    with_zeros = np.array([0.0, 2.0, -1.0, 2.0, 0.5])
    assert list(ranked(with_zeros, positive=True)) == [(1, 2.0), (3, 2.0), (4, 0.5)], "non-matches are left out"
    assert list(ranked(np.zeros(0))) == []
