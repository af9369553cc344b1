"""Cross-page connection (pure): candidates on other pages, merging, redirection, related edges,
and the offline judge's rules."""

from __future__ import annotations

import zlib

import numpy as np

from docgraph.methods.kg4vd.canonical import GraphInMemory
from docgraph.methods.kg4vd.crosspage import candidate_pairs, connect
from docgraph.methods.kg4vd.judge import OfflineJudge, Verdict
from docgraph.methods.kg4vd.patch import Edge, Node, PageGraph
from docgraph.methods.kg4vd.storage import StoredPageGraph
from docgraph.types import Entity, Mention, Usage

DOC = "doc1"


def page(number: int, nodes: list[tuple[str, str, str]], edges: list[tuple[str, str, str]] = ()) -> StoredPageGraph:
    graph = PageGraph(
        nodes=[Node(id=i, name=n, type=t, component_ids=["P1"]) for i, n, t in nodes],
        edges=[
            Edge(id=f"r{k}", source=s, target=d, label=lbl, component_ids=["P1"])
            for k, (s, d, lbl) in enumerate(edges, start=1)
        ],
    )
    return StoredPageGraph.from_graph(DOC, number, graph)


class NameJudge:
    """same for equal last words, related for names listed in ``related``."""

    name = "test"

    def __init__(self, related: set[frozenset[str]] = frozenset()):
        self.related = related
        self.calls: list[tuple[str, list[str]]] = []

    def judge(self, anchor, candidates):
        self.calls.append((anchor.id, [c.id for c, _ in candidates]))
        out = []
        for cand, _ in candidates:
            a, b = anchor.entity.name, cand.entity.name
            if a.split()[-1] == b.split()[-1]:
                out.append(Verdict("same", "same surname"))
            elif frozenset((a, b)) in self.related:
                out.append(Verdict("related", "trade partners"))
            else:
                out.append(Verdict("unrelated"))
        return out, Usage(calls=1)


def embed_by_name(entities):
    """Deterministic vectors: entities sharing a last word point the same way."""
    rows = []
    for e in entities:
        rng = np.random.default_rng(zlib.crc32(e.name.split()[-1].encode()))
        v = rng.normal(size=16) + 0.01 * np.arange(16) * len(e.name)
        rows.append(v / np.linalg.norm(v))
    return np.array(rows, dtype=np.float32)


PAGES = [
    page(1, [("e1", "Genghis Khan", "person"), ("e2", "Mongol Empire", "organization")], [("e1", "e2", "founded")]),
    page(
        2,
        [("e1", "Temujin Khan", "person"), ("e2", "Mongol Empire", "organization"), ("e3", "Silk Road", "location")],
        [("e1", "e2", "founded"), ("e2", "e3", "controlled")],
    ),
    page(3, [("e1", "Venice", "location"), ("e2", "Marco Polo", "person")], [("e2", "e1", "born_in")]),
]


def run(graphs, existing_entities=None, existing_relations=None, judge=None, top_k=10):
    return connect(
        graphs,
        GraphInMemory(existing_entities, existing_relations),
        embed=embed_by_name,
        existing_vectors=lambda _id: None,
        judge=judge,
        top_k=top_k,
    )


def test_candidates_are_on_other_pages_and_each_pair_once():
    graphs_entities = [e.model_copy(update={"id": g.instance_id(e.id)}) for g in PAGES for e in g.entities]
    vectors = embed_by_name(graphs_entities)
    pairs, below = candidate_pairs(graphs_entities, vectors, graphs_entities, vectors, top_k=3)
    assert below == 0
    seen = set()
    for i, candidates in pairs:
        assert len(candidates) <= 3
        sims = [s for _, s in candidates]
        assert sims == sorted(sims, reverse=True)
        for j, _ in candidates:
            a, b = graphs_entities[i], graphs_entities[j]
            assert a.mentions[0].page != b.mentions[0].page
            assert frozenset((a.id, b.id)) not in seen
            seen.add(frozenset((a.id, b.id)))


def test_same_merges_redirects_and_drops_duplicate_edges_related_links():
    judge = NameJudge(related={frozenset(("Silk Road", "Venice"))})
    result = run(PAGES, judge=judge)
    assert result.verdicts["same"] == 2  # the two Khans, the two Mongol Empires
    khan = result.entities["doc1:1:e1"]
    assert khan.name == "Genghis Khan" and khan.aliases == ["Temujin Khan"]
    assert [(m.page, m.component_ids) for m in khan.mentions] == [(1, ["P1"]), (2, ["P1"])]
    assert result.canonical["doc1:2:e1"] == "doc1:1:e1" and result.canonical["doc1:2:e2"] == "doc1:1:e2"
    assert len(result.entities) == 5
    founded = [r for r in result.relations.values() if r.label == "founded"]
    assert len(founded) == 1  # the two 'founded' edges collapsed into one with both mentions
    assert (founded[0].source, founded[0].target) == ("doc1:1:e1", "doc1:1:e2")
    assert [m.page for m in founded[0].mentions] == [1, 2]
    controlled = next(r for r in result.relations.values() if r.label == "controlled")
    assert controlled.source == "doc1:1:e2"  # redirected to the canonical Mongol Empire
    (related,) = [r for r in result.relations.values() if r.cross_page]
    assert (related.label, {related.source, related.target}) == ("related_to", {"doc1:2:e3", "doc1:3:e1"})
    assert {m.page for m in related.mentions} == {2, 3} and related.description == "trade partners"
    assert not result.deleted_entities and not result.deleted_relations


def test_without_a_judge_nothing_is_merged():
    result = run(PAGES, judge=None)
    assert len(result.entities) == 7 and not any(r.cross_page for r in result.relations.values())
    assert len(result.relations) == 4


def test_new_pages_join_existing_canonical_entities():
    first = run(PAGES[:2], judge=NameJudge())
    existing_e, existing_r = first.entities, first.relations
    later = page(
        7, [("e1", "Kublai Khan", "person"), ("e2", "Mongol Empire", "organization")], [("e1", "e2", "founded")]
    )
    result = run([later], existing_e, existing_r, judge=NameJudge())
    # existing canonical ids win; the later page's mentions join them
    assert result.canonical == {"doc1:7:e1": "doc1:1:e1", "doc1:7:e2": "doc1:1:e2"}
    assert [m.page for m in result.entities["doc1:1:e1"].mentions] == [1, 2, 7]
    assert "Kublai Khan" in result.entities["doc1:1:e1"].aliases
    founded = [r for r in result.relations.values() if r.label == "founded"]
    assert len(founded) == 1 and founded[0].id in existing_r and [m.page for m in founded[0].mentions] == [1, 2, 7]


def test_merging_two_existing_entities_deletes_the_absorbed_one():
    existing = {
        "a": Entity(
            id="a", name="Marco Polo", type="person", mentions=[Mention(doc_id=DOC, page=1, component_ids=["P1"])]
        ),
        "b": Entity(id="b", name="Polo", type="person", mentions=[Mention(doc_id=DOC, page=2, component_ids=["P1"])]),
    }
    bridge = page(5, [("e1", "Maffeo Polo", "person")])
    result = run([bridge], existing, {}, judge=NameJudge())
    assert result.deleted_entities == ["b"] and set(result.entities) == {"a"}
    assert [m.page for m in result.entities["a"].mentions] == [1, 2, 5]


def entity(name, type_="person", modality="text", doc=DOC, page_no=1, description=""):
    return Entity(
        id=f"{doc}:{page_no}:{name}",
        name=name,
        type=type_,
        modality=modality,
        description=description,
        mentions=[Mention(doc_id=doc, page=page_no, component_ids=["P1"])],
    )


def test_offline_judge_rules():
    judge = OfflineJudge(same_threshold=0.92, related_threshold=0.85, structural_types=["section"])
    v = judge.verdict
    assert v(entity("The Silk Road", "location"), entity("silk road", "event"), 0.1).label == "same"  # names
    assert v(entity("Lynch"), entity("Ryan J. Lynch"), 0.95).label == "same"  # containment + cosine
    assert v(entity("Lynch"), entity("Ryan J. Lynch"), 0.90).label == "related"  # below 'same' cosine
    assert v(entity("Kordas"), entity("Ryan J. Lynch"), 0.99).label == "unrelated"  # no shared words
    assert (
        v(entity("Kordas"), entity("Temple University", "organization", description="Kordas studied here"), 0.86).label
        == "related"
    )  # named in the other's description
    assert v(entity("Venice"), entity("Venice", modality="visual", type_="figure_panel"), 0.99).label != "same"
    # headings and figures merge by name only within one document
    assert v(entity("Introduction", "section"), entity("Introduction", "section", page_no=9), 0.5).label == "same"
    assert v(entity("Introduction", "section"), entity("Introduction", "section", doc="doc2"), 0.5).label == "unrelated"
    assert v(entity("Key Terms", "section"), entity("Terms", "section", page_no=2), 0.99).label == "related"
    assert v(entity("Columbus State University"), entity("Mount Mary University"), 0.99).label == "unrelated"
    # a value is the same only by its exact name: "year" joins neither "two-year" nor "four-year"
    assert v(entity("year", "date"), entity("four-year", "date", page_no=2), 0.99).label == "related"
    assert v(entity("2020", "date"), entity("2020", "date", page_no=2), 0.5).label == "same"
    # a common noun inside a longer phrase names a narrower thing, a proper name the same one
    assert v(entity("network", "concept"), entity("neural network", "concept", page_no=2), 0.99).label == "related"
    assert v(entity("Lynch"), entity("Ryan J. Lynch", page_no=2), 0.99).label == "same"


def test_offline_judge_caps_related_verdicts_per_anchor_most_similar_first():
    from docgraph.methods.kg4vd.judge import JudgeItem

    judge = OfflineJudge(same_threshold=0.92, related_threshold=0.85, max_related=1)
    anchor = JudgeItem("a", entity("Silk Road trade"))
    cands = [
        (JudgeItem("b", entity("Silk Road cities", page_no=2)), 0.86),
        (JudgeItem("c", entity("Silk Road caravans", page_no=3)), 0.91),
        (JudgeItem("d", entity("Venice", page_no=4)), 0.99),
    ]
    verdicts, _ = judge.judge(anchor, cands)
    assert [v.label for v in verdicts] == ["unrelated", "related", "unrelated"]
