"""What one cross-page connection holds at once. At 10,682 pages a batch of 1,890 pages took
the main process to 1.5 GB: every page graph beside its instances, the stored pool's vectors
copied into one matrix, every judged candidate until the last anchor was judged. Now the
page graphs are read one at a time, the entity index's matrix is the pool's as it is
(``RowStack``), and each anchor's candidates go once its verdicts are counted; the results
are those of the copying code."""

from __future__ import annotations

import gc
import weakref

import numpy as np
from test_build_crosspage import PAGES, NameJudge, embed_by_name, page

from docgraph.methods.kg4vd.canonical import GraphInMemory
from docgraph.methods.kg4vd.crosspage import RowStack, candidate_pairs, connect, page_instances
from docgraph.methods.kg4vd.judge import Verdict
from docgraph.scoring import calibrated_cut
from docgraph.types import Usage


def unit_rows(n: int, seed: int, dim: int = 8) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_a_row_stack_reads_as_the_stacked_matrix():
    parts = [unit_rows(7, 1), np.zeros((0, 8), dtype=np.float32), unit_rows(5, 2)]
    whole = np.vstack(parts)
    stack = RowStack(parts)
    assert stack.shape == whole.shape == (12, 8) and len(stack) == 12
    rows = np.array([11, 0, 6, 7, 3, 7])
    assert np.array_equal(stack[rows], whole[rows])
    queries = unit_rows(4, 3).T
    assert np.allclose(stack @ queries, whole @ queries, atol=1e-6)
    assert calibrated_cut(stack, 0.3) == calibrated_cut(whole, 0.3)  # the same sampled rows


def test_candidates_from_a_row_stack_are_those_from_the_stacked_matrix():
    instances, _, _ = page_instances(PAGES)
    vectors = embed_by_name(instances)
    expected, _ = candidate_pairs(instances, vectors, instances, vectors, top_k=3)
    stacked, _ = candidate_pairs(instances, vectors, instances, RowStack([vectors[:3], vectors[3:]]), top_k=3)
    assert [(i, [j for j, _ in c]) for i, c in stacked] == [(i, [j for j, _ in c]) for i, c in expected]
    assert np.allclose([s for _, c in stacked for _, s in c], [s for _, c in expected for _, s in c], atol=1e-6)


def canonical_graph():
    """A graph connected before: the canonical entities and relations of ``PAGES``."""
    first = connect(
        PAGES, GraphInMemory(), embed=embed_by_name, existing_vectors=lambda _id: None, judge=NameJudge(), top_k=10
    )
    return first.entities, first.relations


def test_the_entity_index_matrix_as_the_stored_pool_connects_as_its_rows_do():
    entities, relations = canonical_graph()
    later = [
        page(4, [("e1", "Kublai Khan", "person"), ("e2", "Venice", "location")], [("e1", "e2", "visited")]),
        page(5, [("e1", "Marco Polo", "person")]),
    ]
    ids = list(GraphInMemory(entities, relations).entity_ids())
    matrix = embed_by_name([entities[i] for i in ids])
    by_id = dict(zip(ids, matrix))

    def run(**vectors):
        return connect(
            later, GraphInMemory(entities, relations), embed=embed_by_name, judge=NameJudge(), top_k=10, **vectors
        )

    rows = run(existing_vectors=by_id.get)
    whole = run(existing_vectors=lambda _id: None, existing_matrix=matrix)
    assert rows.deleted_entities or any(c in entities for c in rows.canonical.values())  # it joined the graph
    assert whole.canonical == rows.canonical and whole.verdicts == rows.verdicts
    assert whole.entities == rows.entities and whole.relations == rows.relations
    assert whole.deleted_entities == rows.deleted_entities and whole.deleted_relations == rows.deleted_relations


def test_page_graphs_and_judged_candidates_are_not_all_held_at_once():
    made: list[weakref.ref] = []
    graphs_alive_at_embed: list[int] = []

    def page_graphs():
        for number in range(1, 7):
            graph = page(number, [("e1", f"Khan {number}", "person"), ("e2", f"City {number}", "location")])
            made.append(weakref.ref(graph))
            yield graph

    def embed(entities):
        gc.collect()
        graphs_alive_at_embed.append(sum(ref() is not None for ref in made))
        return embed_by_name(entities)

    offered: list[weakref.ref] = []
    alive_when_asked: list[int] = []

    class CountingJudge:
        name, pair_once, min_similarity = "counting", True, None

        def judge(self, anchor, candidates):
            gc.collect()
            alive_when_asked.append(sum(ref() is not None for ref in offered))
            offered.extend(weakref.ref(item) for item, _ in candidates)
            return [Verdict("unrelated")] * len(candidates), Usage()

    result = connect(
        page_graphs(), GraphInMemory(), embed=embed, existing_vectors=lambda _id: None, judge=CountingJudge(), top_k=3
    )
    assert result.pages == 6 and len(made) == 6
    assert graphs_alive_at_embed[0] == 0  # each page graph went once its instances were made
    assert len(offered) > 3 * 3 and len(alive_when_asked) >= 10
    assert max(alive_when_asked) <= 3  # at most the previous anchor's candidates (top 3), not every one so far
