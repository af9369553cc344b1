"""PPR against networkx's PageRank, the β query bias, fallbacks and the subgraph wrapper."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from docgraph.config import KG4VDSettings
from docgraph.graph import build_adjacency, personalization_vector, personalized_pagerank, ppr_for_mode, ppr_on_subgraph


def reference(n: int, edges, weights, p: np.ndarray, alpha: float) -> np.ndarray:
    """networkx PageRank with our conventions: its alpha = 1 − our α, dangling = personalization."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    for (u, v), w in zip(edges, weights):
        graph.add_edge(u, v, weight=w)
    pers = {i: float(p[i]) for i in range(n)}
    ranks = nx.pagerank(
        graph, alpha=1 - alpha, personalization=pers, dangling=pers, tol=1e-13, max_iter=10_000, weight="weight"
    )
    return np.array([ranks[i] for i in range(n)])


GRAPHS = {
    # a path with a pendant triangle and two isolated (dangling) nodes 7, 8
    "dangling": (9, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 3), (2, 6)], [1, 1, 2, 1, 1, 3, 0.5]),
    "star": (6, [(0, i) for i in range(1, 6)], [1, 2, 3, 4, 5]),
    "two_components": (6, [(0, 1), (1, 2), (3, 4), (4, 5), (5, 3)], [1, 1, 1, 1, 1]),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("alpha", [0.8, 0.45, 0.2])
def test_agrees_with_networkx(name, alpha):
    n, edges, weights = GRAPHS[name]
    adj = build_adjacency(n, edges, weights)
    rng = np.random.default_rng(len(name))
    s = np.zeros(n)
    s[[0, n - 1]] = [0.7, 0.3]
    cos = rng.uniform(-0.5, 1.0, n)
    for beta in (0.0, 0.3, 0.6):
        ours = personalized_pagerank(adj, s, cos, alpha=alpha, beta=beta, tol=1e-13, max_iter=10_000)
        p = personalization_vector(s, cos, beta)
        np.testing.assert_allclose(ours, reference(n, edges, weights, p, alpha), atol=1e-9)
        assert ours.sum() == pytest.approx(1.0)
        assert (ours >= 0).all()


def test_dangling_mass_returns_through_p():
    # node 2 has no edges and no restart mass: it must end at exactly 0, and nothing leaks.
    adj = build_adjacency(3, [(0, 1)])
    r = personalized_pagerank(adj, [1, 0, 0], alpha=0.3, tol=1e-14, max_iter=1000)
    assert r[2] == 0.0
    assert r.sum() == pytest.approx(1.0)
    # a dangling seed keeps its restart share and its own mass goes back through p
    adj = build_adjacency(3, [(1, 2)])
    r = personalized_pagerank(adj, [1, 1, 0], alpha=0.5, tol=1e-14, max_iter=1000)
    np.testing.assert_allclose(r, reference(3, [(1, 2)], [1], np.array([0.5, 0.5, 0.0]), 0.5), atol=1e-10)


def test_beta_moves_mass_toward_query_affine_nodes():
    # seed 0 in the middle of a path 4-3-0-1-2; the query likes node 4 only.
    edges = [(0, 1), (1, 2), (0, 3), (3, 4)]
    adj = build_adjacency(5, edges)
    s = [1, 0, 0, 0, 0]
    cos = [0.1, 0.0, -0.4, 0.0, 0.9]
    r0 = personalized_pagerank(adj, s, cos, alpha=0.45, beta=0.0)
    r3 = personalized_pagerank(adj, s, cos, alpha=0.45, beta=0.3)
    r6 = personalized_pagerank(adj, s, cos, alpha=0.45, beta=0.6)
    # β = 0 ignores the query: the two sides of the seed are symmetric
    assert r0[4] == pytest.approx(r0[2]) and r0[3] == pytest.approx(r0[1])
    # β > 0 pulls mass toward node 4 and its side, more with larger β
    assert r0[4] < r3[4] < r6[4]
    assert r3[4] > r3[2] and r3[3] > r3[1]
    assert list(np.argsort(-r6))[:2] == [0, 4] or list(np.argsort(-r6))[:2] == [4, 0]
    # negative cosine contributes nothing: node 2 gets no restart mass from t
    p = personalization_vector(s, cos, 0.6)
    assert p[2] == 0.0 and p[4] == pytest.approx(0.6 * 0.9 / 1.0)


def test_personalization_fallbacks():
    np.testing.assert_allclose(personalization_vector([2, 2, 0], [-1, 0, -3], 0.5), [0.5, 0.5, 0])  # t all zero → s
    np.testing.assert_allclose(personalization_vector([0, 0, 0], [0, 1, 3], 0.2), [0, 0.25, 0.75])  # s all zero → t
    np.testing.assert_allclose(personalization_vector([0, 0, 0, 0], None, 0.3), [0.25] * 4)  # both → uniform
    np.testing.assert_allclose(personalization_vector([1, 3], [1, 1], 0.5), [0.375, 0.625])
    with pytest.raises(ValueError):
        personalization_vector([1, -1], None, 0.0)
    with pytest.raises(ValueError):
        personalization_vector([1, 1], None, 1.5)


def test_restart_only_and_empty():
    adj = build_adjacency(3, [(0, 1), (1, 2)])
    np.testing.assert_allclose(personalized_pagerank(adj, [0, 1, 0], alpha=1.0), [0, 1, 0])
    assert personalized_pagerank(build_adjacency(0, []), [], alpha=0.5).shape == (0,)
    with pytest.raises(ValueError):
        personalized_pagerank(adj, [1, 0], alpha=0.5)


def test_ppr_on_subgraph_matches_ppr_on_extracted_subgraph():
    # a 2-hop ball around 0 in a longer path: nodes beyond hop 2 must not appear
    edges = [(i, i + 1) for i in range(9)]
    adj = build_adjacency(10, edges)
    cos = np.linspace(-1, 1, 10)
    nodes, scores = ppr_on_subgraph(
        adj, [0], [1.0], cos, alpha=0.45, beta=0.3, h_max=2, n_max=100, tol=1e-13, max_iter=5000
    )
    assert list(nodes) == [0, 1, 2]
    sub_edges = [(0, 1), (1, 2)]
    p = personalization_vector([1, 0, 0], cos[[0, 1, 2]], 0.3)
    np.testing.assert_allclose(scores, reference(3, sub_edges, [1, 1], p, 0.45), atol=1e-9)


def test_ppr_on_subgraph_node_cap_keeps_heaviest_seeds():
    adj = build_adjacency(6, [(0, 5), (1, 5), (2, 5)])
    nodes, scores = ppr_on_subgraph(adj, [0, 1, 2], [0.1, 0.6, 0.3], alpha=0.5, beta=0.0, h_max=2, n_max=2)
    assert list(nodes) == [1, 2]
    assert scores[0] > scores[1] and scores.sum() == pytest.approx(1.0)


def test_ppr_for_mode_uses_table8_values():
    settings = KG4VDSettings()
    edges = [(i, i + 1) for i in range(20)]
    adj = build_adjacency(21, edges)
    for name, expected in (("local", 2), ("multi_hop", 3), ("document", 6)):
        nodes, scores = ppr_for_mode(adj, [0], [1.0], None, settings.mode(name))
        assert len(nodes) == expected  # H_max = 1, 2, 5 hops along a path
        direct = personalized_pagerank(
            build_adjacency(expected, edges[: expected - 1]), np.eye(expected)[0], alpha=settings.mode(name).alpha
        )
        np.testing.assert_allclose(scores, direct, atol=1e-7)


def test_result_is_the_fixed_point_of_eq1():
    n, edges, weights = GRAPHS["dangling"]
    adj = build_adjacency(n, edges, weights).toarray()
    s = np.array([0.5, 0, 0, 0, 0, 0, 0, 0, 0.5])
    cos = np.linspace(-0.2, 0.8, n)
    alpha, beta = 0.45, 0.3
    r = personalized_pagerank(adj, s, cos, alpha=alpha, beta=beta, tol=1e-14, max_iter=10_000)
    p = personalization_vector(s, cos, beta)
    out = adj.sum(axis=1)
    column_normalised = np.divide(adj, out[None, :], out=np.zeros_like(adj), where=out[None, :] > 0)
    dangling_mass = r[out == 0].sum()
    np.testing.assert_allclose(r, (1 - alpha) * (column_normalised @ r + dangling_mass * p) + alpha * p, atol=1e-12)


def test_forward_push_approximates_power_iteration_with_dangling_nodes():
    """Forward push (the local diffusion) against exact power iteration on a random directed
    graph where a tenth of the nodes have no out-edges (their mass returns through p)."""
    import numpy as np
    import scipy.sparse as sp

    from docgraph.graph.ppr import forward_push, power_iterate, transition

    rng = np.random.default_rng(3)
    n = 300
    adj = sp.random(n, n, density=0.02, random_state=rng, format="csr")
    adj = sp.csr_matrix(adj.multiply(np.repeat(rng.random(n) > 0.1, n).reshape(n, n)))  # dangling rows
    walk, dangling = transition(adj)
    assert dangling.sum() >= 10
    p = np.zeros(n)
    p[[5, 17, 40]] = [0.5, 0.3, 0.2]
    exact = power_iterate(walk, dangling, p, alpha=0.3, tol=1e-12, max_iter=500)
    pushed = forward_push(sp.csr_matrix(walk.T), dangling, p, alpha=0.3, eps=1e-8)
    assert abs(pushed.sum() - 1.0) < 1e-12
    assert np.abs(pushed - exact).sum() < 1e-4
    assert np.array_equal(np.argsort(-exact)[:10], np.argsort(-pushed)[:10])


def test_forward_push_per_edge_threshold_keeps_the_top_and_spares_the_hubs(monkeypatch):
    """With ``per_edge`` a node passes its mass on only above eps per out-neighbour: on a graph
    of a few hubs joined to everything (HippoRAG's frequent phrases) the push then leaves most
    of the graph untouched, and the top of the ranking is still the exact walk's."""
    import numpy as np
    import scipy.sparse as sp

    from docgraph.graph import ppr
    from docgraph.graph.ppr import forward_push, power_iterate, transition

    gathered = []  # out-edges each push gathered: the push's work
    rows_of = ppr._rows_of
    monkeypatch.setattr(
        ppr,
        "_rows_of",
        lambda m, rows: gathered.append(int(m.indptr[rows + 1].sum() - m.indptr[rows].sum())) or rows_of(m, rows),
    )

    rng = np.random.default_rng(5)
    n, hubs = 6000, 5
    edges = [(int(h), int(v)) for h in range(hubs) for v in rng.choice(np.arange(hubs, n), 3000, replace=False)]
    edges += [(int(a), int(b)) for a, b in rng.integers(hubs, n, size=(8000, 2)) if a != b]
    adj = build_adjacency(n, edges)
    walk, dangling = transition(adj)
    spread = sp.csr_matrix(walk.T)
    p = np.zeros(n)
    p[[100, 200, 300]] = [0.5, 0.3, 0.2]
    exact = power_iterate(walk, dangling, p, alpha=0.5, tol=1e-12, max_iter=500)
    per_node = forward_push(spread, dangling, p, alpha=0.5, eps=1e-7)
    node_work, gathered[:] = sum(gathered), []
    per_edge = forward_push(spread, dangling, p, alpha=0.5, eps=1e-7, per_edge=True)
    edge_work = sum(gathered)
    assert abs(per_edge.sum() - 1.0) < 1e-12
    leaves = slice(hubs, n)  # the ranked nodes (HippoRAG ranks passages, not its phrase hubs)
    assert np.array_equal(
        np.argsort(-exact[leaves], kind="stable")[:10], np.argsort(-per_edge[leaves], kind="stable")[:10]
    )
    assert np.abs(per_edge - exact).sum() < 1e-2
    assert np.abs(per_node - exact).sum() < 1e-2
    assert edge_work < 0.6 * node_work, (edge_work, node_work)


def test_ppr_on_subgraph_takes_the_query_affinity_as_a_function_of_nodes():
    rng = np.random.default_rng(4)
    adj = build_adjacency(500, rng.integers(0, 500, size=(900, 2)))
    cos = rng.uniform(-1, 1, 500)
    asked = []

    def affinity_of(nodes):
        asked.append(len(nodes))
        return cos[nodes]

    expected = ppr_on_subgraph(adj, [1, 2], [0.7, 0.3], cos, alpha=0.45, beta=0.3, h_max=2, n_max=50, priority=cos)
    got = ppr_on_subgraph(
        adj, [1, 2], [0.7, 0.3], affinity_of, alpha=0.45, beta=0.3, h_max=2, n_max=50, priority=affinity_of
    )
    np.testing.assert_array_equal(expected[0], got[0])
    np.testing.assert_allclose(expected[1], got[1], rtol=0, atol=1e-15)
    assert max(asked) < 500


def test_the_push_gathers_rows_as_the_sparse_matrix_would():
    """``_rows_of`` is ``matrix[rows]`` without the sparse object — repeated and empty rows
    included — so the push spreads exactly what it spread through scipy's row indexing."""
    import scipy.sparse as sp

    from docgraph.graph.ppr import _rows_of

    rng = np.random.default_rng(7)
    matrix = sp.random(60, 60, density=0.05, random_state=rng, format="csr")
    rows = np.array([3, 0, 59, 3, 17] + [int(r) for r in np.flatnonzero(np.diff(matrix.indptr) == 0)[:2]])
    targets, shares, counts = _rows_of(matrix, rows)
    expected = matrix[rows]
    np.testing.assert_array_equal(targets, expected.indices)
    np.testing.assert_array_equal(shares, expected.data)
    np.testing.assert_array_equal(counts, np.diff(expected.indptr))
    empty = _rows_of(matrix, np.zeros(0, dtype=np.int64))
    assert all(len(part) == 0 for part in empty)
