"""The structural evidence layer (``graph.structure``): each edge type, its switch, and diffusion."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from docgraph.graph.structure import ChunkLayout, build_structure, diffuse, similar_pairs

ALL = dict(contains=1.0, next_chunk=0.5, next_page=0.5, section=0.5, caption=1.0, similar=1.0, refers=0.5)


def weights(**over):
    return SimpleNamespace(**{**ALL, **over})


def layout():
    """One document, 3 pages; chunks: p0 [0 heading(sec 0), 1 caption(sec 0), 2 figure(sec 0)],
    p1 [3 (sec 0), 4 (sec 1)], p2 [5 (sec 2)] — a new section starts at page 3's top."""
    return ChunkLayout(
        doc=np.zeros(6, int),
        page=np.array([0, 0, 0, 1, 1, 2]),
        section=np.array([0, 0, 0, 0, 1, 2]),
        caption=np.array([False, True, False, False, False, False]),
        visual=np.array([False, False, True, False, False, False]),
        page_doc=np.zeros(3, int),
        page_number=np.array([1, 2, 3]),
    )


def edges(graph, a, b):
    return graph.adjacency[a, b]


def test_each_edge_type_is_built_from_the_layout():
    g = build_structure(layout(), weights(similar=0.0))
    assert g.n_nodes == 9 and g.edge_counts["contains"] == 6
    assert all(edges(g, c, 6 + p) == 1.0 for c, p in enumerate([0, 0, 0, 1, 1, 2]))
    assert edges(g, 2, 3) == 0.5, "reading order runs across the page break inside section 0"
    assert edges(g, 4, 5) == 0 and edges(g, 3, 4) == 0.5, "…but not into another section"
    assert edges(g, 6, 7) == 0.5 and edges(g, 7, 8) == 0, "pages 1-2 continue, 2-3 start a new section"
    assert edges(g, 3, 0) == 0.5, "section 0 chunks hang on its first chunk across pages"
    assert edges(g, 1, 2) == 1.0, "caption and figure"
    assert g.edge_counts["similar"] == 0


def test_a_cross_reference_joins_the_mention_to_the_definition_and_carries_mass():
    mention_to_caption = np.array([[5, 1]])
    g = build_structure(layout(), weights(similar=0.0), refers=mention_to_caption)
    assert g.edge_counts["refers"] == 1 and edges(g, 5, 1) == edges(g, 1, 5) == 0.5
    seeds = np.zeros(6)
    seeds[5] = 1.0
    without = diffuse(build_structure(layout(), weights(similar=0.0)), seeds, alpha=0.5)
    with_refers = diffuse(g, seeds, alpha=0.5)
    assert with_refers[0] > without[0], "the figure's page gains from the paragraph citing it"
    off = build_structure(layout(), weights(similar=0.0, refers=0.0), refers=mention_to_caption)
    assert off.edge_counts["refers"] == 0 and edges(off, 5, 1) == 0


def test_a_zero_weight_turns_an_edge_type_off():
    g = build_structure(layout(), weights(next_chunk=0.0, section=0.0, similar=0.0))
    assert g.edge_counts["next_chunk"] == 0 and edges(g, 2, 3) == 0 and edges(g, 3, 0) == 0


def test_similarity_links_only_other_pages_above_the_threshold():
    vectors = np.eye(4, dtype=np.float32)
    vectors[1] = vectors[0]  # chunk 1 = chunk 0, but on the same page
    vectors[2] = [0.9, 0.43589, 0, 0]  # cosine 0.9 with chunk 0, other page
    pairs = {tuple(p) for p in similar_pairs(vectors, np.array([0, 0, 1, 2]), top_k=2, threshold=0.85)}
    assert (0, 2) in pairs and (2, 0) in pairs and (0, 1) not in pairs and not any(3 in p for p in pairs)


def test_similarity_links_are_each_rows_best_other_page_chunks():
    """Against ranking every cosine: the chunks are many more than a column group, their count
    is no multiple of it, and most cosines pass the threshold (as a small embedder's do)."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((301, 16)).astype(np.float32) + 3.0
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    page = rng.integers(0, 40, len(vectors))
    sims = vectors @ vectors.T
    sims[page[:, None] == page[None, :]] = -np.inf
    expected = {(i, int(j)) for i in range(len(vectors)) for j in np.argsort(-sims[i])[:5] if sims[i, j] >= 0.9}
    got = {tuple(int(x) for x in p) for p in similar_pairs(vectors, page, top_k=5, threshold=0.9, block=64)}
    assert got == expected and len(got) > 4 * len(vectors)


def test_diffusion_spreads_seed_mass_to_structural_neighbours():
    g = build_structure(layout(), weights(similar=0.0))
    seeds = np.zeros(6)
    seeds[3] = 1.0
    mass = diffuse(g, seeds, alpha=0.5)
    assert np.argmax(mass) == 1 and mass[0] > 0, "the seed's page, then the page it continues from"
    assert mass[2] == 0, "page 3 starts a new section and shares nothing with the seed"
    assert np.all(diffuse(g, np.zeros(6), alpha=0.5) == 0)


def chain_layout(pages: int) -> ChunkLayout:
    """One document of ``pages`` pages, two chunks each, one section: a long reading-order chain."""
    page = np.repeat(np.arange(pages), 2)
    return ChunkLayout(
        doc=np.zeros(2 * pages, int),
        page=page,
        section=np.zeros(2 * pages, int),
        caption=np.zeros(2 * pages, bool),
        visual=np.zeros(2 * pages, bool),
        page_doc=np.zeros(pages, int),
        page_number=np.arange(1, pages + 1),
    )


def test_a_large_graph_diffuses_locally_with_the_exact_ranking_near_the_seeds():
    """Past ``local_above`` edges the diffusion is a forward push: the pages near the seeds rank
    as exact power iteration ranks them, and pages the pushed mass never reached get nothing
    (exact iteration gives every reachable page a little)."""
    g = build_structure(chain_layout(400), weights(section=0.0, similar=0.0))
    seeds = np.zeros(800)
    seeds[[400, 401, 420]] = [1.0, 0.5, 0.8]
    exact = diffuse(g, seeds, alpha=0.5)
    local = diffuse(g, seeds, alpha=0.5, local_above=g.adjacency.nnz - 1)
    assert np.array_equal(np.argsort(-exact)[:10], np.argsort(-local)[:10])
    assert np.abs(local - exact).max() < 1e-4 * exact.max()
    unreached = np.flatnonzero((exact > 0) & (local == 0))
    assert len(unreached) >= 10, "further along the chain exact iteration leaves crumbs, push nothing"
    assert exact[unreached].max() < 1e-5 * exact.max()
    assert np.array_equal(diffuse(g, seeds, alpha=0.5, local_above=g.adjacency.nnz), exact), (
        "at or under the threshold: exact"
    )
