"""HVM-GraphRAG answers from the modality-organised evidence, with numbered citations.

With an answer model: every evidence chunk is registered in a ``CitationBook`` first, so
the number the model sees is the citation number; the prompt (``answer.md``) has three
sections — text, tables, pictures — and the pictures' crops go along as images when the
model has vision (at most ``MAX_IMAGES``, and at most the answer endpoint's
``models.answer.max_images``). The reply's ``[n]`` markers (also ``[1, 3]``)
select the answer's citations; when it cites none, the evidence's citations are listed
as sources considered, and the text says so. Offline: the extractive answer over the same
chunks in the same order (table rows as sentences), citing the regions it quotes; also
when the answer model fails after its retries (``answer_fallback``: then with a warning).
"""

from __future__ import annotations

import re
import time
from typing import Any

from ...models.base import ImagePart, user
from ...prompts import material, render_prompt
from ...types import Answer, Chunk, Evidence
from ..answers.answer_fallback import AnswerCalls, answer_with_fallback
from ..answers.citations import CitationBook, marker
from ..answers.extractive import EvidencePassage, compared_parties, extractive_answer, named_documents
from ..base import MethodContext
from ..building.markdown_tables import rows_as_sentences
from ..retrieval.evidence_layer import measure_items, retrieval_settings
from .retrieve import METHOD, hvm_index, retrieve

STAGE_ANSWER = "hvm.answer"
NOT_ANSWERABLE = "Not answerable"
MAX_IMAGES = 4
CHUNK_CHARS = {"text": 2500, "table": 6000, "image": 1500}
_MARKER = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_SECTIONS = ("text", "table", "image")


def cited_numbers(text: str) -> list[int]:
    """Citation numbers in ``[n]`` / ``[n, m]`` markers, in order of first use."""
    out: dict[int, None] = {}
    for match in _MARKER.finditer(text):
        for raw in re.split(r"\s*[,;]\s*", match.group(1)):
            out[int(raw)] = None
    return list(out)


def evidence_prompt(
    ctx: MethodContext, query: str, evidence: Evidence, book: CitationBook, vision: bool
) -> tuple[str, list[ImagePart]]:
    """The answer prompt (three modality sections, CitationBook numbers) and the picture crops to attach."""
    sections: dict[str, list[str]] = {m: [] for m in _SECTIONS}
    images: list[ImagePart] = []
    endpoint_limit = ctx.settings.models.answer.max_images
    limit = MAX_IMAGES if endpoint_limit is None else min(MAX_IMAGES, endpoint_limit)
    for scored in evidence.chunks:
        chunk = scored.chunk
        number = book.cite(chunk.doc_id, chunk.page, chunk.component_ids, quote=chunk.text)
        if number is None:
            continue
        title = book.citations[number - 1].document_title
        head = f"[{number}] ({title}, page {chunk.page}"
        if chunk.section_path[1:]:
            head += f", section: {' > '.join(chunk.section_path[1:])}"
        if chunk.modality == "image" and vision and len(images) < limit:
            page = book.page(chunk.doc_id, chunk.page)
            comp = page.component(chunk.component_ids[0]) if page else None
            if comp is not None and comp.crop_path and ctx.path(comp.crop_path).is_file():
                images.append(ImagePart(path=ctx.path(comp.crop_path)))
                head += f", attached image {len(images)}"
        sections[chunk.modality].append(f"{head})\n{chunk.text.strip()[: CHUNK_CHARS[chunk.modality]]}")
    body = {m: material("\n\n".join(lines) if lines else "(none)") for m, lines in sections.items()}
    return render_prompt(__package__, "answer.md", question=query.strip(), **body), images


def page_chunks(ctx: MethodContext, evidence: Evidence, skip: set[str], pages: int = 3) -> list[tuple[Chunk, float]]:
    """The chunks of the ``pages`` best-ranked evidence pages not in ``skip``, with their page's score."""
    top = {(p.doc_id, p.page): p.score for p in evidence.pages[:pages]}
    return [
        (c, top[(c.doc_id, c.page)]) for c in hvm_index(ctx).chunks if (c.doc_id, c.page) in top and c.id not in skip
    ]


def answer(ctx: MethodContext, query: str, **options: Any) -> Answer:
    """Retrieve, then answer with the answer model, or extractively offline (also when the
    model fails: ``answer_fallback``)."""
    started = time.perf_counter()
    evidence = retrieve(ctx, query, **options)
    t = time.perf_counter()

    def offline(reason: str) -> Answer:
        book = CitationBook(ctx.store)
        items = measure_items(query, retrieval_settings(ctx))
        parties = compared_parties(evidence)
        scored = [(s.chunk, s.score) for s in evidence.chunks]
        if items or parties:  # a measure's rows, or each side of a comparison, are on the pages ranked first
            scored += page_chunks(ctx, evidence, {c.id for c, _ in scored})
        passages = [
            EvidencePassage(
                doc_id=c.doc_id,
                page=c.page,
                component_ids=tuple(c.component_ids),
                text=rows_as_sentences(c.text) if c.modality == "table" else c.text,
                score=score,
            )
            for c, score in scored
        ]
        named = named_documents(evidence)
        text = extractive_answer(query, passages, book, reason=reason, items=items, parties=parties, named=named)
        return Answer(question=query, text=text, method=METHOD, citations=book.citations, evidence=evidence)

    def model(chat: AnswerCalls) -> Answer:
        book = CitationBook(ctx.store)
        vision = bool(getattr(chat, "supports_vision", ctx.settings.models.answer.supports_vision))
        prompt, images = evidence_prompt(ctx, query, evidence, book, vision)
        text = chat.complete([user(prompt, images)], stage=STAGE_ANSWER).text.strip()
        known = {c.number: c for c in book.citations}
        citations = [known[n] for n in cited_numbers(text) if n in known]
        if not citations and book.citations and text != NOT_ANSWERABLE:
            citations = list(book.citations)
            text += f"\n\nSources considered (the model cited none): {marker([c.number for c in citations])}"
        return Answer(
            question=query,
            text=text,
            method=METHOD,
            citations=citations,
            evidence=evidence,
            usage=dict(chat.usage),
            model_used=True,
        )

    result = answer_with_fallback(ctx, ctx.models.chat("answer"), model, offline)
    timings = dict(evidence.timings)
    timings["answer"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - started
    result.timings = timings
    return result
