"""``ranked_pages``: the pages a method's evidence ranks, whichever kind of evidence it gave."""

from __future__ import annotations

from docgraph.eval.records import ranked_pages
from docgraph.types import Chunk, Entity, Evidence, Mention, ScoredChunk, ScoredEntity, ScoredPage


def chunk(doc: str, page: int, score: float) -> ScoredChunk:
    return ScoredChunk(
        chunk=Chunk(id=f"{doc}:{page}", doc_id=doc, page=page, component_ids=["P1"], text="x"), score=score
    )


def entity(name: str, pages: list[int], score: float) -> ScoredEntity:
    mentions = [Mention(doc_id="d", page=p, component_ids=["P1"]) for p in pages]
    return ScoredEntity(entity=Entity(id=name, name=name, type="thing", mentions=mentions), score=score)


def keys(evidence: Evidence) -> list[tuple[str, int, float]]:
    return [(p.doc_id, p.page, p.score) for p in ranked_pages(evidence)]


def test_ranked_pages_are_the_evidence_pages_when_given():
    pages = [ScoredPage(doc_id="d", page=3, score=0.9)]
    evidence = Evidence(query="q", method="m", pages=pages, chunks=[chunk("d", 1, 1.0)])
    assert keys(evidence) == [("d", 3, 0.9)]


def test_ranked_pages_fall_back_to_chunk_pages_without_repeats():
    evidence = Evidence(
        query="q",
        method="m",
        chunks=[chunk("d", 2, 0.8), chunk("d", 2, 0.7), chunk("e", 1, 0.5)],
        entities=[entity("A", [9], 1.0)],
    )
    assert keys(evidence) == [("d", 2, 0.8), ("e", 1, 0.5)]


def test_ranked_pages_fall_back_to_entity_mentions_without_chunks():
    # the chunk loop and the entity loop once shared one variable (a ScoredChunk, then a
    # ScoredEntity); each entity's mentions are ranked at that entity's score
    evidence = Evidence(query="q", method="m", entities=[entity("A", [4, 2], 0.9), entity("B", [2, 5], 0.4)])
    assert keys(evidence) == [("d", 4, 0.9), ("d", 2, 0.9), ("d", 5, 0.4)]
