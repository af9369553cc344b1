"""Adjacency building and bounded subgraphs: de-duplication, hop cap, node cap, seeds, order."""

from __future__ import annotations

import numpy as np
import pytest

from docgraph.graph import IdIndex, bounded_subgraph, build_adjacency, degrees


def test_adjacency_is_symmetric_and_deduplicated():
    adj = build_adjacency(4, [(0, 1), (1, 0), (0, 1), (2, 3), (2, 2)], [1.0, 4.0, 2.0, 1.5, 9.0])
    dense = adj.toarray()
    assert (dense == dense.T).all()
    assert dense[0, 1] == 4.0  # max of the three copies
    assert dense[2, 2] == 0.0  # self-loop dropped by default
    assert adj.nnz == 4
    summed = build_adjacency(4, [(0, 1), (1, 0)], [1.0, 4.0], combine="sum").toarray()
    assert summed[1, 0] == 5.0
    assert build_adjacency(3, [(1, 1)], self_loops=True).toarray()[1, 1] == 1.0
    np.testing.assert_array_equal(degrees(adj), [1, 1, 1, 1])
    np.testing.assert_array_equal(degrees(adj, weighted=True), [4, 4, 1.5, 1.5])


@pytest.mark.parametrize("edges,weights", [([(0, 3)], None), ([(0, 1)], [0.0]), ([(0, 1)], [1, 2]), ([(-1, 0)], None)])
def test_adjacency_rejects_bad_input(edges, weights):
    with pytest.raises(ValueError):
        build_adjacency(3, edges, weights)


def test_id_index_round_trip():
    ids = IdIndex(["e1", "e2"])
    assert ids.add("e3") == 2 and ids.add("e1") == 0
    assert list(ids.indices(["e3", "e1"])) == [2, 0]
    assert ids.ids([1, 2]) == ["e2", "e3"] and len(ids) == 3 and "e2" in ids
    with pytest.raises(KeyError, match="e9"):
        ids.index("e9")


def tree() -> object:
    # 0 - {1, 2, 3}; 1 - {4, 5}; 2 - {6}; 4 - {7}; 8 isolated
    return build_adjacency(9, [(0, 1), (0, 2), (0, 3), (1, 4), (1, 5), (2, 6), (4, 7)])


def test_hop_cap():
    adj = tree()
    assert list(bounded_subgraph(adj, [0], 0, 100)) == [0]
    assert sorted(bounded_subgraph(adj, [0], 1, 100)) == [0, 1, 2, 3]
    assert sorted(bounded_subgraph(adj, [0], 2, 100)) == [0, 1, 2, 3, 4, 5, 6]
    assert sorted(bounded_subgraph(adj, [0], 5, 100)) == [0, 1, 2, 3, 4, 5, 6, 7]  # 8 unreachable


def test_node_cap_and_ring_priority():
    adj = tree()
    # by degree: 1 (3 nbrs) > 2 (2) > 3 (1) inside hop ring 1
    assert list(bounded_subgraph(adj, [0], 2, 3)) == [0, 1, 2]
    # given priorities override degree; ties go to the smaller index
    prio = np.zeros(9)
    prio[3] = 5.0
    assert list(bounded_subgraph(adj, [0], 2, 3, priority=prio)) == [0, 3, 1]
    # full order: ring by ring, each ring by priority
    assert list(bounded_subgraph(adj, [0], 3, 100)) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_seeds_kept_first_and_capped_by_priority():
    adj = tree()
    out = bounded_subgraph(adj, [7, 8, 0], 1, 5)
    assert set(out[:3]) == {7, 8, 0}  # unreachable seed 8 is kept too
    assert len(out) == 5
    prio = np.arange(9, dtype=float)
    assert list(bounded_subgraph(adj, [2, 6, 7, 3], 3, 2, priority=prio)) == [7, 6]
    assert list(bounded_subgraph(adj, [5, 5, 5], 0, 10)) == [5]
    assert bounded_subgraph(adj, [], 3, 10).shape == (0,)
    assert bounded_subgraph(adj, [0], 3, 0).shape == (0,)
    with pytest.raises(ValueError):
        bounded_subgraph(adj, [9], 1, 5)


def test_deterministic_on_random_graph():
    rng = np.random.default_rng(0)
    edges = rng.integers(0, 300, size=(1200, 2))
    adj = build_adjacency(300, edges)
    first = bounded_subgraph(adj, [3, 17, 42], 2, 60)
    again = bounded_subgraph(adj, [42, 3, 17, 3], 2, 60)
    np.testing.assert_array_equal(first, again)
    assert len(first) == 60 and len(set(first.tolist())) == 60
    # every node is within 2 hops of a seed
    dense = adj.toarray() > 0
    reach = dense[[3, 17, 42]].any(axis=0) | np.isin(np.arange(300), [3, 17, 42])
    reach2 = reach | dense[reach].any(axis=0)
    assert reach2[first].all()


def test_a_priority_function_is_asked_only_about_reached_nodes():
    rng = np.random.default_rng(1)
    adj = build_adjacency(2000, rng.integers(0, 2000, size=(3000, 2)))
    priority = rng.random(2000)
    asked: list[np.ndarray] = []

    def priority_of(nodes):
        asked.append(np.asarray(nodes).copy())
        return priority[nodes]

    by_vector = bounded_subgraph(adj, [5, 9], 2, 40, priority)
    by_function = bounded_subgraph(adj, [5, 9], 2, 40, priority_of)
    np.testing.assert_array_equal(by_vector, by_function)
    seen = np.unique(np.concatenate(asked))
    assert set(by_function.tolist()) <= set(seen.tolist()) and len(seen) < 2000 / 4  # the rings reached, not the graph
    with pytest.raises(ValueError, match="priority has 3 entries"):
        bounded_subgraph(adj, [5], 1, 10, [1.0, 2.0, 3.0])
