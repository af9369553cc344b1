"""The HippoRAG 2 graph and its query-time walk, as pure functions over arrays.

Nodes are phrases (distinct normalised subject/object/entity strings) followed by
passages (chunk ids). Edges, undirected and summed when they coincide:
- relation edges between the subject and object phrase of every triple (weight 1 each);
- context edges between a passage and every phrase extracted from it (weight 1);
- synonym edges between phrases whose embeddings are similar enough (weight = cosine),
  among each phrase's ``synonym_top_k`` nearest phrases. "Similar enough" is HippoRAG's
  threshold (0.8) on the cosine *rescaled* so that the median cosine between the
  corpus's phrases maps to 0: ``(cos − b) / (1 − b) ≥ threshold`` with ``b`` that median
  (when positive). Raw 0.8 suits the spread-out cosines of HippoRAG's embedders, but
  e5-small (the offline embedder) puts unrelated phrases at a median cosine of ~0.83, so
  a raw 0.8 would link nearly every pair; rescaled, it means the same thing for both.

Query (``seed_weights``): the phrases of the query-matched facts get the mean score of
the facts they occur in, divided by the number of passages containing the phrase (rare
phrases seed more); the best ``prior_top`` passages by dense score get
``passage_node_weight`` × that score min-max normalised over them (``prior_top`` 0: every
passage, min-max over the corpus, as HippoRAG 2's code). PPR over the whole graph
(``graph.ppr.personalized_pagerank``) then ranks the passages. Why the cut: min-max over
the corpus suits embedders whose cosines spread out; e5-small puts most passages within a
few hundredths of the best, so every passage would keep about half the best one's reset
weight and the walk's hubs would outrank the passages the question is about.

``PassageTable`` holds what queries need per graph, built once: passage rows and chunk
positions, and for the second hop the pages' names (``phrase_bridges``: phrases written as
names in their passage) and headings (``page_names``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...graph.adjacency import IdIndex, build_adjacency
from ...graph.bridges import EntityBridges
from ...graph.name_links import NameLinks
from ...graph.ppr import cached_walk
from ...scoring import calibrated_cut, minmax
from ...text import tokenize
from ..retrieval.evidence_layer import section_headings
from .common import chunk_positions

_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)


def normalize_phrase(text: str) -> str:
    """Lowercase, NFKC, punctuation removed, whitespace collapsed (HippoRAG's phrase key)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_NON_WORD.sub(" ", text).split())


@dataclass
class PassageExtraction:
    """What OpenIE gave for one passage: normalised triples and phrases."""

    chunk_id: str
    triples: list[tuple[str, str, str]]
    phrases: list[str]


def clean_extraction(
    chunk_id: str, triples: list[tuple[str, str, str]], entities: list[str], max_phrase_words: int
) -> PassageExtraction:
    """Normalise phrases, drop empty/over-long ones and self-loops; phrases = entities ∪ triple ends."""

    def ok(phrase: str) -> bool:
        return bool(phrase) and len(phrase.split()) <= max_phrase_words

    kept: list[tuple[str, str, str]] = []
    for subject, predicate, obj in triples:
        s, o = normalize_phrase(subject), normalize_phrase(obj)
        p = "_".join(normalize_phrase(predicate).split()) or "related_to"
        if ok(s) and ok(o) and s != o and (s, p, o) not in kept:
            kept.append((s, p, o))
    phrases = [normalize_phrase(e) for e in entities]
    phrases += [x for s, _, o in kept for x in (s, o)]
    return PassageExtraction(chunk_id, kept, list(dict.fromkeys(p for p in phrases if ok(p))))


@dataclass
class HippoGraph:
    nodes: IdIndex  # phrases first, then passages (chunk ids)
    n_phrases: int
    adjacency: sp.csr_matrix
    phrase_passages: np.ndarray  # passages containing each phrase (≥ 1)
    facts: list[tuple[str, str, str]] = field(default_factory=list)  # aligned with fact keys
    fact_chunks: list[str] = field(default_factory=list)
    _walk: tuple[sp.csr_matrix, np.ndarray] | None = field(default=None, repr=False, compare=False)
    _spread: sp.csr_matrix | None = field(default=None, repr=False, compare=False)

    def passage_nodes(self) -> range:
        return range(self.n_phrases, len(self.nodes))

    def walk(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """The PPR walk operator of ``adjacency``, made once per graph (not per query)."""
        return cached_walk(self)


@dataclass
class PassageTable:
    """What the query-time walk needs per graph, built once instead of per query: for each
    passage node its chunk position and passage-vector row, for each passage-vector row its
    chunk position (-1: none), and the graph's facts grouped by chunk id."""

    node_chunk: np.ndarray
    node_row: np.ndarray
    row_chunk: np.ndarray
    by_chunk: dict[str, list[tuple[str, str, str]]]
    chunk_at: dict[str, int] = field(default_factory=dict)  # chunk id → position in the chunks
    pages: list[tuple[str, int]] = field(default_factory=list)  # distinct (doc_id, page) of the chunks
    page_at: dict[tuple[str, int], int] = field(default_factory=dict)  # (doc_id, page) → row of ``pages``
    chunk_page: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # chunk position → page row
    bridges: EntityBridges | None = None  # the pages' phrases, for the second hop
    names: NameLinks | None = None  # pages naming other pages' headings, for the second hop

    @classmethod
    def build(cls, graph: HippoGraph, passage_keys: list[str], chunks: list) -> PassageTable:
        row_at = {key: i for i, key in enumerate(passage_keys)}
        ids = [graph.nodes.id(i) for i in graph.passage_nodes()]
        by_chunk: dict[str, list[tuple[str, str, str]]] = {}
        for triple, cid in zip(graph.facts, graph.fact_chunks):
            by_chunk.setdefault(cid, []).append(triple)
        chunk_at = {c.id: i for i, c in enumerate(chunks)}
        page_at: dict[tuple[str, int], int] = {}
        chunk_page = np.array([page_at.setdefault((c.doc_id, c.page), len(page_at)) for c in chunks], dtype=np.int64)
        node_chunk = chunk_positions(ids, chunks, chunk_at)
        return cls(
            node_chunk=node_chunk,
            node_row=np.array([row_at.get(i, -1) for i in ids], dtype=np.int64),
            row_chunk=chunk_positions(passage_keys, chunks, chunk_at),
            by_chunk=by_chunk,
            chunk_at=chunk_at,
            pages=list(page_at),
            page_at=page_at,
            chunk_page=chunk_page,
            bridges=phrase_bridges(graph, node_chunk, chunk_page, len(page_at), [c.text for c in chunks]),
            names=page_names(chunks, chunk_page, len(page_at)),
        )

    def page_scores(self, chunk_scores: np.ndarray) -> np.ndarray:
        """Each page's best chunk score (``chunk_scores`` by chunk position; pages without a
        scored chunk 0)."""
        out = np.full(len(self.pages), -np.inf)
        np.maximum.at(out, self.chunk_page, chunk_scores)
        return np.where(np.isfinite(out), out, 0.0)


def by_position(scores: np.ndarray, chunk_of: np.ndarray, n_chunks: int) -> np.ndarray:
    """``scores`` of rows moved to their chunk positions (``chunk_of``; -1 rows dropped); chunks
    no row scores get ``-inf``."""
    out = np.full(n_chunks, -np.inf)
    keep = chunk_of >= 0
    out[chunk_of[keep]] = np.asarray(scores, dtype=np.float64)[keep]
    return out


def page_names(chunks: list, chunk_page: np.ndarray, n_pages: int) -> NameLinks:
    """``graph.name_links.NameLinks`` over pages: the chunks' section headings and page texts."""
    texts: list[list[str]] = [[] for _ in range(n_pages)]
    for chunk, page in zip(chunks, chunk_page):
        texts[page].append(chunk.text)
    return NameLinks.build(n_pages, section_headings(chunks, chunk_page), ["\n".join(t) for t in texts])


def phrase_bridges(
    graph: HippoGraph, node_chunk: np.ndarray, chunk_page: np.ndarray, n_pages: int, texts: list[str]
) -> EntityBridges:
    """``graph.bridges.EntityBridges`` over pages from the graph's context edges: a page's
    phrases are the names among its passages' phrases (``written_as_name`` in the passage's
    ``texts``; ``node_chunk``: passage node → chunk position)."""
    context = sp.coo_matrix(graph.adjacency[graph.n_phrases :, : graph.n_phrases])
    capitalised: dict[int, set[str]] = {}

    def named(chunk: int, phrase: str) -> bool:
        if chunk not in capitalised:
            capitalised[chunk] = capitalised_words(texts[chunk])
        return written_as_name(phrase, capitalised[chunk])

    # a name goes in title-cased: the stored phrase lost its case, and ``bridges.bridging_name``
    # reads one lower-case word as a common noun ("neighbours" the soap opera is "Neighbours")
    return EntityBridges.build(
        n_pages,
        (
            (int(chunk_page[node_chunk[r]]), graph.nodes.id(int(c)).title())
            for r, c in zip(context.row, context.col)
            if node_chunk[r] >= 0 and named(int(node_chunk[r]), graph.nodes.id(int(c)))
        ),
    )


def capitalised_words(text: str) -> set[str]:
    """The words of ``text`` written with a capital first letter, lower-cased."""
    return {word.lower() for word in re.findall(r"\w+", text) if word[:1].isupper()}


def written_as_name(phrase: str, capitalised: set[str]) -> bool:
    """Whether a (normalised, lower-case) phrase reads as a name in its passage: its first and
    last words of two letters or more are written capitalised there ("university of paris",
    not "only two books"). Phrases are stored lower-case, so the passage is what tells a
    name from a common noun phrase."""
    words = [w for w in phrase.split() if len(w) >= 2 and any(ch.isalpha() for ch in w)]
    return bool(words) and words[0] in capitalised and words[-1] in capitalised


def synonym_pairs(
    phrase_matrix: np.ndarray, threshold: float, top_k: int, block: int = 1024
) -> tuple[list[tuple[int, int]], list[float]]:
    """Pairs (i, j), i ≠ j, with raw cosine ≥ threshold among each row's ``top_k`` nearest rows."""
    pairs: list[tuple[int, int]] = []
    weights: list[float] = []
    n = phrase_matrix.shape[0]
    for start in range(0, n, block):
        sims = phrase_matrix[start : start + block] @ phrase_matrix.T
        for offset, row in enumerate(sims):
            i = start + offset
            row[i] = -1.0
            k = min(top_k, n - 1)
            if k <= 0:
                continue
            top = np.argpartition(-row, k - 1)[:k]
            for j in top[row[top] >= threshold]:
                pairs.append((i, int(j)))
                weights.append(float(row[j]))
    return pairs, weights


def assemble_graph(
    extractions: list[PassageExtraction],
    phrase_vectors: dict[str, np.ndarray],
    synonym_threshold: float,
    synonym_top_k: int,
) -> HippoGraph:
    """The graph of the given passages; ``phrase_vectors`` maps phrase → unit vector."""
    nodes = IdIndex()
    phrases = sorted({p for ex in extractions for p in ex.phrases})
    for phrase in phrases:
        nodes.add(phrase)
    n_phrases = len(nodes)
    edges: list[tuple[int, int]] = []
    weights: list[float] = []
    counts = np.zeros(n_phrases, dtype=np.float64)
    facts: list[tuple[str, str, str]] = []
    fact_chunks: list[str] = []
    for ex in extractions:
        passage = nodes.add(ex.chunk_id)
        for phrase in ex.phrases:
            idx = nodes.index(phrase)
            counts[idx] += 1
            edges.append((passage, idx))
            weights.append(1.0)
        for s, p, o in ex.triples:
            edges.append((nodes.index(s), nodes.index(o)))
            weights.append(1.0)
            facts.append((s, p, o))
            fact_chunks.append(ex.chunk_id)
    with_vectors = [p for p in phrases if p in phrase_vectors]
    if len(with_vectors) > 1:
        matrix = np.stack([phrase_vectors[p] for p in with_vectors]).astype(np.float32)
        pairs, sims = synonym_pairs(matrix, calibrated_cut(matrix, synonym_threshold), synonym_top_k)
        rows = nodes.indices(with_vectors)
        edges.extend((int(rows[i]), int(rows[j])) for i, j in pairs)
        weights.extend(sims)
    adjacency = build_adjacency(len(nodes), edges, weights, combine="sum")
    return HippoGraph(
        nodes=nodes,
        n_phrases=n_phrases,
        adjacency=adjacency,
        phrase_passages=np.maximum(counts, 1.0),
        facts=facts,
        fact_chunks=fact_chunks,
    )


def dense_prior(passage_scores: np.ndarray, top: int) -> np.ndarray:
    """Passage reset weights in [0, 1]: min-max over the ``top`` best scores, 0 for the rest
    (``top`` 0 or at least the passage count: min-max over all)."""
    scores = np.asarray(passage_scores, dtype=np.float64)
    if top <= 0 or top >= len(scores):
        return minmax(scores)
    best = np.argpartition(-scores, top - 1)[:top]
    prior = np.zeros(len(scores), dtype=np.float64)
    prior[best] = minmax(scores[best]) if top > 1 else 1.0
    return prior


def seed_weights(
    graph: HippoGraph,
    matched_facts: list[tuple[tuple[str, str, str], float]],
    passage_scores: np.ndarray,
    passage_node_weight: float,
    prior_top: int = 0,
) -> np.ndarray:
    """The PPR reset vector (unnormalised) over all nodes, as the module docstring says."""
    weights = np.zeros(len(graph.nodes), dtype=np.float64)
    occurrences = np.zeros(len(graph.nodes), dtype=np.float64)
    for (s, _, o), score in matched_facts:
        for phrase in (s, o):
            idx = graph.nodes.get(phrase)
            if idx is not None and idx < graph.n_phrases:
                weights[idx] += max(score, 0.0)
                occurrences[idx] += 1
    hit = occurrences > 0
    weights[hit] /= occurrences[hit]
    weights[: graph.n_phrases] /= graph.phrase_passages
    if len(passage_scores):
        weights[graph.n_phrases :] = dense_prior(passage_scores, prior_top) * passage_node_weight
    return weights


def lexical_recognition(
    query: str, candidates: list[tuple[tuple[str, str, str], float]], limit: int
) -> list[tuple[tuple[str, str, str], float]]:
    """The offline stand-in for HippoRAG 2's recognition memory (the model's fact filter):
    keep, in order, the facts whose subject or object shares a content word with the query.

    Offline triples come from a dependency parse and their embeddings are close to every
    query (e5 cosines cluster high), so unfiltered top facts seed PPR with phrases
    unrelated to the question; with none kept the ranking falls back to dense, as
    HippoRAG 2 does when its filter keeps nothing.
    """
    wanted = set(tokenize(query))
    kept = [
        (triple, score)
        for triple, score in candidates
        if wanted & (set(tokenize(triple[0])) | set(tokenize(triple[2])))
    ]
    return kept[:limit]
