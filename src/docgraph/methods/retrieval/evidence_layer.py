"""The structural evidence layer of a method's chunks, and page ranking through it.

``EvidenceLayer.build(chunks, vectors, settings)`` turns a method's chunks (with their
vectors) into a ``HybridIndex`` and a ``graph.structure.StructureGraph`` (pages, chunks,
containment, reading order, sections, captions, similarity links, cross-references). ``rank_pages`` then
scores every page of the corpus for a query:

1. **flat**: reciprocal-rank fusion of the page ranked by its best hybrid chunk
   (``methods.retrieval.hybrid``), by BM25 over the whole page (weight ``page_sparse``, off by default; a question whose
   terms are spread over a page), by a page vector when the caller has a real one, and
   by the question's explicit references ("figure 3", "Chapter 14", "slide 14": ``references``,
   ``methods.retrieval.references``; and, through a lexicon, ``methods.retrieval.lexicon``, the statements a
   question's derived measures are computed from, ``measures``, whose input line items also
   join the BM25 terms, and each document's first page for a question about the document
   itself, ``front_matter``), and, when the question names a kind of element ("how many
   charts…", "which table…"), by the page's best chunk of that modality (weight
   ``element_intent``: the layout's component kinds as a constraint text cannot express);
2. **seeds**: the ``seed_chunks`` best chunks by the ``seeds`` signal (hybrid, or dense
   for the ablation), weighted by that score, mixed with the method's own graph seeds
   (entity PPR mass or concept evidence projected onto the chunks they are grounded in;
   share ``graph_seed_share``);
3. **diffused**: Personalized PageRank from those seeds over the layer (restart ``restart``);
4. **final** = ``flat_weight`` · mm(flat) + (1 − ``flat_weight``) · mm(diffused).

With ``structure = false`` the final score is the flat one. Every page of the corpus is
ranked, so callers can always fill a page budget. ``with_bridges`` then merges the second
hop into a method's final page list: pages sharing the top page's rarer entities of the
method's graph (``graph.bridges``) take every ``bridge_every``-th slot.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...config import RetrievalSettings
from ...graph.bridges import EntityBridges, second_hop
from ...graph.name_links import NameLinks
from ...graph.structure import ChunkLayout, StructureGraph, build_structure, diffuse
from ...models.bm25 import BM25, tokenize
from ...scoring import minmax, top_k
from ...types import Chunk, PageKey, RoutedDocument
from ..building.chunking import chunk_context
from .document_nodes import DocumentNodes
from .hybrid import HybridIndex, group_max, rank_fusion, ranks
from .lexicon import COVER, lexicon
from .question import read_question
from .references import LabelIndex, later_runs, query_references
from .routing import DocumentRouter, PageDocuments, page_weights
from .turns import take_turns

_CAPTION = re.compile(r"^C\d+$")
_NUMBER = re.compile(r"(\d+)$")


def indexed_text(chunk: Chunk) -> str:
    """What a chunk is indexed by (BM25 and vectors): its section context line, then its text."""
    context = chunk_context(chunk)
    return f"{context}\n{chunk.text}" if context else chunk.text


def section_headings(chunks: Sequence[Chunk], chunk_page: np.ndarray) -> list[tuple[int, str]]:
    """``(page row, heading)`` of every section: its heading (the last entry of its section
    path) on the page of its first chunk; ``chunks`` in reading order."""
    first: dict[tuple, int] = {}
    for row, chunk in enumerate(chunks):
        if chunk.section_path:
            first.setdefault((chunk.doc_id, tuple(chunk.section_path)), int(chunk_page[row]))
    return [(page, path[-1]) for (_, path), page in first.items()]


def _component_number(component_id: str) -> int:
    match = _NUMBER.search(component_id)
    return int(match.group(1)) if match else 0


def reading_order(chunks: Sequence[Chunk]) -> list[int]:
    """Positions of ``chunks`` sorted by document, page, then their given order (a page's
    chunks keep the order they were made in; chunks loaded by key fall back to the number
    of their first component)."""
    return sorted(
        range(len(chunks)),
        key=lambda i: (
            chunks[i].doc_id,
            chunks[i].page,
            _component_number(chunks[i].component_ids[0]) if chunks[i].component_ids else 0,
            i,
        ),
    )


@dataclass
class PageRanking:
    """Scores of every page of the layer (aligned with ``pages``)."""

    pages: list[PageKey]
    flat: np.ndarray
    diffused: np.ndarray
    final: np.ndarray
    chunk_scores: np.ndarray  # fused score per chunk row
    routing: np.ndarray | None = None  # per page: its document's routing weight (None: no routing)
    routed: list[RoutedDocument] = field(default_factory=list)  # the documents the question named (Route.explain)
    parties: list[list[str]] = field(default_factory=list)  # the parties it compares, each its documents (Route)

    def routing_of(self, pages: Sequence[PageKey], position: Mapping[PageKey, int]) -> np.ndarray:
        """The routing weight of each of ``pages`` (1 without routing or for an unknown page),
        for a later stage that rescored them (a reranker) to weigh its own scores alike."""
        if self.routing is None:
            return np.ones(len(pages))
        return np.array([self.routing[position[p]] if p in position else 1.0 for p in pages], dtype=np.float64)

    def top(self, k: int | None = None) -> list[tuple[PageKey, float]]:
        """The ``k`` best pages (all when None), best first, ties by position."""
        order = np.lexsort((np.arange(len(self.final)), -self.final)) if k is None else top_k(self.final, k)[0]
        return [(self.pages[i], float(self.final[i])) for i in order]


@dataclass
class EvidenceLayer:
    chunks: list[Chunk]  # in reading order (rows of every array here)
    source_rows: np.ndarray  # row r is chunk source_rows[r] of the list given to build
    pages: list[PageKey]
    page_position: dict[PageKey, int]
    chunk_page: np.ndarray
    hybrid: HybridIndex
    graph: StructureGraph
    component_chunk: dict[tuple[str, int, str], int]
    page_bm25: BM25  # BM25 over whole pages (their chunks' indexed texts)
    labels: LabelIndex
    modality: np.ndarray  # per chunk row: "text", "table" or "image"
    printed: dict[str, dict[int, int]]  # per document: file page → printed page number, where they differ
    names: NameLinks  # pages naming other pages' headings (the second hop's name links)
    page_documents: PageDocuments  # each page's document, as routing reads it
    documents: DocumentNodes  # one node per document, its whole text (routing by content)

    @classmethod
    def build(
        cls,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        settings: RetrievalSettings,
        extra_pages: Sequence[PageKey] = (),
        printed: Mapping[str, Mapping[int, int]] | None = None,
        parts: Mapping[str, Sequence[int]] | None = None,
    ) -> EvidenceLayer:
        """The layer of ``chunks`` (rows of ``vectors`` aligned with them); ``extra_pages``
        adds pages without chunks so that they are ranked too; ``printed`` gives the
        documents' printed page numbers (``documents.page_numbers``) so that "page 2" also
        finds the page printed 2; ``parts`` the documents' part starts (``documents.parts``),
        the nodes routing by content chooses between."""
        order = reading_order(chunks)
        chunks = [chunks[i] for i in order]
        vectors = np.asarray(vectors, dtype=np.float32)[order] if len(order) else np.zeros((0, 1), np.float32)
        pages = sorted({(c.doc_id, c.page) for c in chunks} | set(extra_pages))
        page_position = {p: i for i, p in enumerate(pages)}
        chunk_page = np.array([page_position[(c.doc_id, c.page)] for c in chunks], dtype=np.int64)
        docs = {d: i for i, d in enumerate(sorted({p[0] for p in pages}))}
        sections: dict[tuple, int] = {}
        section = np.array(
            [
                sections.setdefault((c.doc_id, tuple(c.section_path)), len(sections)) if c.section_path else -1
                for c in chunks
            ],
            dtype=np.int64,
        )
        layout = ChunkLayout(
            doc=np.array([docs[c.doc_id] for c in chunks], dtype=np.int64),
            page=chunk_page,
            section=section,
            caption=np.array([any(_CAPTION.match(cid) for cid in c.component_ids) for c in chunks], dtype=bool),
            visual=np.array([c.modality != "text" for c in chunks], dtype=bool),
            page_doc=np.array([docs[d] for d, _ in pages], dtype=np.int64),
            page_number=np.array([n for _, n in pages], dtype=np.int64),
        )
        labels = LabelIndex.build(chunks, lexicon(tuple(settings.lexicons)).heading_label)
        graph = build_structure(
            layout,
            settings.edges,
            vectors if len(vectors) else None,
            similar_top_k=settings.similar_top_k,
            similar_threshold=settings.similar_threshold,
            refers=labels.cross_references(layout.doc, chunk_page),
        )
        component_chunk = {(c.doc_id, c.page, cid): row for row, c in enumerate(chunks) for cid in c.component_ids}
        texts = [indexed_text(c) for c in chunks]
        page_texts: list[list[str]] = [[] for _ in pages]
        for row, text in enumerate(texts):
            page_texts[chunk_page[row]].append(text)
        page_tokens = [tokenize("\n".join(t)) for t in page_texts]
        body_texts: list[list[str]] = [[] for _ in pages]
        for row, chunk in enumerate(chunks):
            body_texts[chunk_page[row]].append(chunk.text)
        page_documents = PageDocuments.of([d for d, _ in pages])
        return cls(
            chunks=chunks,
            source_rows=np.asarray(order, dtype=np.int64),
            pages=pages,
            page_position=page_position,
            chunk_page=chunk_page,
            hybrid=HybridIndex.build(texts, vectors),
            graph=graph,
            component_chunk=component_chunk,
            page_bm25=BM25(page_tokens),
            labels=labels,
            modality=np.array([c.modality for c in chunks], dtype=object),
            printed={doc: dict(numbers) for doc, numbers in (printed or {}).items() if numbers},
            names=NameLinks.build(len(pages), section_headings(chunks, chunk_page), ["\n".join(t) for t in body_texts]),
            documents=DocumentNodes.build(pages, page_tokens, parts),
            page_documents=page_documents,
        )

    def flat(
        self,
        query: str,
        qvec: np.ndarray,
        settings: RetrievalSettings,
        page_dense: np.ndarray | None = None,
        documents: DocumentRouter | None = None,
        scope: Collection[str] | None = None,
    ) -> PageRanking:
        """Flat scores only: every page as its best fused chunk; ``page_dense`` (one cosine
        per page, e.g. a page-image vector) is rank-fused in when given. With ``documents`` (a
        library's router, ``methods.retrieval.routing``) every signal of a page is weighed by its
        document's routing weight before the lists are fused, and when the question names
        documents by name its explicit references (a figure, a statement, the cover) point
        into those documents only. The fused page scores are then weighed by how well each
        page's document (or part of one) holds the question's words
        (``document_nodes``, ``route_by_content``): between documents when the question names
        none by name (a kind alone, "the slides", leaves the choice to them), between the parts
        of each document when it does. ``scope`` (document ids) keeps those documents' pages
        only: the others weigh 0 in every later stage too, as routing weights do. The ranking
        carries the documents the question named (``routed``; none when ``scope`` chose)."""
        n_pages = len(self.pages)
        reading = read_question(query, settings)
        fused = self.hybrid.scores(reading.sparse_terms, qvec, settings)
        if not n_pages:
            return PageRanking(self.pages, np.zeros(0), np.zeros(0), np.zeros(0), fused)
        route = documents.route(query) if documents is not None and settings.route_floor < 1.0 else None
        routing = page_weights(route, settings.route_floor, self.page_documents)
        about = None  # by content, after fusion: between documents, or the named ones' parts
        if settings.route_by_content:
            named = route is not None and route.by_name
            about = self.documents.page_weights(reading.tokens, settings.route_floor, within_documents=named)
        if scope is not None:
            inside = self.page_documents.within(scope)
            routing = inside if routing is None else routing * inside
        if routing is not None and len(self.chunks):
            fused = fused * routing[self.chunk_page]  # per chunk: its page's weight
        lists = [(group_max(self.chunk_page, fused, n_pages), False, 1.0)] if len(self.chunks) else []
        if page_dense is not None:
            lists.append((_weighed(np.asarray(page_dense, dtype=np.float64), routing), False, 1.0))
        if settings.page_sparse > 0 and len(self.chunks):
            lists.append((_weighed(self.page_bm25.scores(reading.sparse_terms), routing), True, settings.page_sparse))
        if settings.element_intent > 0 and len(self.chunks):
            asked = np.isin(self.modality, reading.modalities)
            if asked.any():  # pages without such an element get nothing from this list
                lists.append(
                    (group_max(self.chunk_page[asked], fused[asked] + 1e-9, n_pages), True, settings.element_intent)
                )
        flat = rank_fusion(lists, settings.rrf_k, n_pages)
        if settings.references:
            referenced = _weighed(
                self.referenced_pages(query, reading.labels, content=flat, references=reading.references),
                routing * self.page_documents.within(route.named()) if route is not None and route.by_name else routing,
            )
            if referenced.any():
                flat = flat + 1.0 / (settings.rrf_k + ranks(referenced, referenced > 0))
        if about is not None:
            routing = about if routing is None else routing * about
        flat = _weighed(minmax(flat), routing)
        routed = route.explain(settings.route_floor) if route is not None and scope is None else []
        parties = route.parties if route is not None and route.comparing and settings.party_turns else []
        return PageRanking(self.pages, flat, np.zeros(n_pages), flat, fused, routing, routed, parties)

    def referenced_pages(
        self,
        query: str,
        named: Sequence[tuple[str, str]] = (),
        content: np.ndarray | None = None,
        references: Sequence[tuple[str, str]] | None = None,
    ) -> np.ndarray:
        """Per page: how strongly the question's explicit references point at it (0: not at all;
        ``methods.retrieval.references``) — the page a referenced figure/table is on, or page/slide N of
        each document; earlier references weigh more. In a document that prints page numbers
        other than the file's, "page N" is first the page printed N (what the reader sees),
        then, at half the weight, the file's N-th page (what a PDF viewer counts). ``named``
        are further labels after the question's own (``methods.retrieval.lexicon``: statements, and
        ``COVER``, the first page of each document: with several documents, ``content``, the
        pages' own scores, orders their covers, the best at the full weight, the least at half).
        ``references``: the question's own labels when already read (``question.read_question``)."""
        out = np.zeros(len(self.pages))
        own = query_references(query) if references is None else references
        for i, (kind, number) in enumerate([*own, *named]):
            weight = 1.0 / (1 + i)
            if (kind, number) == COVER:
                covers = np.array(self.first_pages(), dtype=np.int64)
                share = minmax(content[covers]) if content is not None and len(covers) > 1 else np.ones(len(covers))
                out[covers] = np.maximum(out[covers], weight * (0.5 + 0.5 * share))
            elif kind == "page":
                if "." in number:
                    continue
                for p, (doc, n) in enumerate(self.pages):
                    printed = self.printed.get(doc)
                    if printed and printed.get(n) == int(number):
                        out[p] = max(out[p], weight)
                    elif n == int(number):
                        out[p] = max(out[p], weight / 2 if printed else weight)
            else:
                at = sorted({int(self.chunk_page[row]) for row in self.labels.rows((kind, number))})
                parts = self.documents.codes  # a document's part (a filing packed with others: its own)
                later = later_runs([(int(parts[p]), self.pages[p][1]) for p in at]) if kind == "statement" else set()
                for page in (page for n, page in enumerate(at) if n not in later):  # the primary statement only
                    out[page] = max(out[page], weight)
        return out

    def first_pages(self) -> list[int]:
        """Positions of the first page of each document of several pages (pages are sorted by
        document, then number); a one-page document, a passage, has no cover apart from itself."""
        pages = self.pages
        return [
            p
            for p, (doc, _) in enumerate(pages)
            if (p == 0 or pages[p - 1][0] != doc) and p + 1 < len(pages) and pages[p + 1][0] == doc
        ]

    def propagate(
        self,
        query: str,
        qvec: np.ndarray,
        flat: PageRanking,
        settings: RetrievalSettings,
        graph_seeds: np.ndarray | None = None,
    ) -> PageRanking:
        """Steps 2-4 of the module doc on top of ``flat``; ``graph_seeds`` are the method's own
        non-negative seed weights per chunk row (None: hybrid chunk seeds only)."""
        if not settings.structure or settings.flat_weight >= 1.0 or not len(self.chunks):
            return flat
        fused = flat.chunk_scores
        signal = fused if settings.seeds == "hybrid" else self.hybrid.scores(query, qvec, settings, "dense")
        seeds = np.zeros(len(self.chunks))
        top = top_k(signal, settings.seed_chunks)[0]
        seeds[top] = np.maximum(minmax(signal[top]), 1e-3) if len(top) > 1 else 1.0
        seeds /= seeds.sum()
        share = settings.graph_seed_share
        if graph_seeds is not None and share > 0 and float(np.sum(graph_seeds)) > 0 and settings.edges.entity > 0:
            extra = np.maximum(np.asarray(graph_seeds, dtype=np.float64), 0.0)
            seeds = (1.0 - share) * seeds + share * extra / extra.sum()
        diffused = minmax(
            diffuse(self.graph, seeds, alpha=settings.restart, local_above=settings.local_diffusion_edges)
        )
        w = settings.flat_weight
        final = w * flat.flat + (1.0 - w) * _weighed(diffused, flat.routing)
        return PageRanking(self.pages, flat.flat, diffused, final, fused, flat.routing, flat.routed, flat.parties)

    def rank_pages(
        self, query: str, qvec: np.ndarray, settings: RetrievalSettings, graph_seeds: np.ndarray | None = None
    ) -> PageRanking:
        """Every page scored for ``query``: ``flat`` then ``propagate``."""
        return self.propagate(query, qvec, self.flat(query, qvec, settings), settings, graph_seeds)

    def bridge_mentions(self, mentions: Iterable[tuple[str, int, str]]) -> EntityBridges:
        """``graph.bridges.EntityBridges`` over this layer's pages from a method's entity
        mentions ``(doc_id, page, name)``; mentions on pages outside the layer are skipped."""
        return EntityBridges.build(
            len(self.pages),
            ((self.page_position[(d, p)], name) for d, p, name in mentions if (d, p) in self.page_position),
        )

    def with_bridges(
        self,
        top: list[tuple[PageKey, float]],
        bridges: EntityBridges | None,
        query: str,
        settings: RetrievalSettings,
        k: int,
        page_scores: np.ndarray | None = None,
    ) -> list[tuple[PageKey, float]]:
        """``top`` (a method's ranked pages, best first) with the second hop merged in: pages
        sharing the first ``bridge_seeds`` pages' entities (``graph.bridges``), their bridge
        score raised by ``1 + name_links × name score`` where those pages name the page's
        heading (``graph.name_links``: the seed points at the page by name), ordered by that
        score times their relevance — their own ``page_scores`` relative to the best (the
        method's scores over the layer's pages: the second hop must still concern the
        question), mixed with share ``bridge_residual`` of BM25 over whole pages of the
        question's terms the seed pages lack (min-max: what the first hop left open) — take slots
        ``bridge_every``, 2·``bridge_every``, … (``graph.bridges.interleave``). At most ``k``
        pages; a placed page scores the mean of its neighbours, so scores never increase
        down the list. ``top[:k]`` unchanged when bridging is off or finds nothing."""
        if bridges is None or settings.bridge_every < 2 or not top or not len(bridges):
            return top[:k]
        rows = [(self.page_position[p], s) for p, s in top if p in self.page_position]
        reading = read_question(query, settings)

        def names(seeds: list[int], weights: np.ndarray) -> np.ndarray:
            return 1.0 + settings.name_links * self.names.scores(seeds, weights, reading.name_words)

        def left_open(seeds: list[int]) -> np.ndarray:
            return minmax(self.page_bm25.scores(self.page_bm25.absent_terms(reading.tokens, seeds)))

        merged = second_hop(
            rows,
            bridges,
            reading.name_words,
            every=settings.bridge_every,
            seeds=settings.bridge_seeds,
            k=k,
            page_scores=page_scores,
            boost=names if settings.name_links > 0 and len(self.names) else None,
            open_part=left_open,
            open_share=settings.bridge_residual,
        )
        if merged == rows[:k]:
            return top[:k]  # nothing bridged: the ranking as it came (pages outside the layer kept)
        return [(self.pages[row], score) for row, score in merged]

    def take_turns(self, top: list[tuple[PageKey, float]], ranking: PageRanking, k: int) -> list[tuple[PageKey, float]]:
        """``top`` (a method's final pages, best first) with the parties the question compares
        (``PageRanking.parties``) taking turns in its first slots (``turns.take_turns``): each
        party's pages in ``top``, then its best by ``ranking.final`` (a party the method's list
        left out still gets its turns). ``top[:k]`` when the question compares nothing."""
        if len(ranking.parties) < 2:
            return top[:k]
        positions = {d: i for i, d in enumerate(self.page_documents.doc_ids)}
        lists: list[list[tuple[PageKey, float]]] = []
        for docs in ranking.parties:
            own = set(docs)
            rows = np.flatnonzero(np.isin(self.page_documents.codes, [positions[d] for d in own if d in positions]))
            best = rows[np.argsort(-ranking.final[rows], kind="stable")[:k]]
            pulled = [(self.pages[r], float(ranking.final[r])) for r in best if ranking.final[r] > 0]
            lists.append([(p, s) for p, s in top if p[0] in own] + pulled)
        return take_turns(top, lists, k)

    def best_chunks(self, chunk_scores: np.ndarray, pages: Iterable[PageKey]) -> dict[PageKey, int]:
        """The best-scoring chunk row (ties: the first) of each of ``pages`` that has chunks.
        Rows are in reading order, so a page's chunks are one contiguous run of rows: the
        cost follows the pages asked about, not the corpus."""
        scores = np.asarray(chunk_scores)
        out: dict[PageKey, int] = {}
        for page in pages:
            position = self.page_position.get(page)
            if position is None:
                continue
            lo, hi = np.searchsorted(self.chunk_page, [position, position + 1])
            if hi > lo:
                out[page] = int(lo + np.argmax(scores[lo:hi]))
        return out


def _weighed(scores: np.ndarray, routing: np.ndarray | None) -> np.ndarray:
    """Per-page ``scores`` times their documents' routing weights (as they are without routing)."""
    return scores if routing is None else scores * routing


def measure_items(query: str, settings: RetrievalSettings) -> tuple[str, ...]:
    """The input line items of the measures the question asks for, then the line items it
    names (``measures``, ``line_items``: ``methods.retrieval.lexicon``): what the offline answer
    quotes first."""
    reading = read_question(query, settings)
    return tuple(dict.fromkeys(reading.terms + reading.items))


def layer_shape(settings: RetrievalSettings) -> str:
    """The settings a built layer depends on (its edges and the lexicons that name statement
    headings), as a key: a cached layer is rebuilt when they change."""
    return settings.model_dump_json(include={"edges", "similar_top_k", "similar_threshold", "lexicons"})


def retrieval_settings(ctx: object) -> RetrievalSettings:
    """The ``[retrieval]`` settings of a method context (defaults when it has none)."""
    found = getattr(getattr(ctx, "settings", None), "retrieval", None)
    return found if isinstance(found, RetrievalSettings) else RetrievalSettings()
