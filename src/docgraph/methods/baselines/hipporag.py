"""``hipporag``: text-only graph RAG in the style of HippoRAG 2 (OpenIE triples + PPR).

Build, per document: its chunks are the passages; each passage yields triples and
phrases — from the build model through ``prompts/openie.md`` when one is configured
(a chunk whose reply stays unusable falls back to the offline NLP, counted in the build
stats), else from the offline NLP (SVO triples and named entities). Stored: the extraction per
chunk (``hipporag.openie``), fact vectors (``hipporag.fact``: "subject predicate object"),
phrase vectors (``hipporag.phrase``) and passage vectors (``hipporag.passage``), all
owned by the document. The graph itself (``hipporag_graph``) is assembled from these in
memory on first query and reused until the index changes.

Query: distinct facts ranked by cosine to the query; the top ``fact_top_k`` (filtered by
the answer model through ``prompts/fact_filter.md`` when one is configured — HippoRAG
2's recognition memory; offline a lexical filter) seed PPR through their phrases, the best
``dense_prior_top`` passages get a reset weight from their dense score (``passage_node_weight``,
or ``offline_passage_node_weight`` behind the lexical filter), and passages are ranked by
PPR. With no matched fact the ranking is the dense one (as HippoRAG 2 falls back). Then
the second hop (``bridged_pages``, docgraph's departure; ``bridge_every`` 0 turns it off):
pages sharing the best page's names take every ``bridge_every``-th slot of the page list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from ...errors import ModelError, ModelOutputError
from ...graph.bridges import second_hop
from ...graph.ppr import personalization_vector, walk_from
from ...models.base import user
from ...models.usage import embedding_stage
from ...prompts import material, render_prompt
from ...scoring import ranked, top_k
from ...types import (
    Chunk,
    Document,
    Entity,
    Evidence,
    Mention,
    Relation,
    ScoredChunk,
    ScoredEntity,
    ScoredPage,
    ScoredRelation,
)
from ..base import MethodContext, not_built, register
from ..building.chunking import chunk_context
from ..building.embed_blocks import embed_in_blocks
from ..retrieval.chunk_vectors import vector_model
from ..retrieval.vector_index import delete_vectors, load_index, write_vectors
from .common import ChunkBaseline, cached, embed_chunks, evidence_from_ranking, ranked_chunks
from .hipporag_graph import (
    HippoGraph,
    PassageExtraction,
    PassageTable,
    assemble_graph,
    by_position,
    clean_extraction,
    lexical_recognition,
    seed_weights,
)
from .settings import BaselineSettings, baseline_settings

OPENIE_NS, FACT_NS, PHRASE_NS, PASSAGE_NS = ("hipporag.openie", "hipporag.fact", "hipporag.phrase", "hipporag.passage")


OFFLINE_BLOCK = 64  # chunks per offline OpenIE call (the progress line moves between them)


class OpenIETriple(BaseModel):
    subject: str
    predicate: str
    object: str


class OpenIEResult(BaseModel):
    entities: list[str] = Field(default_factory=list)
    triples: list[OpenIETriple] = Field(default_factory=list)


class FactSelection(BaseModel):
    keep: list[int] = Field(default_factory=list)


def fact_text(triple: tuple[str, str, str]) -> str:
    s, p, o = triple
    return f"{s} {p.replace('_', ' ')} {o}"


class HippoSearch(NamedTuple):
    """One query's search: ``ranking`` (lazy ``(chunk position, score)``, best first), the seed
    ``seeds`` (fact, score, chunk id), the ``graph`` and its ``table``, the walk's node ``scores``
    (None when the dense ranking stood in) and the passages' ``dense`` scores by chunk position."""

    ranking: Iterable[tuple[int, float]]
    seeds: list[tuple[tuple[str, str, str], float, str]]
    graph: HippoGraph
    table: PassageTable
    scores: np.ndarray | None
    dense: np.ndarray


def bridged_pages(
    evidence: Evidence, query: str, chunks: list[Chunk], found: HippoSearch, settings: BaselineSettings
) -> None:
    """The second hop (``graph.bridges.second_hop``) over the pages' phrases, in place: pages
    sharing the best page's rarer phrases (raised where the best page names their heading,
    ``name_links``) take every ``bridge_every``-th slot of ``evidence.pages``, ordered by that
    times their dense score relative to the best (the walk's masses are too peaked to say
    whether a page still concerns the question; the dense scores rank the hop better on
    HotpotQA, docs/results); each page the hop moves up brings its best chunk into
    ``evidence.chunks``. Nothing changes with ``bridge_every`` < 2."""
    hp, table = settings.hipporag, found.table
    if hp.bridge_every < 2 or table.bridges is None or not evidence.pages:
        return
    top = [(table.page_at[(p.doc_id, p.page)], p.score) for p in evidence.pages if (p.doc_id, p.page) in table.page_at]
    names = table.names if hp.name_links > 0 and table.names is not None and len(table.names) else None
    boost: Callable[[list[int], np.ndarray], np.ndarray] | None = None
    if names is not None:
        links = names

        def boost(seeds: list[int], weights: np.ndarray) -> np.ndarray:
            return 1.0 + hp.name_links * links.scores(seeds, weights.tolist(), query)

    merged = second_hop(
        top,
        table.bridges,
        query,
        every=hp.bridge_every,
        seeds=hp.bridge_seeds,
        k=settings.top_pages,
        page_scores=table.page_scores(found.dense),
        boost=boost,
    )
    if merged == top[: settings.top_pages]:
        return
    evidence.pages = [
        ScoredPage(doc_id=table.pages[row][0], page=table.pages[row][1], score=score) for row, score in merged
    ]
    was_at = {row: i for i, (row, _) in enumerate(top)}
    for at, (row, score) in enumerate(merged):
        if at < was_at.get(row, len(top)):  # moved up: placed by the hop
            on_page = np.flatnonzero(table.chunk_page == row)
            best = int(on_page[np.argmax(found.dense[on_page])])
            if all(c.chunk.id != chunks[best].id for c in evidence.chunks):
                evidence.chunks.append(ScoredChunk(chunk=chunks[best], score=score))


@register("hipporag")
class HippoRAGBaseline(ChunkBaseline):
    name = "hipporag"
    label = "HippoRAG (baseline)"
    order = 14

    def index_version(self, settings: BaselineSettings) -> str:
        return f"chunks{settings.chunk_words}-phrase{settings.hipporag.max_phrase_words}"

    def chunk_vector_namespaces(self) -> tuple[str, ...]:
        return (PASSAGE_NS,)

    # ------------------------------------------------------------------ build
    def _extract(self, ctx: MethodContext, chunks: list[Chunk]) -> tuple[list[tuple[list, list[str]]], int]:
        """(triples, entities) per chunk — from the build model (calls in parallel up to its
        concurrency limit) or the offline NLP — and how many chunks fell back to the offline
        NLP because the model's reply stayed unusable."""
        chat = ctx.models.chat("build")
        if chat is None:
            return self._offline(ctx, chunks), 0

        def one(chunk: Chunk) -> tuple[list, list[str]] | None:
            prompt = render_prompt(
                __package__,
                "openie.md",
                passage=material(chunk.text),
                context=material(chunk_context(chunk) or chunk.doc_id),
            )
            try:
                parsed = chat.complete([user(prompt)], stage="hipporag.openie", schema=OpenIEResult).parsed
            except ModelOutputError:
                return None
            result = parsed if isinstance(parsed, OpenIEResult) else OpenIEResult()
            return [(t.subject, t.predicate, t.object) for t in result.triples], result.entities

        workers = max(1, ctx.settings.models.build.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            out = list(pool.map(one, chunks))
        failed = [i for i, item in enumerate(out) if item is None]
        for i, item in zip(failed, self._offline(ctx, [chunks[i] for i in failed])):
            out[i] = item
        return out, len(failed)  # type: ignore[return-value]  # every None was filled by the offline pass

    @staticmethod
    def _offline(ctx: MethodContext, chunks: list[Chunk]) -> list[tuple[list, list[str]]]:
        """Offline OpenIE, ``OFFLINE_BLOCK`` chunks at a time so the progress line moves."""
        analyses = []
        for start in range(0, len(chunks), OFFLINE_BLOCK):
            analyses.extend(ctx.models.nlp.analyze([c.text for c in chunks[start : start + OFFLINE_BLOCK]]))
            ctx.progress.advance(0, openie=f"{min(start + OFFLINE_BLOCK, len(chunks))}/{len(chunks)} chunks")
        return [
            ([(t.subject, t.predicate, t.object) for t in a.triples], [e.text for e in a.entities]) for a in analyses
        ]

    def index_chunks(
        self, ctx: MethodContext, doc: Document, chunks: list[Chunk], settings: BaselineSettings
    ) -> dict[str, Any]:
        if not chunks:
            return {"triples": 0, "phrases": 0, "openie_fallbacks": 0}
        raw, fallbacks = self._extract(ctx, chunks)
        extractions = [
            clean_extraction(c.id, triples, entities, settings.hipporag.max_phrase_words)
            for c, (triples, entities) in zip(chunks, raw)
        ]
        embedder = ctx.models.text_embedder
        fact_keys = [f"{ex.chunk_id}#{i}" for ex in extractions for i in range(len(ex.triples))]
        facts = [fact_text(t) for ex in extractions for t in ex.triples]
        phrases = sorted({p for ex in extractions for p in ex.phrases})
        passage_matrix = embed_chunks(ctx, chunks)
        ctx.store.put_records(
            OPENIE_NS,
            [
                (ex.chunk_id, {"triples": [list(t) for t in ex.triples], "phrases": ex.phrases}, doc.id)
                for ex in extractions
            ],
        )
        write_vectors(
            ctx.store,
            PASSAGE_NS,
            [c.id for c in chunks],
            passage_matrix,
            vector_model(embedder.model, ctx.settings.models.embedding),
            [doc.id] * len(chunks),
        )

        def shown(kind: str) -> Callable[[int, int], None]:
            return lambda done, total: ctx.progress.advance(0, embedded=f"{done}/{total} {kind}")

        if facts:
            with embedding_stage("hipporag facts"):
                write_vectors(
                    ctx.store,
                    FACT_NS,
                    fact_keys,
                    embed_in_blocks(embedder.embed_passages, facts, shown("facts")),
                    embedder.model,
                    [doc.id] * len(facts),
                )
        if phrases:
            with embedding_stage("hipporag phrases"):
                write_vectors(
                    ctx.store,
                    PHRASE_NS,
                    [f"{doc.id}\t{p}" for p in phrases],
                    embed_in_blocks(embedder.embed_passages, phrases, shown("phrases")),
                    embedder.model,
                    [doc.id] * len(phrases),
                )
        return {"triples": len(facts), "phrases": len(phrases), "openie_fallbacks": fallbacks}

    def drop_document(self, ctx: MethodContext, doc_id: str) -> None:
        super().drop_document(ctx, doc_id)
        ctx.store.delete_records(OPENIE_NS, doc_id=doc_id)
        for namespace in (FACT_NS, PHRASE_NS, PASSAGE_NS):
            delete_vectors(ctx.store, namespace, doc_id=doc_id)

    # ------------------------------------------------------------------ query
    def graph(self, ctx: MethodContext, settings: BaselineSettings) -> HippoGraph:
        """The assembled graph (cached until the index or the synonym settings change)."""
        hp = settings.hipporag

        def load() -> HippoGraph:
            extractions = [
                PassageExtraction(key, [tuple(t) for t in value["triples"]], value["phrases"])
                for key, value in ctx.store.iter_records(OPENIE_NS)
            ]
            phrase_index = load_index(ctx.store, PHRASE_NS)
            vectors: dict[str, np.ndarray] = {}
            for key, row in zip(phrase_index.keys, phrase_index.matrix):
                vectors.setdefault(key.split("\t", 1)[1], row)
            return assemble_graph(extractions, vectors, hp.synonym_threshold, hp.synonym_top_k)

        return cached(ctx.store, self.name, f"graph:{hp.synonym_threshold}:{hp.synonym_top_k}", load)

    def _filter_facts(
        self, ctx: MethodContext, query: str, candidates: list[tuple[tuple[str, str, str], float]], limit: int
    ) -> list[tuple[tuple[str, str, str], float]]:
        chat = ctx.models.chat("answer")
        if not candidates:
            return []
        if chat is None:
            return lexical_recognition(query, candidates, limit)
        listing = "\n".join(f"{i}. ({s}, {p.replace('_', ' ')}, {o})" for i, ((s, p, o), _) in enumerate(candidates, 1))
        prompt = render_prompt(__package__, "fact_filter.md", question=query, facts=material(listing), limit=str(limit))
        try:
            parsed = chat.complete([user(prompt)], stage="hipporag.fact_filter", schema=FactSelection).parsed
        except ModelError:  # an unusable filter reply or the endpoint down: keep the similarity ranking
            return candidates[:limit]
        keep = parsed.keep if isinstance(parsed, FactSelection) else []
        return [candidates[i - 1] for i in dict.fromkeys(keep) if 1 <= i <= len(candidates)][:limit]

    def _table(
        self, ctx: MethodContext, settings: BaselineSettings, graph: HippoGraph, chunks: list[Chunk]
    ) -> PassageTable:
        hp = settings.hipporag
        return cached(
            ctx.store,
            self.name,
            f"table:{hp.synonym_threshold}:{hp.synonym_top_k}",
            lambda: PassageTable.build(graph, load_index(ctx.store, PASSAGE_NS).keys, chunks),
        )

    def search(self, ctx: MethodContext, query: str, chunks: list[Chunk], settings: BaselineSettings) -> HippoSearch:
        """The passages ranked for ``query`` (see ``HippoSearch``)."""
        hp = settings.hipporag
        graph = self.graph(ctx, settings)
        table = self._table(ctx, settings, graph, chunks)
        q = ctx.models.text_embedder.embed_queries([query])[0]
        dense = load_index(ctx.store, PASSAGE_NS).scores(q).astype(np.float64)
        passage_scores = (
            np.where(table.node_row >= 0, dense[np.maximum(table.node_row, 0)], 0.0)
            if len(dense)
            else np.zeros(len(table.node_row))
        )
        fact_index = load_index(ctx.store, FACT_NS)
        candidates: list[tuple[tuple[str, str, str], float, str]] = []
        seen: set[tuple[str, str, str]] = set()
        for row, score in ranked(fact_index.scores(q)) if len(fact_index) else []:
            cid, _, n = fact_index.keys[row].rpartition("#")
            triples = table.by_chunk.get(cid, [])
            if n.isdigit() and int(n) < len(triples) and triples[int(n)] not in seen:
                seen.add(triples[int(n)])  # a fact stated in several passages counts once
                candidates.append((triples[int(n)], score, cid))
                if len(candidates) >= hp.fact_top_k:
                    break
        dense_at = by_position(dense, table.row_chunk, len(chunks))
        kept = self._filter_facts(ctx, query, [(t, s) for t, s, _ in candidates], hp.fact_top_k)
        kept_set = {t for t, _ in kept}
        seeds = [(t, s, c) for t, s, c in candidates if t in kept_set][: hp.fact_top_k]
        if not seeds or graph.adjacency.shape[0] == 0:
            return HippoSearch(ranked_chunks(dense, table.row_chunk), seeds, graph, table, None, dense_at)
        weight = hp.passage_node_weight if ctx.models.chat("answer") is not None else hp.offline_passage_node_weight
        reset = seed_weights(graph, [(t, s) for t, s, _ in seeds], passage_scores, weight, hp.dense_prior_top)
        scores = walk_from(
            graph,
            personalization_vector(reset),
            alpha=hp.restart,  # the walk made once
            local_above=hp.local_walk_edges,
            eps=hp.local_walk_eps,
            per_edge=True,
        )
        return HippoSearch(
            ranked_chunks(scores[graph.n_phrases :], table.node_chunk), seeds, graph, table, scores, dense_at
        )

    def rank(
        self, ctx: MethodContext, query: str, chunks: list[Chunk], settings: BaselineSettings
    ) -> Iterable[tuple[int, float]]:
        return self.search(ctx, query, chunks, settings).ranking

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        started = time.perf_counter()
        settings = baseline_settings(ctx, options, self.name)
        chunks = self.chunks(ctx)
        if not chunks:
            raise not_built(ctx, self.name)
        found = self.search(ctx, query, chunks, settings)
        seeds, graph, scores, chunk_at = found.seeds, found.graph, found.scores, found.table.chunk_at
        evidence = evidence_from_ranking(query, self.name, ((chunks[i], s) for i, s in found.ranking), settings)
        bridged_pages(evidence, query, chunks, found, settings)
        for n, (triple, score, cid) in enumerate(seeds):
            chunk = chunks[chunk_at[cid]] if cid in chunk_at else None
            mentions = (
                [Mention(doc_id=chunk.doc_id, page=chunk.page, component_ids=chunk.component_ids)] if chunk else []
            )
            relation = Relation(
                id=f"{cid}#fact{n}", source=triple[0], target=triple[2], label=triple[1], mentions=mentions
            )
            evidence.relations.append(
                ScoredRelation(relation=relation, score=score, source_name=triple[0], target_name=triple[2])
            )
        if scores is not None:
            rows, values = top_k(scores[: graph.n_phrases], settings.top_k)
            evidence.entities = [
                ScoredEntity(
                    entity=Entity(id=f"phrase:{graph.nodes.id(i)}", name=graph.nodes.id(i), type="phrase"),
                    score=float(v),
                )
                for i, v in zip(rows.tolist(), values)
                if v > 0
            ]
        evidence.mode = "ppr" if scores is not None else "dense_fallback"
        evidence.timings["retrieve"] = time.perf_counter() - started
        return evidence
