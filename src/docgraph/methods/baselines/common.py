"""What the baselines share: per-document build bookkeeping, the chunk table, the answer step.

``IndexedBaseline`` is the build/remove/status half of a baseline that indexes documents
one at a time: a state record per document (namespace ``<name>.state``, owned by the
document) says it is done and with which settings, so a build skips finished documents,
redoes documents whose settings changed, drops what belonged to documents that are gone,
and an interrupted build resumes at the first unfinished document. A document whose
model calls fail after the retries is isolated: what it wrote is removed, the failure is
noted with the document, the other documents are built, and the next build retries it.

``ChunkBaseline`` adds the chunk-retrieval pattern (bm25, dense, hipporag): chunks from
``methods.building.chunking`` stored under ``<name>.chunk``; a subclass ranks chunk ids for a
query and the base turns the ranking into ``Evidence`` (chunks and the pages they lie
on, best first) and an ``Answer``.

``answer_from_passages`` is the answer step of every baseline: with an answer model, a
prompt with numbered evidence (numbers are CitationBook numbers, so the model's ``[n]``
markers are the answer's citations); offline, and when the answer model fails, the
extractive answer (``methods.answers.answer_fallback``).
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ...errors import ModelError
from ...models.base import ImagePart, user
from ...models.embedding.vector_recipe import recipe_tag
from ...models.usage import embedding_stage
from ...progress import Progress
from ...prompts import material, render_prompt
from ...scoring import ranked
from ...types import Answer, Chunk, Document, Evidence, Page, ScoredChunk, ScoredPage
from ..answers.answer_fallback import AnswerCalls, answer_with_fallback
from ..answers.citations import CitationBook
from ..answers.extractive import EvidencePassage, extractive_answer
from ..base import BuildReport, MethodContext, not_built
from ..building.chunking import document_chunks
from ..building.embed_blocks import blocks
from ..memo import bump_version, cached  # noqa: F401  (re-exported for the baselines)
from ..retrieval.chunk_vectors import ContextualChunks
from .settings import BaselineSettings, baseline_settings

_CITE = re.compile(r"\[(\d+)\]")


class IndexedBaseline(ABC):
    """Build bookkeeping; subclasses set ``name`` and implement ``index_document``/``drop_document``."""

    name: str = ""

    # ----------------------------------------------------------------- subclass hooks
    def index_version(self, settings: BaselineSettings) -> str:
        """A string that changes when a setting that shapes the index changes."""
        return "1"

    def chunk_vector_namespaces(self) -> tuple[str, ...]:
        """The namespaces of the chunk-derived vectors ``index_document`` writes (none: the
        index has no vectors). Their recipe is part of the index version, and a build
        re-indexes every document when one of them was emptied (``build --rebuild-vectors``)."""
        return ()

    def _version(self, ctx: MethodContext, settings: BaselineSettings) -> str:
        version = self.index_version(settings)
        tag = recipe_tag(ctx.settings.models.embedding) if self.chunk_vector_namespaces() else ""
        return f"{version}|{tag}" if tag else version

    def _states(self, ctx: MethodContext) -> dict[str, Any]:
        """The per-document build states; none when a vector namespace of the index is gone
        while documents are recorded as built (their vectors were dropped)."""
        states = dict(ctx.store.iter_records(self.state_namespace))
        if states and self.chunk_vector_namespaces():
            if not all(ctx.store.has_vectors(ns) for ns in self.chunk_vector_namespaces()) and any(
                int(s.get("pages", 0)) for s in states.values()
            ):
                return {doc_id: {**state, "version": None} for doc_id, state in states.items()}
        return states

    @abstractmethod
    def index_document(
        self, ctx: MethodContext, doc: Document, pages: list[Page], settings: BaselineSettings
    ) -> dict[str, Any]:
        """Index one document (idempotent writes); returns stats to keep in its state record."""

    @abstractmethod
    def drop_document(self, ctx: MethodContext, doc_id: str) -> None:
        """Delete what ``index_document`` wrote for the document (inside the caller's transaction)."""

    # ----------------------------------------------------------------- Method protocol
    @property
    def state_namespace(self) -> str:
        return f"{self.name}.state"

    def build(self, ctx: MethodContext) -> BuildReport:
        started = time.perf_counter()
        settings = baseline_settings(ctx)
        version = self._version(ctx, settings)
        docs = [d for d in ctx.store.list_documents() if d.status == "ready"]
        present = {d.id for d in docs}
        states = self._states(ctx)
        for doc_id in [k for k in states if k not in present]:
            with ctx.store.transaction():
                self.remove_document(ctx, doc_id)
        todo = [d for d in docs if (states.get(d.id) or {}).get("version") != version]
        skipped = sum(int(states[d.id].get("pages", 0)) for d in docs if d.id in states and d not in todo)
        ctx.progress.start(sum(d.page_count for d in todo), f"{self.name}: indexing")
        built, failures = 0, []
        totals: dict[str, Any] = {}
        for doc in todo:
            if doc.id in states:
                with ctx.store.transaction():
                    self.remove_document(ctx, doc.id)
            pages = list(ctx.store.iter_pages(doc.id))
            counting = CountingProgress(ctx.progress)
            try:
                indexed = self.index_document(replace(ctx, progress=counting), doc, pages, settings)
            except ModelError as exc:
                with ctx.store.transaction():
                    self.remove_document(ctx, doc.id)
                failures.append(f"{doc.title} ({doc.id}): {exc}")
                ctx.progress.note(
                    f"{self.name}: model calls failed for {doc.title} ({doc.id}); nothing of it is "
                    f"kept and the next build retries it: {exc}"
                )
                continue
            ctx.store.put_record(
                self.state_namespace, doc.id, {"version": version, "pages": len(pages), **indexed}, doc_id=doc.id
            )
            bump_version(ctx.store, self.name)
            built += len(pages)
            for key, value in indexed.items():
                if isinstance(value, (int, float)):
                    totals[key] = totals.get(key, 0) + value
            ctx.progress.advance(max(0, len(pages) - counting.advanced), document=doc.title[:40])
        stats: dict[str, Any] = {"documents": len(todo) - len(failures), **totals}
        if failures:
            stats.update(failed_documents=len(failures), failures=failures)
        return BuildReport(
            method=self.name,
            pages_built=built,
            pages_skipped=skipped,
            seconds=time.perf_counter() - started,
            stats=stats,
        )

    def remove_document(self, ctx: MethodContext, doc_id: str) -> None:
        self.drop_document(ctx, doc_id)
        ctx.store.delete_records(self.state_namespace, keys=[doc_id])
        bump_version(ctx.store, self.name)

    def status(self, ctx: MethodContext) -> dict[str, Any]:
        settings = baseline_settings(ctx)
        version = self._version(ctx, settings)
        docs = [d for d in ctx.store.list_documents() if d.status == "ready"]
        states = self._states(ctx)
        built = [d for d in docs if (states.get(d.id) or {}).get("version") == version]
        return {
            "built_pages": sum(int(states[d.id].get("pages", 0)) for d in built),
            "total_pages": sum(d.page_count for d in docs),
            "built_documents": len(built),
            "total_documents": len(docs),
        }


# --------------------------------------------------------------------- chunk baselines
class ChunkBaseline(IndexedBaseline):
    """Text chunks per document plus a ranking over them; subclasses implement ``rank``."""

    def index_version(self, settings: BaselineSettings) -> str:
        return f"chunks{settings.chunk_words}"

    @property
    def chunk_namespace(self) -> str:
        return f"{self.name}.chunk"

    def index_chunks(
        self, ctx: MethodContext, doc: Document, chunks: list[Chunk], settings: BaselineSettings
    ) -> dict[str, Any]:
        """Index the document's chunks (already stored); returns stats."""
        return {}

    @abstractmethod
    def rank(
        self, ctx: MethodContext, query: str, chunks: list[Chunk], settings: BaselineSettings
    ) -> Iterable[tuple[int, float]]:
        """(position in ``chunks``, score) pairs, best first; may leave chunks out. May be
        lazy (``scoring.ranked``): callers read only as far as they need."""

    def index_document(
        self, ctx: MethodContext, doc: Document, pages: list[Page], settings: BaselineSettings
    ) -> dict[str, Any]:
        chunks = document_chunks(pages, settings.chunk_words)
        ctx.store.put_records(self.chunk_namespace, [(c.id, c.model_dump(), doc.id) for c in chunks])
        return {"chunks": len(chunks), **self.index_chunks(ctx, doc, chunks, settings)}

    def drop_document(self, ctx: MethodContext, doc_id: str) -> None:
        ctx.store.delete_records(self.chunk_namespace, doc_id=doc_id)

    def chunks(self, ctx: MethodContext) -> list[Chunk]:
        """Every stored chunk, in key order (cached until the index changes)."""
        return cached(
            ctx.store,
            self.name,
            "chunks",
            lambda: [Chunk.model_validate(v) for _, v in ctx.store.iter_records(self.chunk_namespace)],
            persist=True,
        )

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        started = time.perf_counter()
        settings = baseline_settings(ctx, options, self.name)
        chunks = self.chunks(ctx)
        if not chunks:
            raise not_built(ctx, self.name)
        ranking = self.rank(ctx, query, chunks, settings)
        evidence = evidence_from_ranking(query, self.name, ((chunks[i], s) for i, s in ranking), settings)
        evidence.timings["retrieve"] = time.perf_counter() - started
        return evidence

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        evidence = self.retrieve(ctx, query, **options)
        passages = [passage_of(sc.chunk, sc.score) for sc in evidence.chunks]
        return answer_from_passages(ctx, self.name, query, evidence, passages)


def chunk_positions(ids: Sequence[str], chunks: Sequence[Chunk], where: dict[str, int] | None = None) -> np.ndarray:
    """The position in ``chunks`` of each id (-1: no current chunk has it); ``where`` is the
    id → position map of ``chunks`` when the caller has it."""
    where = {c.id: i for i, c in enumerate(chunks)} if where is None else where
    return np.array([where.get(i, -1) for i in ids], dtype=np.int64)


def ranked_chunks(scores: np.ndarray, chunk_of: np.ndarray) -> Iterator[tuple[int, float]]:
    """(chunk position, score) of scored rows, best first (ties by row), rows whose
    ``chunk_of`` is -1 skipped; lazy (``scoring.ranked``)."""
    return ((int(chunk_of[row]), score) for row, score in ranked(scores) if chunk_of[row] >= 0)


def evidence_from_ranking(
    query: str, method: str, ranked: Iterable[tuple[Chunk, float]], settings: BaselineSettings
) -> Evidence:
    """Evidence with the top ``settings.top_k`` chunks and the first ``settings.top_pages``
    distinct pages of the ranking (a page scores as its best chunk); ``ranked`` is read
    only as far as both need (a lazy ranking is never sorted to its end)."""
    pages: list[ScoredPage] = []
    chunks: list[ScoredChunk] = []
    seen: set[tuple[str, int]] = set()
    for chunk, score in ranked:
        if len(chunks) < settings.top_k:
            chunks.append(ScoredChunk(chunk=chunk, score=float(score)))
        key = (chunk.doc_id, chunk.page)
        if key not in seen and len(pages) < settings.top_pages:
            seen.add(key)
            pages.append(ScoredPage(doc_id=chunk.doc_id, page=chunk.page, score=float(score)))
        if len(pages) >= settings.top_pages and len(chunks) >= settings.top_k:
            break
    return Evidence(query=query, method=method, pages=pages, chunks=chunks)


EMBED_BLOCK = 128  # pages per page-vector call of the pages baseline (progress moves between blocks)


class CountingProgress:
    """Passes everything to ``inner`` and counts the units advanced (a document's share)."""

    def __init__(self, inner: Progress):
        self.inner = inner
        self.advanced = 0

    def start(self, total: int, description: str) -> None:
        self.inner.start(total, description)

    def advance(self, n: int = 1, **stats: Any) -> None:
        self.advanced += n
        self.inner.advance(n, **stats)

    def note(self, message: str) -> None:
        self.inner.note(message)

    def close(self) -> None:
        self.inner.close()


def embed_chunks(ctx: MethodContext, chunks: Sequence[Chunk]) -> np.ndarray:
    """One vector per chunk (``chunk_vectors``: the body plus its weighted context elements,
    each embedded and cached on its own), embedded one ``embed_blocks`` block at a time;
    after each block the progress advances by the pages none of whose chunks is left, so
    indexing one 2,000-page document shows progress (the caller advances the rest)."""
    embedder = ctx.models.text_embedder
    if not chunks:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    parts = ContextualChunks.of(chunks, ctx.settings.models.embedding)
    texts = parts.texts()
    rows, reported = [], 0
    for start, end in blocks([len(t) for t in texts]):
        with embedding_stage("chunks"):
            rows.append(np.asarray(embedder.embed_passages(texts[start:end]), dtype=np.float32))
        done = min(end, len(chunks))
        finished = len({c.page for c in chunks[:done]} - {c.page for c in chunks[done:]})
        if finished > reported:
            ctx.progress.advance(finished - reported)
            reported = finished
    return parts.combine(np.vstack(rows))


def passage_of(chunk: Chunk, score: float = 0.0) -> EvidencePassage:
    return EvidencePassage(
        doc_id=chunk.doc_id, page=chunk.page, component_ids=tuple(chunk.component_ids), text=chunk.text, score=score
    )


# --------------------------------------------------------------------- answering
def answer_from_passages(
    ctx: MethodContext,
    method: str,
    query: str,
    evidence: Evidence,
    passages: list[EvidencePassage],
    *,
    images: Sequence[ImagePart] = (),
    prompt: str = "answer.md",
    offline_passages: list[EvidencePassage] | None = None,
) -> Answer:
    """The baselines' answer: a model answer over numbered evidence, or the extractive one
    (over ``offline_passages`` when given, else ``passages``) offline and when the answer
    model fails (``answer_fallback``).

    Every passage is registered in a ``CitationBook`` before the prompt is written, so
    the numbers the model sees are the citation numbers; the answer keeps the citations
    it refers to (all of them when it refers to none).
    """
    started = time.perf_counter()

    def offline(reason: str) -> Answer:
        book = CitationBook(ctx.store)
        text = extractive_answer(query, passages if offline_passages is None else offline_passages, book, reason=reason)
        return Answer(question=query, text=text, method=method, citations=book.citations, evidence=evidence)

    def model(chat: AnswerCalls) -> Answer:
        book = CitationBook(ctx.store)
        blocks = []
        for passage in passages:
            number = book.cite(passage.doc_id, passage.page, list(passage.component_ids), quote=passage.text)
            title = book.citations[number - 1].document_title if number else passage.doc_id
            blocks.append(f"[{number}] ({title}, page {passage.page})\n{passage.text.strip()}")
        body = render_prompt(
            __package__,
            prompt,
            question=query,
            evidence=material("\n\n".join(blocks) if blocks else "(no evidence was retrieved)"),
        )
        text = chat.complete([user(body, list(images))], stage=f"{method}.answer").text.strip()
        cited = {int(n) for n in _CITE.findall(text)}
        citations = [c for c in book.citations if c.number in cited] or book.citations
        return Answer(
            question=query,
            text=text,
            method=method,
            citations=citations,
            evidence=evidence,
            usage=dict(chat.usage),
            model_used=True,
        )

    answer = answer_with_fallback(ctx, ctx.models.chat("answer"), model, offline)
    answer.timings = {**evidence.timings, "answer": time.perf_counter() - started}
    return answer
