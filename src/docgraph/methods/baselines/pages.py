"""``pages``: page retrieval + multimodal answer (the VisRAG / ColQwen / GME family).

Build: one vector per page (``methods.retrieval.page_vectors.page_matrix``): a served multimodal
embedder's vector of the rendered page, or offline, where no image embedder exists, the
normalised mean of the page's chunk vectors (the whole page, not its first 512 tokens),
stored under ``pages.page`` with key ``<doc_id>:<page number>``. KG4VD's page index is
made the same way, so a workspace that builds both embeds each page once (the embedding
cache is keyed by content).
Query: the top ``top_pages`` pages (10, the papers' page budget) by cosine; the answer
model sees those page images (and their text layer) and cites pages by number. Each
page is cited at its components that best match the question, so a citation still
outlines a region. Offline, the extractive answer quotes the chunks of those pages.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...models.base import ImagePart
from ...progress import StatsProgress
from ...types import Answer, Document, Evidence, Page, ScoredChunk, ScoredPage
from ..answers.extractive import EvidencePassage, rank_sentences
from ..base import MethodContext, not_built, register
from ..building.chunking import page_chunks
from ..retrieval.chunk_vectors import vector_model
from ..retrieval.page_vectors import page_key, page_matrix, parse_page_key
from ..retrieval.vector_index import delete_vectors, load_index, write_vectors
from .common import EMBED_BLOCK, IndexedBaseline, answer_from_passages, passage_of
from .settings import BaselineSettings, baseline_settings

VECTOR_NAMESPACE = "pages.page"
PAGE_TEXT_WORDS = 400  # text layer shown beside each page image in the prompt


@register("pages")
class PagesBaseline(IndexedBaseline):
    name = "pages"
    label = "Page retrieval (baseline)"
    order = 13

    def index_version(self, settings: BaselineSettings) -> str:
        return "page-vectors-2"  # pages whole (chunk means offline); "kg4vd-page-item" embedded page text

    def chunk_vector_namespaces(self) -> tuple[str, ...]:
        return (VECTOR_NAMESPACE,)

    def index_document(
        self, ctx: MethodContext, doc: Document, pages: list[Page], settings: BaselineSettings
    ) -> dict[str, Any]:
        if not pages:
            return {"vectors": 0}
        embedder = ctx.models.image_embedder
        blocks = []
        for start in range(0, len(pages), EMBED_BLOCK):  # progress moves between blocks
            block = pages[start : start + EMBED_BLOCK]
            blocks.append(page_matrix(ctx, block, StatsProgress(ctx.progress))[2])
            ctx.progress.advance(len(block))
        matrix = np.vstack(blocks)
        write_vectors(
            ctx.store,
            VECTOR_NAMESPACE,
            [page_key(doc.id, p.number) for p in pages],
            matrix,
            vector_model(embedder.model, ctx.settings.models.embedding),
            [doc.id] * len(pages),
        )
        return {"vectors": len(pages), "text_fallback": int(bool(getattr(embedder, "is_text_fallback", False)))}

    def drop_document(self, ctx: MethodContext, doc_id: str) -> None:
        delete_vectors(ctx.store, VECTOR_NAMESPACE, doc_id=doc_id)

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        started = time.perf_counter()
        settings = baseline_settings(ctx, options, self.name)
        index = load_index(ctx.store, VECTOR_NAMESPACE)
        if not len(index):
            raise not_built(ctx, self.name)
        evidence = Evidence(query=query, method=self.name)
        q = ctx.models.image_embedder.embed_queries([query])[0]
        for key, score in index.search(q, settings.top_pages):
            doc_id, number = parse_page_key(key)
            evidence.pages.append(ScoredPage(doc_id=doc_id, page=number, score=score))
            page = ctx.store.get_page(doc_id, number)
            if page is not None:
                evidence.chunks.extend(
                    ScoredChunk(chunk=c, score=score) for c in page_chunks(page, settings.chunk_words)
                )
        evidence.timings["retrieve"] = time.perf_counter() - started
        return evidence

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        evidence = self.retrieve(ctx, query, **options)
        chat = ctx.models.chat("answer")
        chunk_passages = [passage_of(sc.chunk, sc.score) for sc in evidence.chunks]
        if chat is None:
            return answer_from_passages(ctx, self.name, query, evidence, chunk_passages)
        passages: list[Any] = []
        images: list[Any] = []
        vision = bool(getattr(chat, "supports_vision", True))
        limit = ctx.settings.models.answer.max_images  # None: every page's image
        for scored in evidence.pages:
            page = ctx.store.get_page(scored.doc_id, scored.page)
            if page is None:
                continue
            passages.append(page_passage(query, page, scored.score))
            if vision and page.image_path and (limit is None or len(images) < limit):
                images.append(ImagePart(path=ctx.path(page.image_path)))
        return answer_from_passages(
            ctx,
            self.name,
            query,
            evidence,
            passages,
            images=images,
            prompt="pages_answer.md",
            offline_passages=chunk_passages,
        )


def page_passage(query: str, page: Page, score: float) -> EvidencePassage:
    """The page as one passage: its (shortened) text layer, cited at the chunk that best matches."""
    chunks = page_chunks(page)
    ranked = rank_sentences(query, [passage_of(c) for c in chunks])
    components = ranked[0][2].component_ids if ranked else ()
    words = page.text.split()
    text = " ".join(words[:PAGE_TEXT_WORDS]) + (" …" if len(words) > PAGE_TEXT_WORDS else "")
    return EvidencePassage(
        doc_id=page.doc_id,
        page=page.number,
        component_ids=tuple(components),
        text=text or "(no text layer)",
        score=score,
    )
