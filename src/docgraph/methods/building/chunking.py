"""Chunks from layout components: the retrievable units shared by HVM-GraphRAG and baselines.

Contract: chunks follow reading order; each chunk lies on one page and cites the
components it was made from; a table is one ``table`` chunk (its Markdown), a picture
is one ``image`` chunk (its caption and nearby text, since no vision model runs
offline), and consecutive text components of the same section are packed up to
``max_words``. Page furniture (headers, footers) is left out. Chunk ids are stable:
``<doc_id>:<page>:<first component id>``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...types import Chunk, Component, ComponentKind, Page

DEFAULT_MAX_WORDS = 160


def _image_text(page: Page, comp: Component, neighbours: int = 1) -> str:
    """Text standing in for a picture: its own OCR text, captions and the text right around it."""
    ordered = sorted(page.components, key=lambda c: c.order)
    index = next(i for i, c in enumerate(ordered) if c.id == comp.id)
    parts = [comp.text] if comp.text else []
    window = ordered[max(0, index - neighbours) : index + neighbours + 1]
    captions = [c.text for c in window if c.kind is ComponentKind.CAPTION and c.text]
    nearby = [c.text for c in window if c.kind in (ComponentKind.PARAGRAPH, ComponentKind.TITLE) and c.text]
    parts.extend(captions or nearby[:1])
    return " ".join(p.strip() for p in parts if p.strip())


def page_chunks(page: Page, max_words: int = DEFAULT_MAX_WORDS) -> list[Chunk]:
    """Chunks of one page in reading order."""
    chunks: list[Chunk] = []
    pending: list[Component] = []

    def flush() -> None:
        if pending:
            text = "\n".join(c.content for c in pending if c.content).strip()
            if text:
                chunks.append(
                    Chunk(
                        id=f"{page.doc_id}:{page.number}:{pending[0].id}",
                        doc_id=page.doc_id,
                        page=page.number,
                        component_ids=[c.id for c in pending],
                        modality="text",
                        text=text,
                        section_path=list(pending[0].section_path),
                    )
                )
            pending.clear()

    for comp in sorted(page.components, key=lambda c: c.order):
        if comp.furniture:
            continue
        if comp.kind in (ComponentKind.TABLE, ComponentKind.IMAGE):
            flush()
            text = comp.content if comp.kind is ComponentKind.TABLE else _image_text(page, comp)
            chunks.append(
                Chunk(
                    id=f"{page.doc_id}:{page.number}:{comp.id}",
                    doc_id=page.doc_id,
                    page=page.number,
                    component_ids=[comp.id],
                    modality=comp.modality,
                    text=text or f"[{comp.kind.name.lower()} {comp.id}]",
                    section_path=list(comp.section_path),
                )
            )
            continue
        if not comp.content.strip():
            continue
        words = sum(len(c.content.split()) for c in pending)
        new_section = pending and pending[0].section_path != comp.section_path
        if pending and (
            new_section or words + len(comp.content.split()) > max_words or comp.kind is ComponentKind.TITLE
        ):
            flush()
        pending.append(comp)
    flush()
    return chunks


def document_chunks(pages: Iterable[Page], max_words: int = DEFAULT_MAX_WORDS) -> list[Chunk]:
    """Chunks of several pages, in page then reading order."""
    out: list[Chunk] = []
    for page in sorted(pages, key=lambda p: (p.doc_id, p.number)):
        out.extend(page_chunks(page, max_words))
    return out


def chunk_context(chunk: Chunk) -> str:
    """The chunk's structural context h_i: document title and section path, as one line."""
    return " > ".join(s for s in chunk.section_path if s)
