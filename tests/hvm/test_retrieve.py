"""Retrieval over a constructed store: θ, k_c, k_r, K, k_b, the modality budgets and the ablations.

Vectors are built so that cos(query, x) is exactly the number given for each concept,
relation label and chunk (query = e0; x = s·e0 + √(1−s²)·e_j with its own axis j)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from docgraph.config import Settings
from docgraph.errors import InputError, NotBuiltError
from docgraph.methods.base import MethodContext
from docgraph.methods.baselines.common import bump_version
from docgraph.methods.hvm.retrieve import retrieve
from docgraph.methods.hvm.state import (
    NS_CHUNK,
    NS_CONCEPT,
    NS_EDGE,
    NS_ENTITY,
    VEC_CHUNK,
    VEC_CONCEPT,
    VEC_ENTITY,
    VEC_RELATION,
    edge_key,
)
from docgraph.methods.retrieval.vector_index import delete_vectors, write_vectors
from docgraph.models.rerank import FusionReranker
from docgraph.store.sqlite import SQLiteStore
from docgraph.types import Chunk

DIM = 64
CONCEPTS = {"alpha": 0.9, "beta": 0.8, "gamma": 0.6, "delta": 0.2, "epsilon": 0.15, "zeta": 0.1}
RELATIONS = {"r_high": 0.9, "r_mid": 0.7, "r_low": 0.1}
EDGES = [("alpha", "r_high", "epsilon"), ("zeta", "r_mid", "delta"), ("beta", "r_low", "zeta")]
# chunk: (modality, cos, concept whose I_con holds it or None)
CHUNKS = {
    "c01": ("text", 0.95, "alpha"),
    "c02": ("text", 0.50, "alpha"),
    "c03": ("table", 0.60, "beta"),
    "c04": ("image", 0.55, "beta"),
    "c05": ("text", 0.40, "epsilon"),
    "c06": ("text", 0.97, None),
    "c07": ("text", 0.30, "zeta"),
    "c08": ("text", 0.45, "delta"),
    "c09": ("table", 0.58, "alpha"),
    "c10": ("table", 0.52, "alpha"),
    "c11": ("table", 0.51, "alpha"),
    "c12": ("image", 0.49, "alpha"),
    "c13": ("image", 0.48, "alpha"),
    "c14": ("text", 0.47, "alpha"),
    "c15": ("text", 0.20, "gamma"),
    "c16": ("text", 0.46, "alpha"),
    "c17": ("text", 0.44, "alpha"),
    "c18": ("text", 0.43, "alpha"),
    "c19": ("image", 0.96, None),
}


def _vectors(scores: dict[str, float], offset: int) -> tuple[list[str], np.ndarray]:
    keys = sorted(scores)
    matrix = np.zeros((len(keys), DIM), dtype=np.float32)
    for i, key in enumerate(keys):
        s = scores[key]
        matrix[i, 0] = s
        matrix[i, offset + i] = np.sqrt(1 - s * s)
    return keys, matrix


@dataclass
class FakeEmbedder:
    model: str = "fake"
    dim: int = DIM

    def embed_queries(self, texts):
        q = np.zeros((len(texts), DIM), dtype=np.float32)
        q[:, 0] = 1.0
        return q

    embed_passages = embed_queries


class FakeModels:
    text_embedder = FakeEmbedder()
    reranker = FusionReranker(FakeEmbedder(), 0.3)  # offline: the stored chunk vectors, nothing embedded

    def check_embedding_model(self, method=None):
        pass


def make_ctx(root, edges=EDGES) -> MethodContext:
    store = SQLiteStore(root)
    chunks = {
        cid: Chunk(id=cid, doc_id="d", page=i + 1, component_ids=["P1"], modality=m, text=f"chunk {cid}")
        for i, (cid, (m, _, _)) in enumerate(CHUNKS.items())
    }
    store.put_records(
        NS_CHUNK,
        [(cid, {"chunk": c.model_dump(), "context": "", "index": i}, "d") for i, (cid, c) in enumerate(chunks.items())],
    )
    keys, matrix = _vectors({k: v[1] for k, v in CHUNKS.items()}, 1)
    write_vectors(store, VEC_CHUNK, keys, matrix, "fake", ["d"] * len(keys))
    for concept in CONCEPTS:
        members = [cid for cid, (_, _, c) in CHUNKS.items() if c == concept]
        store.put_record(NS_CONCEPT, concept, {"name": concept, "docs": {"d": {"entities": 1, "chunks": members}}})
    write_vectors(store, VEC_CONCEPT, *_vectors(CONCEPTS, 21), "fake")
    for head, label, tail in edges:
        store.put_record(
            NS_EDGE, edge_key(head, label, tail), {"head": head, "relation": label, "tail": tail, "docs": {"d": 1}}
        )
    write_vectors(store, VEC_RELATION, *_vectors(RELATIONS, 31), "fake")
    bump_version(store, "hvm")
    return MethodContext(store=store, settings=Settings(), models=FakeModels(), root=store.root)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    context = make_ctx(tmp_path_factory.mktemp("hvm-retrieve"))
    yield context
    context.store.close()


def ids(evidence) -> list[str]:
    return [sc.chunk.id for sc in evidence.chunks]


def concepts(evidence) -> list[str]:
    return [se.entity.name for se in evidence.entities]


WIDE = dict(k_text=100, k_table=100, k_image=100)


def test_defaults_follow_the_long_reports_profile(ctx):
    ev = retrieve(ctx, "q")
    # anchors: top-10 with s >= 0.25 -> alpha, beta, gamma; the top-10 labels are all three, and
    # r_high (alpha-epsilon) and r_low (beta-zeta) touch anchors: epsilon and zeta join
    assert concepts(ev) == ["alpha", "beta", "gamma", "epsilon", "zeta"]
    assert [(r.source_name, r.relation.label, r.target_name) for r in ev.relations] == [
        ("alpha", "r_high", "epsilon"),
        ("beta", "r_low", "zeta"),
    ]
    # K=10 best graph chunks (c16 is 11th) + k_b=2 best overall (c06, c19), then at most
    # 5 text / 3 table (c11 cut) / 2 image (c12, c13 cut), sections in that order
    assert ids(ev) == ["c06", "c01", "c02", "c14", "c03", "c09", "c10", "c19", "c04"]
    assert [sc.chunk.modality for sc in ev.chunks] == ["text"] * 4 + ["table"] * 3 + ["image"] * 2
    # pages: every page ranked to the page budget (not only those of the chosen chunks)
    assert len(ev.pages) == 10 and {CHUNKS_PAGE[c] for c in ("c06", "c01")} <= {p.page for p in ev.pages[:3]}
    assert CHUNKS_PAGE["c19"] in {p.page for p in ev.pages}
    # with more weight on the diffusion, the graph's evidence (alpha's chunks, B_graph) lifts
    # c01's page over c06's, the best flat page
    graph_heavy = ctx.settings.model_copy(deep=True)
    graph_heavy.retrieval.flat_weight = 0.3
    lifted = retrieve(MethodContext(store=ctx.store, settings=graph_heavy, models=ctx.models, root=ctx.root), "q")
    assert lifted.pages[0].page == CHUNKS_PAGE["c01"]
    assert set(ev.timings) >= {"embed", "anchors", "propagate", "evidence", "pages", "rerank", "second_hop", "retrieve"}


def test_flat_weight_one_ranks_pages_by_their_best_chunk(ctx):
    flat_only = ctx.settings.model_copy(deep=True)
    flat_only.retrieval.flat_weight = 1.0
    ev = retrieve(
        MethodContext(store=ctx.store, settings=flat_only, models=ctx.models, root=ctx.root), "q", top_pages=19
    )
    by_cos = sorted(CHUNKS, key=lambda c: -CHUNKS[c][1])
    assert [p.page for p in ev.pages] == [CHUNKS_PAGE[c] for c in by_cos]


CHUNKS_PAGE = {cid: i + 1 for i, cid in enumerate(CHUNKS)}


class PreferringReranker:
    """A reranker model that rates one chunk's text above all others, and records its calls."""

    model = "scripted"

    def __init__(self, favourite: str):
        self.favourite, self.calls = favourite, []

    def rerank(self, query, documents):
        self.calls.append(list(documents))
        return [1.0 if d == f"chunk {self.favourite}" else 0.0 for d in documents]


def test_the_reranker_reorders_the_best_pages_by_their_best_chunks(ctx):
    """``page_rerank_weight``: 0 keeps the layer's order; 1 puts the page whose best chunk
    the reranker prefers first, among the 2 × top_pages best; it sees one text per page."""
    models = FakeModels()
    models.reranker = PreferringReranker("c04")  # c04 (cos 0.55): the pool's sixth page
    scripted = MethodContext(store=ctx.store, settings=ctx.settings, models=models, root=ctx.root)
    baseline = retrieve(scripted, "q", page_rerank_weight=0.0)
    assert not models.reranker.calls, "weight 0: no reranker call"
    assert [p.page for p in baseline.pages].index(CHUNKS_PAGE["c04"]) >= 3
    reranked = retrieve(scripted, "q", page_rerank_weight=1.0, top_pages=5)
    [texts] = models.reranker.calls
    assert len(texts) == 10 and "chunk c04" in texts and len(set(texts)) == len(texts)
    assert reranked.pages[0].page == CHUNKS_PAGE["c04"]
    assert [p.score for p in reranked.pages] == sorted((p.score for p in reranked.pages), reverse=True)


def test_theta_filters_anchors(ctx):
    assert concepts(retrieve(ctx, "q", theta=0.7, k_r=0)) == ["alpha", "beta"]
    assert concepts(retrieve(ctx, "q", theta=0.85, k_r=0)) == ["alpha"]
    ev = retrieve(ctx, "q", theta=0.95, **WIDE)
    assert concepts(ev) == [] and ev.relations == []
    assert ids(ev) == ["c06", "c19"]  # only B_rag (k_b=2) is left
    assert any("theta=0.95" in n for n in ev.notes)


def test_k_c_caps_anchors(ctx):
    assert concepts(retrieve(ctx, "q", k_c=1, k_r=0)) == ["alpha"]
    assert concepts(retrieve(ctx, "q", k_c=2, k_r=0)) == ["alpha", "beta"]


def test_k_r_controls_one_step_propagation(ctx):
    assert concepts(retrieve(ctx, "q", k_r=0)) == ["alpha", "beta", "gamma"]
    assert "c05" not in ids(retrieve(ctx, "q", k_r=0, K=100, **WIDE))
    with_rhigh = retrieve(ctx, "q", k_r=1, K=100, **WIDE)
    assert concepts(with_rhigh) == ["alpha", "beta", "gamma", "epsilon"] and "c05" in ids(with_rhigh)
    # r_mid (zeta-delta) touches no anchor: nothing from it even when selected
    assert "delta" not in concepts(retrieve(ctx, "q", k_r=2))
    # k_r=3 also selects r_low (beta-zeta): zeta joins, but delta (zeta's neighbour) does not: no multi-hop
    ev = retrieve(ctx, "q", k_r=3, K=100, **WIDE)
    assert concepts(ev) == ["alpha", "beta", "gamma", "epsilon", "zeta"]
    assert "c07" in ids(ev) and "c08" not in ids(ev)


def test_propagation_keeps_k_r_relations_not_every_edge_of_a_chosen_label(tmp_path):
    # r_high now links alpha to four concepts; three of them are not anchors
    wide = make_ctx(
        tmp_path, EDGES + [("alpha", "r_high", "gamma"), ("alpha", "r_high", "delta"), ("zeta", "r_high", "alpha")]
    )
    try:
        ev = retrieve(wide, "q", k_r=2, K=100, **WIDE)
        # labels r_high, r_mid; touching the anchors: the four r_high edges (r_mid's does not),
        # best by the mean similarity of their concepts: alpha-gamma (.75), alpha-delta (.55)
        assert [(r.source_name, r.target_name) for r in ev.relations] == [("alpha", "gamma"), ("alpha", "delta")]
        assert concepts(ev) == ["alpha", "beta", "gamma", "delta"]  # not epsilon, not zeta
        assert "c08" in ids(ev) and not {"c05", "c07"} & set(ids(ev))
        assert "propagation: 2 of 4 relations touching the anchors kept (k_r=2)" in ev.notes
        ev = retrieve(wide, "q", k_r=10, K=100, **WIDE)  # k_r = 10 keeps all five anchored edges
        assert len(ev.relations) == 5 and set(concepts(ev)) == set(CONCEPTS)
        assert not any(n.startswith("propagation:") for n in ev.notes)
    finally:
        wide.store.close()


def test_propagate_ranks_by_label_then_by_its_concepts():
    from docgraph.methods.hvm.anchoring import propagate

    labels = ["wide", "narrow", "off"]
    edges = {"wide": [(0, k) for k in range(1, 7)] + [(5, 6)], "narrow": [(7, 0)], "off": [(0, 8)]}
    concept_scores = np.array([0.9, 0.1, 0.6, 0.3, 0.5, 0.2, 0.4, 0.7, 0.99])
    step = propagate({0}, np.array([0.8, 0.5, -0.2]), labels, edges, concept_scores, k_r=2)
    assert step.anchored == 7  # 6 wide + 1 narrow edges touch the anchor; (5, 6) does not; 'off' is not chosen
    assert [(h, lbl, t) for h, lbl, t, _ in step.relations] == [(0, "wide", 2), (0, "wide", 4)]
    assert step.reached == {2: "wide", 4: "wide"}
    step = propagate({0}, np.array([0.8, 0.5, -0.2]), labels, edges, concept_scores, k_r=8)
    assert [t if h == 0 else h for h, _, t, _ in step.relations] == [2, 4, 6, 3, 5, 1, 7, 8]
    assert [lbl for _, lbl, _, _ in step.relations][-2:] == ["narrow", "off"] and step.anchored == 8
    assert propagate({0}, np.array([0.8, 0.5, -0.2]), labels, edges, concept_scores, k_r=0).relations == []


def test_K_keeps_the_best_graph_chunks_and_k_b_adds_the_best_overall(ctx):
    ev = retrieve(ctx, "q", K=3, k_b=0, **WIDE)
    assert sorted(ids(ev)) == ["c01", "c03", "c09"]
    ev = retrieve(ctx, "q", K=3, k_b=1, **WIDE)
    assert sorted(ids(ev)) == ["c01", "c03", "c06", "c09"]
    ev = retrieve(ctx, "q", K=3, k_b=3, **WIDE)  # c01 is in both: the union counts it once
    assert sorted(ids(ev)) == ["c01", "c03", "c06", "c09", "c19"]
    ev = retrieve(ctx, "q", K=0, k_b=2, **WIDE)
    assert sorted(ids(ev)) == ["c06", "c19"]


def test_modality_budgets_and_sections(ctx):
    ev = retrieve(ctx, "q", K=100, k_text=2, k_table=1, k_image=0)
    assert ids(ev) == ["c06", "c01", "c03"]
    ev = retrieve(ctx, "q", K=100, k_text=0, k_table=2, k_image=3)
    assert ids(ev) == ["c03", "c09", "c19", "c04", "c12"]


def test_without_modality_awareness_the_best_chunks_interleave(ctx):
    ev = retrieve(ctx, "q", K=100, modality_aware=False, k_text=2, k_table=1, k_image=1)
    assert ids(ev) == ["c06", "c19", "c01", "c03"]  # 4 = 2 + 1 + 1 by score, modalities mixed


def test_profiles_and_bad_options(ctx):
    ev = retrieve(ctx, "q", profile="short_pages")  # theta 0.5, k_r 15, k_b 4
    assert concepts(ev) == ["alpha", "beta", "gamma", "epsilon", "zeta"]
    with pytest.raises(InputError, match="hvm does not take the option.s. top_k; it takes profile, "):
        retrieve(ctx, "q", top_k=3)
    with pytest.raises(InputError):
        retrieve(ctx, "q", profile="nope")
    assert len(retrieve(ctx, "q", top_pages=2).pages) <= 2


def test_no_concept_graph_ablation_retrieves_entities_directly(ctx):
    with pytest.raises(NotBuiltError):
        retrieve(ctx, "q", concept_graph=False)
    store = ctx.store
    entities = {"d|ann": (0.9, ["c02", "c05"]), "d|bob": (0.3, ["c08"]), "d|cy": (0.1, ["c07"])}
    store.put_records(
        NS_ENTITY,
        [
            (k, {"key": k[2:], "name": k[2:], "concept": "person", "mentions": support, "support": support}, "d")
            for k, (_, support) in entities.items()
        ],
    )
    write_vectors(store, VEC_ENTITY, *_vectors({k: v[0] for k, v in entities.items()}, 41), "fake", ["d"] * 3)
    bump_version(store, "hvm")
    try:
        ev = retrieve(ctx, "q", concept_graph=False, k_b=0, **WIDE)
        assert concepts(ev) == ["ann", "bob"] and ev.relations == []
        assert sorted(ids(ev)) == ["c02", "c05", "c08"]
        assert ids(retrieve(ctx, "q", concept_graph=False, k_b=0, k_c=1, **WIDE)) == ["c02", "c05"]
    finally:
        delete_vectors(store, VEC_ENTITY)
        store.delete_records(NS_ENTITY)
        bump_version(store, "hvm")
