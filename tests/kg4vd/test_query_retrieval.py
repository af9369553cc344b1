"""KG4VD retrieval on hand-written graphs: anchors, seeds, subgraph + PPR, rerank budgets,
ablation switches, the graph cache, errors."""

from __future__ import annotations

import numpy as np
import pytest
from query_graph import history_graph, random_graph, write_graph

from docgraph import Workspace
from docgraph.errors import InputError, NotBuiltError
from docgraph.methods.kg4vd import query
from docgraph.methods.kg4vd.graph_view import GraphChanged, load_view
from docgraph.methods.kg4vd.retrieval import retrieve_graph
from docgraph.methods.retrieval.hybrid import fuse_scores
from docgraph.methods.retrieval.vector_index import delete_vectors, write_vectors
from docgraph.scoring import blend_rerank, minmax, top_k
from docgraph.types import Entity, Mention, Relation

STAGES = {"analyzer", "query_embedding", "page_retrieval", "graph_load", "entity_retrieval", "subgraph_ppr", "rerank"}


@pytest.fixture(scope="module")
def history_ws(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("history"))
    write_graph(ws, history_graph())
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def synth_ws(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("synth"))
    spec = random_graph()
    rng = np.random.default_rng(3)
    dim = ws.models.text_embedder.dim

    def unit(n):
        m = rng.normal(size=(n, dim)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    write_graph(ws, spec, entity_vectors=unit(len(spec.entities)), page_vectors=unit(len(spec.pages)))
    yield ws
    ws.close()


def _ctx(ws, **kg4vd):
    ctx = ws.context()
    if kg4vd:
        ctx.settings = ctx.settings.model_copy(update={"kg4vd": ctx.settings.kg4vd.model_copy(update=kg4vd)})
    return ctx


def test_multi_hop_question_reaches_the_answer_through_the_graph(history_ws):
    ev = query.retrieve(
        history_ws.context(), "Which dynasty did the grandson of Genghis Khan establish?", mode="multi_hop"
    )
    assert ev.mode == "multi_hop" and ev.method == "kg4vd"
    names = [s.entity.name for s in ev.entities]
    assert "Yuan dynasty" in names[:5] and "Kublai Khan" in names[:5]
    assert ev.pages[0].page == 3
    labels = {(s.source_name, s.relation.label, s.target_name) for s in ev.relations}
    assert ("Kublai Khan", "established", "Yuan dynasty") in labels
    assert ("Kublai Khan", "grandson_of", "Genghis Khan") in labels
    assert STAGES <= set(ev.timings)
    assert all(v >= 0 for v in ev.timings.values())
    scores = [p.score for p in ev.pages]
    assert scores == sorted(scores, reverse=True)


def test_local_lookup_ranks_the_page_that_holds_the_fact(history_ws):
    ev = query.retrieve(history_ws.context(), "In which year did Mansa Musa make his pilgrimage to Mecca?")
    assert ev.mode == "local"
    assert ev.pages[0].page == 6
    assert ev.entities[0].entity.name == "Mansa Musa"


@pytest.mark.parametrize("mode", ["local", "multi_hop", "document"])
def test_budgets_per_mode(synth_ws, mode):
    ctx = synth_ws.context()
    cfg = ctx.settings.kg4vd.mode(mode)
    trace = retrieve_graph(ctx, "Topic 42 subject 0 in region 2", mode)
    assert len(trace.subgraph) <= cfg.n_max
    assert len(trace.entities) <= cfg.k_entities
    assert len(trace.relations) <= cfg.k_relations
    assert len(trace.pages) <= cfg.k_pages == 10
    # the budgets bind: there are more candidates than each budget keeps
    assert trace.candidates["entities"] > cfg.k_entities and len(trace.entities) == cfg.k_entities
    assert trace.candidates["relations"] > cfg.k_relations and len(trace.relations) == cfg.k_relations
    assert trace.candidates["pages"] >= 10 and len(trace.pages) == 10
    subgraph = {synth_ws_view(synth_ws).ids.id(int(n)) for n in trace.subgraph}
    assert {s.entity.id for s in trace.entities} <= subgraph
    assert all(s.relation.source in subgraph and s.relation.target in subgraph for s in trace.relations)


def synth_ws_view(ws):
    return load_view(ws.store)


def test_local_mode_caps_the_subgraph_at_n_max(synth_ws):
    trace = retrieve_graph(synth_ws.context(), "Topic 7", "local")
    # 10 anchor pages × 5 entities = 50 seeds, more than N_max = 30
    assert len(trace.seeds) == 50
    assert len(trace.subgraph) == 30


def test_hop_and_node_caps_are_settings(synth_ws):
    base = synth_ws.context().settings.kg4vd
    zero_hops = base.multi_hop.model_copy(update={"h_max": 0})
    trace = retrieve_graph(_ctx(synth_ws, multi_hop=zero_hops), "Topic 7", "multi_hop")
    assert set(trace.subgraph.tolist()) == set(trace.seeds.tolist())
    two_hops = retrieve_graph(synth_ws.context(), "Topic 7", "multi_hop")
    assert len(two_hops.subgraph) > len(trace.subgraph)
    small = base.document.model_copy(update={"n_max": 7, "k_entities": 3, "k_relations": 2, "k_pages": 4})
    trace = retrieve_graph(_ctx(synth_ws, document=small), "Topic 7", "document")
    assert len(trace.subgraph) == 7
    assert (len(trace.entities), len(trace.pages)) == (3, 4)
    assert len(trace.relations) <= 2


def test_page_anchors_and_seed_weights(synth_ws):
    ctx = _ctx(synth_ws, page_anchors=3)
    trace = retrieve_graph(ctx, "Topic 12", "local")
    assert len(trace.anchors) == 3
    view = load_view(synth_ws.store)
    anchor_pages = {p for p, _ in trace.anchors}
    assert {
        (m.doc_id, m.page) for e in view.entities_of(synth_ws.store, trace.seeds) for m in e.mentions
    } <= anchor_pages
    assert len(trace.seeds) == 15
    assert trace.seed_weights.sum() == pytest.approx(1.0)
    assert np.all(trace.seed_weights >= 0)


def test_anchored_seeds_score_the_anchor_entities_not_the_whole_graph(synth_ws, monkeypatch):
    from docgraph.methods.kg4vd.graph_view import GraphView
    from docgraph.methods.kg4vd.storage import embed_query
    from docgraph.methods.retrieval.vector_index import load_index

    ctx = _ctx(synth_ws, page_anchors=3)
    view = load_view(synth_ws.store)
    scored: list[int] = []
    original = GraphView.affinity_of

    def spy(self, index, qvec, nodes):
        scored.append(len(nodes))
        return original(self, index, qvec, nodes)

    monkeypatch.setattr(GraphView, "affinity_of", spy)
    monkeypatch.setattr(GraphView, "affinity", lambda *a: pytest.fail("scored every entity"))
    trace = retrieve_graph(ctx, "Topic 12", "multi_hop")
    assert scored and max(scored) < len(view)
    # the seed weights: the hybrid signal fused over the anchor pages' entities
    anchors = view.nodes_on_pages([p for p, _ in trace.anchors])
    cosine = original(view, load_index(synth_ws.store, "kg4vd.entity"), embed_query(ctx.models, "Topic 12"), anchors)
    signal = np.maximum(fuse_scores(view.lexical("Topic 12")[anchors], cosine, ctx.settings.retrieval), 0)
    np.testing.assert_array_equal(trace.seeds, anchors)
    np.testing.assert_allclose(trace.seed_weights, signal / signal.sum())


def test_seed_weights_follow_query_similarity(history_ws):
    trace = retrieve_graph(history_ws.context(), "Marco Polo the Venetian merchant", "local")
    view = load_view(history_ws.store)
    weights = dict(zip((view.names[int(n)] for n in trace.seeds), trace.seed_weights))
    assert max(weights, key=weights.get) == "Marco Polo"


def test_no_page_anchoring_ablation_seeds_from_entity_retrieval(synth_ws):
    ctx = _ctx(synth_ws, page_anchoring=False)
    trace = retrieve_graph(ctx, "Topic 3", "local")
    view = load_view(synth_ws.store)
    from docgraph.methods.kg4vd.storage import embed_query
    from docgraph.methods.retrieval.vector_index import load_index

    index = load_index(synth_ws.store, "kg4vd.entity")
    affinity = view.affinity(index, embed_query(ctx.models, "Topic 3"))
    hybrid = fuse_scores(view.lexical("Topic 3"), affinity, ctx.settings.retrieval)
    expected = set(top_k(hybrid, ctx.settings.kg4vd.local.k_entities)[0].tolist())
    assert set(trace.seeds.tolist()) == expected
    # retrieval.seeds = "dense": the paper's seeds, the entities most similar to the query
    ctx.settings.retrieval = ctx.settings.retrieval.model_copy(update={"seeds": "dense"})
    dense = retrieve_graph(ctx, "Topic 3", "local")
    assert set(dense.seeds.tolist()) == set(top_k(affinity, ctx.settings.kg4vd.local.k_entities)[0].tolist())
    ev = query.retrieve(ctx, "Topic 3")
    assert any("no page anchoring" in note for note in ev.notes)


def test_fixed_mode_ablation_and_mode_option(history_ws):
    ctx = _ctx(history_ws, fixed_mode="document")
    ev = query.retrieve(ctx, "What year did Mansa Musa travel?")
    assert ev.mode == "document"
    assert any("fixed document-mode" in note for note in ev.notes)
    assert query.retrieve(ctx, "What year did Mansa Musa travel?", mode="local").mode == "local"


def test_beta_moves_ppr_mass_from_seeds_to_query_similar_entities(history_ws):
    """β = 0: p is the seed distribution; β > 0 mixes in t(q) over the whole subgraph,
    so entities beyond the anchor pages get more of the mass."""
    base = history_ws.context().settings.kg4vd

    def off_seed_mass(beta):
        mode = base.document.model_copy(update={"beta": beta})
        trace = retrieve_graph(_ctx(history_ws, page_anchors=1, document=mode), "Black Death pandemic", "document")
        seeds = set(trace.seeds.tolist())
        assert len(trace.subgraph) > len(seeds)
        return sum(float(s) for n, s in zip(trace.subgraph, trace.ppr) if int(n) not in seeds)

    assert off_seed_mass(0.9) > off_seed_mass(0.6) > off_seed_mass(0.0) > 0.0


def test_graph_view_reloads_when_relations_change(tmp_path):
    with Workspace(tmp_path) as ws:
        write_graph(ws, history_graph())
        view = load_view(ws.store)
        assert load_view(ws.store) is view
        rel = Relation(
            id="r99",
            source="musa",
            target="silk",
            label="traded_on",
            description="",
            mentions=[Mention(doc_id="hist0001", page=6, component_ids=["P1"])],
        )
        ws.store.put_record("kg4vd.relation", rel.id, rel.model_dump(mode="json"))
        assert load_view(ws.store) is view  # records alone: the build always writes vectors too
        write_vectors(ws.store, "kg4vd.relation", [rel.id], np.ones((1, 4), dtype=np.float32), "m")
        fresh = load_view(ws.store)
        assert fresh is not view
        assert "r99" in fresh.relation_ids
        assert len(fresh.relation_ids) == len(view.relation_ids) + 1
        delete_vectors(ws.store, "kg4vd.page", doc_id="hist0001")  # what removing a document does
        assert load_view(ws.store) is not fresh


def test_graph_view_skips_dangling_relations():
    from docgraph.methods.kg4vd.graph_view import build_view

    e = [Entity(id=i, name=i, type="t") for i in ("a", "b")]
    r = [
        Relation(id="1", source="a", target="b", label="x"),
        Relation(id="2", source="a", target="zz", label="x"),
        Relation(id="3", source="a", target="b", label="y"),
        Relation(id="4", source="b", target="b", label="z"),
    ]
    view = build_view([x.model_dump() for x in e], [x.model_dump() for x in r])
    assert view.relation_ids == ["1", "3"]
    assert view.adjacency[0, 1] == 2.0 and view.adjacency[1, 0] == 2.0


def test_graph_view_keeps_arrays_and_reads_records_when_asked(tmp_path):
    with Workspace(tmp_path) as ws:
        spec = history_graph()
        write_graph(ws, spec)
        view = load_view(ws.store)
        assert not hasattr(view, "entities") and not hasattr(view, "relations")
        node = view.ids.index("kublai")
        [entity] = view.entities_of(ws.store, [node])
        assert entity == Entity.model_validate(ws.store.get_record("kg4vd.entity", "kublai"))
        assert view.names[node] == entity.name and view.types[node] == entity.type
        rels = view.relations_of(ws.store, view.node_relations[node])
        assert rels and all("kublai" in (r.source, r.target) for r in rels)


def test_a_query_that_meets_a_changed_graph_starts_over_on_the_new_one(tmp_path):
    question = "Which dynasty did the grandson of Genghis Khan establish?"
    with Workspace(tmp_path / "a") as ws:
        write_graph(ws, history_graph())
        assert "Kublai Khan" in [
            s.entity.name for s in query.retrieve(ws.context(), question, mode="multi_hop").entities
        ]
    with Workspace(tmp_path / "b") as ws:
        write_graph(ws, history_graph())
        stale = load_view(ws.store)  # made, no record read yet
        # a build merges an entity away between the view's load and its record reads (the
        # vectors' version stamp moves later, in the build's next transaction)
        ws.store.delete_records("kg4vd.entity", ["kublai"])
        after = query.retrieve(ws.context(), question, mode="multi_hop")
        assert after.entities and "Kublai Khan" not in [s.entity.name for s in after.entities]
        fresh = load_view(ws.store)
        assert fresh is not stale and "kublai" not in fresh.ids
        with pytest.raises(GraphChanged, match="kublai"):
            stale.entities_of(ws.store, [stale.ids.index("kublai")])


def test_empty_workspace_and_bad_options(tmp_path, history_ws):
    with Workspace(tmp_path) as ws:
        with pytest.raises(NotBuiltError, match="docgraph build --method kg4vd"):
            query.retrieve(ws.context(), "anything")
    with pytest.raises(InputError, match="question is empty"):
        query.retrieve(history_ws.context(), "   ")
    with pytest.raises(InputError, match="does not take the option"):
        query.retrieve(history_ws.context(), "Mongols", top_k=3)
    with pytest.raises(InputError, match="unknown KG4VD mode"):
        query.retrieve(history_ws.context(), "Mongols", mode="wide")
    ev = query.retrieve(history_ws.context(), "Mongols", top_pages=2)
    assert len(ev.pages) == 2


def test_fusion_helpers():
    assert minmax([2.0, 2.0]).tolist() == [1.0, 1.0]
    assert minmax([1.0, 3.0, 2.0]).tolist() == [0.0, 1.0, 0.5]
    assert blend_rerank([0.0, 1.0], [1.0, 0.0], 0.5).tolist() == [0.5, 0.5]
    assert blend_rerank([0.0, 1.0], [1.0, 0.0], 1.0).tolist() == [0.0, 1.0]
    assert top_k(np.array([0.1, 0.5, 0.5, 0.2]), 3)[0].tolist() == [1, 2, 3]
