"""Hybrid (BM25 + dense) fusion and page scores from chunks (``methods.retrieval.hybrid``,
``methods.retrieval.evidence_layer``)."""

from __future__ import annotations

import numpy as np

from docgraph.config import RetrievalSettings
from docgraph.methods.retrieval.evidence_layer import EvidenceLayer
from docgraph.methods.retrieval.hybrid import HybridIndex, fuse_scores, fusion_weight, group_max, ranks, separation
from docgraph.types import Chunk


def test_reciprocal_rank_fusion_follows_the_formula():
    settings = RetrievalSettings(fusion="rrf", sparse_weight=0.5)
    sparse, dense = np.array([3.0, 0.0, 1.0]), np.array([0.1, 0.9, 0.5])
    assert ranks(sparse, sparse > 0).tolist() == [1, np.inf, 2]
    fused = fuse_scores(sparse, dense, settings)
    expected = [0.5 / 61 + 0.5 / 63, 0.5 / 61, 0.5 / 62 + 0.5 / 62]
    assert np.allclose(fused, expected)
    assert np.argmax(fused) == 0, "first by BM25 beats first by cosine alone"


def test_score_fusion_and_sparse_weight():
    default = RetrievalSettings()
    assert (default.fusion, default.sparse_weight) == ("score", 0.3)
    assert np.allclose(fuse_scores(np.array([2.0, 4.0]), np.array([0.9, 0.1]), default), [0.7, 0.3])
    settings = RetrievalSettings(fusion="score", sparse_weight=1.0)
    assert np.allclose(fuse_scores(np.array([2.0, 4.0]), np.array([0.9, 0.1]), settings), [0.0, 1.0])
    settings = RetrievalSettings(fusion="score", sparse_weight=0.0)
    assert np.allclose(fuse_scores(np.array([2.0, 4.0]), np.array([0.9, 0.1]), settings), [1.0, 0.0])


def test_score_fusion_leans_towards_the_signal_whose_best_units_stand_out():
    """BM25 with one unit far above the rest and cosines that barely tell units apart: the
    fused weight moves to BM25, and the other way round; ``confidence_k = 0`` keeps w."""
    flat_dense = np.linspace(0.82, 0.80, 30)  # unit 0 barely ahead of the rest
    peaked_sparse = np.zeros(30)
    peaked_sparse[15] = 9.0  # unit 15 alone holds the quoted terms
    settings = RetrievalSettings()
    w = fusion_weight(peaked_sparse, flat_dense, settings)
    assert separation(peaked_sparse, 10) == 1.0 and separation(flat_dense, 10) < 0.7
    assert 0.3 < w < 1.0
    assert np.argmax(fuse_scores(peaked_sparse, flat_dense, settings)) == 15
    fixed = RetrievalSettings(confidence_k=0)
    assert fusion_weight(peaked_sparse, flat_dense, fixed) == 0.3
    assert np.argmax(fuse_scores(peaked_sparse, flat_dense, fixed)) == 0, "a fixed 0.3 keeps dense's first"
    spread_sparse = np.linspace(5.0, 4.0, 30)  # every unit shares the words
    peaked_dense = np.r_[0.95, np.full(29, 0.80)]
    assert fusion_weight(spread_sparse, peaked_dense, settings) < 0.3
    assert fusion_weight(np.zeros(30), peaked_dense, settings) == 0.0, "no BM25 match: dense alone"
    assert fusion_weight(np.zeros(30), np.zeros(30), settings) == 0.3


def test_group_max_scores_a_page_as_its_best_chunk():
    assert group_max(np.array([0, 0, 2]), np.array([0.2, 0.7, 0.1]), 4).tolist() == [0.7, 0.0, 0.1, 0.0]


def _chunks():
    texts = {
        ("d", 1): ["intro to the report", "emissions table for 2020 scope one"],
        ("d", 2): ["unrelated staffing numbers"],
        ("d", 3): ["scope one emissions fell in 2021"],
    }
    return [
        Chunk(id=f"d:{p}:P{i}", doc_id=d, page=p, component_ids=[f"P{i}"], text=t, section_path=["Report"])
        for (d, p), ts in texts.items()
        for i, t in enumerate(ts)
    ]


def test_a_long_page_is_found_by_its_last_chunk_and_every_page_is_ranked():
    chunks = _chunks()
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(chunks), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    settings = RetrievalSettings(flat_weight=1.0)
    layer = EvidenceLayer.build(chunks, vectors, settings, extra_pages=[("d", 9)])
    query_vec = vectors[1]  # the second chunk of page 1
    ranking = layer.rank_pages("scope one emissions 2020", query_vec, settings)
    top = [p for p, _ in ranking.top()]
    assert top[0] == ("d", 1) and set(top) == {("d", 1), ("d", 2), ("d", 3), ("d", 9)}
    diffused = layer.rank_pages("scope one emissions 2020", query_vec, RetrievalSettings())
    assert diffused.diffused.max() == 1.0 and np.all(diffused.final <= 1.0)
    assert layer.component_chunk[("d", 1, "P1")] == layer.chunks.index(chunks[1])


def test_hybrid_index_signals():
    index = HybridIndex.build(["red apples", "green pears"], np.eye(2, dtype=np.float32))
    assert index.scores("apples", np.array([0.0, 1.0]), RetrievalSettings(), "sparse")[1] == 0
    assert index.scores("apples", np.array([0.0, 1.0]), RetrievalSettings(), "dense").tolist() == [0.0, 1.0]


def test_questions_resolve_figure_table_and_page_references():
    from docgraph.methods.retrieval.references import LabelIndex, query_references

    assert query_references("In figure 3, how many icons? See Fig. 3 and Table 2 on slide 14") == [
        ("figure", "3"),
        ("table", "2"),
        ("page", "14"),
    ]
    assert query_references("What does Section 3.2 of Chapter 14 say?") == [("section", "3.2"), ("chapter", "14")]
    assert query_references("How many figures are there?") == []
    assert query_references("How many rectangles are in the first figure? And the 2nd table, then figure 5?") == [
        ("figure", "1"),
        ("table", "2"),
        ("figure", "5"),
    ], "ordinals are references too, in question order"
    assert query_references("Who took first place in the second round?") == [], "an ordinal of no part is no label"
    chunks = [
        Chunk(id="d:1:P0", doc_id="d", page=1, component_ids=["P0"], text="As Figure 3 shows, icons vary."),
        Chunk(id="d:2:C0", doc_id="d", page=2, component_ids=["C0"], text="Figure 3: The icon set.\nmore"),
        Chunk(id="d:3:P0", doc_id="d", page=3, component_ids=["P0"], text="Table 2 compares; see Figure 4"),
    ]
    labels = LabelIndex.build(chunks)
    assert labels.rows(("figure", "3")) == [1], "the caption line defines the figure; a mention does not"
    assert labels.rows(("figure", "4")) == [2], "a label no caption defines falls back to its mentions"
    vectors = np.eye(3, dtype=np.float32)
    layer = EvidenceLayer.build(chunks, vectors, RetrievalSettings())
    assert layer.referenced_pages("what is in figure 3?").tolist() == [0.0, 1.0, 0.0]
    assert layer.referenced_pages("how many colors are on page 3").tolist() == [0.0, 0.0, 1.0]
    assert layer.referenced_pages("what is in the third figure?").tolist() == [0.0, 1.0, 0.0]
    flat = layer.flat("what icons are in figure 3?", vectors[0], RetrievalSettings(page_sparse=0))
    assert flat.top(1)[0][0] == ("d", 2), "the referenced figure's page comes first"
    off = layer.flat("what icons are in figure 3?", vectors[0], RetrievalSettings(page_sparse=0, references=False))
    assert off.top(1)[0][0] == ("d", 1)


def test_page_n_is_the_page_printed_n_first_then_the_files_nth_page():
    chunks = [
        Chunk(id=f"{d}:{n}:P0", doc_id=d, page=n, component_ids=["P0"], text="the same words")
        for d in ("manual", "deck")
        for n in range(1, 7)
    ]
    vectors = np.ones((len(chunks), 4), dtype=np.float32) / 2.0  # text alone ranks no page above another
    printed = {"manual": {n: n - 4 for n in range(5, 7)}, "deck": {}}  # the manual's 6th page is printed 2
    layer = EvidenceLayer.build(chunks, vectors, RetrievalSettings(), printed=printed)
    weights = dict(zip(layer.pages, layer.referenced_pages("the figure on page 2").tolist()))
    assert weights[("manual", 6)] == 1.0, "the page printed 2"
    assert weights[("manual", 2)] == 0.5, "the file's 2nd page, second"
    assert weights[("deck", 2)] == 1.0, "a document printing no other numbers: its 2nd page"
    assert sum(1 for w in weights.values() if w) == 3
    flat = layer.flat("the figure on page 2", vectors[0], RetrievalSettings(page_sparse=0))
    assert {page for page, _ in flat.top(3)} == {("manual", 6), ("manual", 2), ("deck", 2)}
    plain = EvidenceLayer.build(chunks, vectors, RetrievalSettings())
    assert dict(zip(plain.pages, plain.referenced_pages("page 2").tolist()))[("manual", 6)] == 0.0


def test_a_question_naming_a_kind_of_element_ranks_the_pages_holding_one():
    from docgraph.methods.retrieval.references import asked_modalities

    assert asked_modalities("How many charts compare the public with Latinos?") == ("image",)
    assert asked_modalities("Which table lists the photos?") == ("image", "table")
    assert asked_modalities("What is the GDP growth rate?") == ()
    chunks = [
        Chunk(id="d:1:P0", doc_id="d", page=1, component_ids=["P0"], text="Trust in news fell among adults."),
        Chunk(id="d:2:P0", doc_id="d", page=2, component_ids=["P0"], text="Methods of the survey."),
        Chunk(
            id="d:2:IM0",
            doc_id="d",
            page=2,
            component_ids=["IM0"],
            modality="image",
            text="Share of adults who trust news, by age",
        ),
    ]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.8, 0.6]], dtype=np.float32)
    layer = EvidenceLayer.build(chunks, vectors, RetrievalSettings())
    question, qvec = "Which chart shows trust in news among adults?", np.array([1.0, 0.0], dtype=np.float32)
    assert layer.flat(question, qvec, RetrievalSettings(element_intent=0)).top(1)[0][0] == ("d", 1)
    assert layer.flat(question, qvec, RetrievalSettings()).top(1)[0][0] == ("d", 2), "the page with a chart"
    unasked = layer.flat("Where does trust in news among adults stand?", qvec, RetrievalSettings())
    assert unasked.top(1)[0][0] == ("d", 1), "no element named: no change"


def test_best_chunk_of_each_page():
    chunks = _chunks()
    layer = EvidenceLayer.build(chunks, np.eye(len(chunks), dtype=np.float32), RetrievalSettings())
    scores = np.array([0.1, 0.9, 0.5, 0.5])  # rows in reading order; page 1 holds rows 0 and 1
    assert layer.best_chunks(scores, layer.pages) == {("d", 1): 1, ("d", 2): 2, ("d", 3): 3}
    assert layer.best_chunks(scores, [("d", 3), ("x", 1)]) == {("d", 3): 3}  # only the pages asked; unknown skipped
    tied = np.array([0.2, 0.2, 0.5, 0.5])
    assert layer.best_chunks(tied, [("d", 1)]) == {("d", 1): 0}  # a tie goes to the first row


def test_second_hop_takes_every_nth_slot_and_keeps_scores_non_increasing():
    pages = [("d", p) for p in range(1, 7)]
    chunks = [
        Chunk(id=f"d:{p}:P0", doc_id="d", page=p, component_ids=["P0"], text=f"page {p}", section_path=[])
        for _, p in pages
    ]
    layer = EvidenceLayer.build(chunks, np.eye(len(chunks), dtype=np.float32), RetrievalSettings())
    # page 1 (the best) names "Buddy Hield"; page 6, ranked last by the method, is about him
    bridges = layer.bridge_mentions(
        [
            ("d", 1, "Buddy Hield"),
            ("d", 6, "Buddy Hield"),
            ("d", 6, "Sacramento Kings"),
            ("d", 2, "Sacramento Kings"),
            ("d", 7, "Buddy Hield"),
        ]
    )  # page 7: not in layer
    top = [(p, 1.0 - 0.1 * i) for i, p in enumerate(pages[:5])]
    own = np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.2])
    merged = layer.with_bridges(
        top, bridges, "Which team does the tournament's MVP play for?", RetrievalSettings(bridge_every=3), 5, own
    )
    assert [p for p, _ in merged] == [("d", 1), ("d", 2), ("d", 6), ("d", 3), ("d", 4)]
    scores = [s for _, s in merged]
    assert scores == sorted(scores, reverse=True) and scores[2] == (0.9 + 0.8) / 2
    off = layer.with_bridges(top, bridges, "q", RetrievalSettings(bridge_every=0), 5, own)
    assert off == top
    named = layer.with_bridges(
        top, bridges, "Which team does Buddy Hield play for?", RetrievalSettings(bridge_every=3), 5, own
    )
    assert named == top, "the question's own entity is not a bridge; nothing else links page 1 onward"


def test_second_hop_prefers_the_page_the_top_page_names_by_its_heading():
    texts = {
        1: "Hello Love is a song recorded by Hank Snow in Nashville.",
        2: "Hello Love charted in 1974.",
        3: "Another song of 1974.",
        4: "Studios of Nashville.",
        5: "Hank Snow lived in Madison, Tennessee.",
    }
    chunks = [
        Chunk(
            id=f"d:{p}:P0",
            doc_id="d",
            page=p,
            component_ids=["P0"],
            text=t,
            section_path=["Songs", "Hank Snow" if p == 5 else f"Song {p}"],
        )
        for p, t in texts.items()
    ]
    layer = EvidenceLayer.build(chunks, np.eye(len(chunks), dtype=np.float32), RetrievalSettings())
    # page 1 shares one entity with page 4 and one with page 5; only page 5 is headed by a name page 1 says
    bridges = layer.bridge_mentions(
        [("d", 1, "Hank Snow"), ("d", 1, "Nashville"), ("d", 4, "Nashville"), ("d", 5, "Hank Snow")]
    )
    top = [(("d", p), 1.0 - 0.1 * p) for p in range(1, 6)]
    own = np.array([1.0, 0.9, 0.8, 0.7, 0.6])
    question = "In which state did the performer of Hello Love live?"
    merged = layer.with_bridges(top, bridges, question, RetrievalSettings(bridge_every=2), 5, own)
    assert [p for (_, p), _ in merged] == [1, 5, 2, 4, 3], "page 1 names the heading of page 5"
    off = layer.with_bridges(top, bridges, question, RetrievalSettings(bridge_every=2, name_links=0.0), 5, own)
    assert [p for (_, p), _ in off] == [1, 4, 2, 5, 3], "without the name, the higher-ranked page 4 bridges first"


def test_second_hop_prefers_the_page_holding_what_the_first_page_left_open():
    texts = {
        1: "Hello Love is a song by Hank Snow, recorded in Nashville.",
        2: "Hello Love charted in 1974.",
        3: "Hank Snow toured Canada.",
        4: "The town of Hank Snow was Madison.",
        5: "Another song.",
    }
    chunks = [
        Chunk(id=f"d:{p}:P0", doc_id="d", page=p, component_ids=["P0"], text=t, section_path=[])
        for p, t in texts.items()
    ]
    layer = EvidenceLayer.build(chunks, np.eye(len(chunks), dtype=np.float32), RetrievalSettings())
    bridges = layer.bridge_mentions([("d", 1, "Hank Snow"), ("d", 3, "Hank Snow"), ("d", 4, "Hank Snow")])
    top = [(("d", p), 1.0 - 0.1 * p) for p in (1, 2, 5)]
    own = np.array([1.0, 0.9, 0.5, 0.5, 0.8])  # pages 3 and 4 equally relevant by the method's own score
    question = "In which town did the performer of Hello Love live?"
    assert layer.page_bm25.absent_terms(question, [0]) == ["town"], "'performer' and 'live' are on no page"
    merged = layer.with_bridges(top, bridges, question, RetrievalSettings(bridge_every=2), 5, own)
    assert [p for (_, p), _ in merged][:2] == [1, 4], "page 4 holds the term page 1 lacks"
    plain = layer.with_bridges(top, bridges, question, RetrievalSettings(bridge_every=2, bridge_residual=0.0), 5, own)
    assert [p for (_, p), _ in plain][:2] == [1, 3], "own scores tie: the first page in order"
