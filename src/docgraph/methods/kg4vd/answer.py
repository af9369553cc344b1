"""KG4VD's two-stage answer, and the offline extractive answer, both with numbered citations.

With an answer model (METHODS.md "KG4VD — Query" step 6, after MegaRAG):

1. **preliminary** (``prompts/answer_preliminary.md``): the kept entities and relations,
   numbered [1] … [n], are organised into a preliminary answer citing those numbers;
2. **final** (``prompts/answer_final.md``): the question, the preliminary answer, the same
   numbered entities and relations and the kept pages (numbered after them) go to the
   vision model with every kept page's image attached as a data URI — the mode's page
   budget (``k_pages``, 10), as the paper sends them. ``max_images`` (the answer
   endpoint's ``models.answer.max_images``, or the query option) caps the images for
   endpoints that limit them; pages beyond the cap (or all pages, when the model has no
   vision, or a page whose image file is missing) go as text excerpts.

The reply's ``[n]`` markers (also ``[3, 5]``) are mapped back to page regions through
:class:`CitationBook`: an entity or relation item cites the components of its mentions
(at most ``MENTIONS_PER_ITEM``), a page item cites the components of that page that the
kept entities and relations are grounded on (else every non-furniture component with
text). Unknown numbers are dropped. Citations are numbered in order of first use.

Offline (no answer model; also the fallback when it fails, ``methods.answers.answer_fallback``):
:func:`extractive_answer` over passages made of the text of grounded components — every
component of the kept pages, then the components of each kept entity's and relation's
mentions — which says plainly that no model was used, and why.
Furniture is not quoted, except page headers that carry a running title (:func:`quotable`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ...models.base import ChatModel, ImagePart, user
from ...prompts import material, render_prompt
from ...store.base import Store
from ...types import Component, ComponentKind, Entity, Evidence, Mention, Page, Relation, Usage
from ..answers.citations import CitationBook, marker
from ..answers.extractive import NO_MODEL, EvidencePassage, compared_parties, extractive_answer, named_documents
from ..building.markdown_tables import rows_as_sentences
from ..timing import Timer

if TYPE_CHECKING:
    from ..base import MethodContext

MENTIONS_PER_ITEM = 3
OFF_PAGE_MENTIONS = 10  # mentions off the ranked pages an item's passages come from (``quoted_mentions``)
EXCERPT_CHARS = 700
STAGE_PRELIMINARY = "kg4vd.answer_preliminary"
STAGE_FINAL = "kg4vd.answer_final"
NO_GRAPH_EVIDENCE = "(no entities or relations were retrieved for this question)"
_MARKER = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass
class Item:
    """One numbered piece of evidence shown to the model."""

    number: int
    kind: Literal["entity", "relation", "page"]
    label: str
    mentions: list[Mention]
    page: Page | None = None


@dataclass
class ModelAnswer:
    text: str
    preliminary: str
    usage: dict[str, Usage] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    images_sent: int = 0
    unknown_markers: list[int] = field(default_factory=list)


class _Titles:
    """Document titles by id, read once each."""

    def __init__(self, store: Store):
        self.store = store
        self.cache: dict[str, str] = {}

    def label(self, doc_id: str, number: int) -> str:
        if doc_id not in self.cache:
            doc = self.store.get_document(doc_id)
            self.cache[doc_id] = doc.title if doc else doc_id
        return f"{self.cache[doc_id]}, page {number}"


def number_items(evidence: Evidence, book: CitationBook, store: Store) -> list[Item]:
    """Entities, then relations, then pages, numbered from 1 in evidence order."""
    titles = _Titles(store)
    items: list[Item] = []
    for scored_entity in evidence.entities:
        e = scored_entity.entity
        where = "; ".join(titles.label(m.doc_id, m.page) for m in e.mentions[:MENTIONS_PER_ITEM])
        text = f"{e.name} ({e.type}): {e.description}".rstrip(": ")
        items.append(Item(len(items) + 1, "entity", f"{text} — {where}" if where else text, e.mentions))
    for scored_relation in evidence.relations:
        r = scored_relation.relation
        text = f"{scored_relation.source_name or r.source} —{r.label}→ {scored_relation.target_name or r.target}"
        if r.description:
            text += f": {r.description}"
        items.append(Item(len(items) + 1, "relation", text, r.mentions))
    grounded: dict[tuple[str, int], list[str]] = {}
    for mention in [m for s in evidence.entities for m in s.entity.mentions] + [
        m for s in evidence.relations for m in s.relation.mentions
    ]:
        grounded.setdefault((mention.doc_id, mention.page), []).extend(mention.component_ids)
    for scored in evidence.pages:
        page = book.page(scored.doc_id, scored.page)
        if page is None:
            continue
        ids = list(dict.fromkeys(grounded.get((page.doc_id, page.number), [])))
        ids = [c for c in ids if page.component(c) is not None] or [
            c.id for c in page.components if not c.furniture and c.content.strip()
        ]
        items.append(
            Item(
                len(items) + 1,
                "page",
                titles.label(page.doc_id, page.number),
                [Mention(doc_id=page.doc_id, page=page.number, component_ids=ids)],
                page,
            )
        )
    return items


def resolve_markers(text: str, items: list[Item], book: CitationBook) -> tuple[str, list[int]]:
    """``text`` with item markers replaced by citation markers; also the unknown numbers."""
    by_number = {item.number: item for item in items}
    unknown: list[int] = []

    def replace(match: re.Match[str]) -> str:
        cited: list[int | None] = []
        for raw in re.split(r"\s*[,;]\s*", match.group(1)):
            item = by_number.get(int(raw))
            if item is None:
                unknown.append(int(raw))
                continue
            for mention in item.mentions[:MENTIONS_PER_ITEM]:
                cited.append(book.cite_mention(mention, quote=item.label))
        return marker(cited)

    return _MARKER.sub(replace, text), unknown


def _lines(items: list[Item], kind: str) -> str:
    lines = [f"[{i.number}] {i.label}" for i in items if i.kind == kind]
    return "\n".join(lines) if lines else "(none)"


def _excerpt(page: Page) -> str:
    text = " ".join(c.content for c in sorted(page.components, key=lambda c: c.order) if c.content and not c.furniture)
    text = " ".join(text.split())
    return text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")


def two_stage_answer(
    ctx: MethodContext,
    chat: ChatModel,
    query: str,
    evidence: Evidence,
    book: CitationBook,
    max_images: int | None = None,
) -> ModelAnswer:
    """Preliminary answer from the graph, then the final answer with the page images (every
    kept page's; at most ``max_images`` when given)."""
    items = number_items(evidence, book, ctx.store)
    usage: dict[str, Usage] = {}
    timings: dict[str, float] = {}
    entities, relations = _lines(items, "entity"), _lines(items, "relation")
    if any(i.kind in ("entity", "relation") for i in items):
        prompt = render_prompt(
            __package__,
            "answer_preliminary.md",
            question=query.strip(),
            entities=material(entities),
            relations=material(relations),
        )
        with Timer(timings).stage("answer_preliminary"):
            result = chat.complete([user(prompt)], stage=STAGE_PRELIMINARY)
        usage[STAGE_PRELIMINARY] = result.usage
        preliminary = result.text.strip()
    else:
        preliminary = NO_GRAPH_EVIDENCE

    vision = bool(getattr(chat, "supports_vision", True))
    images: list[ImagePart] = []
    image_lines: list[str] = []
    other_lines: list[str] = []
    for item in (i for i in items if i.kind == "page"):
        assert item.page is not None
        path = ctx.path(item.page.image_path)
        if vision and (max_images is None or len(images) < max_images) and path.is_file():
            images.append(ImagePart(path=path))
            image_lines.append(f"[{item.number}] {item.label} (image {len(images)})")
        else:
            other_lines.append(f"[{item.number}] {item.label}: {_excerpt(item.page)}")
    prompt = render_prompt(
        __package__,
        "answer_final.md",
        question=query.strip(),
        preliminary=material(preliminary),
        entities=material(entities),
        relations=material(relations),
        images=material("\n".join(image_lines) or "(none)"),
        other_pages=material("\n".join(other_lines) or "(none)"),
    )
    with Timer(timings).stage("answer_final"):
        result = chat.complete([user(prompt, images)], stage=STAGE_FINAL)
    usage[STAGE_FINAL] = result.usage
    text, unknown = resolve_markers(result.text.strip(), items, book)
    if not book.citations:
        # The model cited nothing usable: point at the best pages rather than leave the
        # answer unverifiable, and say so.
        pages = [i for i in items if i.kind == "page"][:3]
        sources, _ = resolve_markers("".join(f"[{i.number}]" for i in pages), items, book)
        if sources:
            text += f"\n\nSources considered (the model cited none): {sources}"
    return ModelAnswer(
        text=text,
        preliminary=preliminary,
        usage=usage,
        timings=timings,
        images_sent=len(images),
        unknown_markers=unknown,
    )


def quotable(component: Component) -> bool:
    """Whether the offline answer may quote a component: any non-furniture text, and page
    headers that read as a running title (three or more words, e.g. "Unit 4 A Global
    Middle Ages"), not page numbers ("Preface 3") or footers."""
    if not component.content.strip():
        return False
    if not component.furniture:
        return True
    return component.kind is ComponentKind.HEADER and len(_WORD.findall(component.content)) >= 3


def offline_passages(evidence: Evidence, book: CitationBook) -> list[EvidencePassage]:
    """Passages of grounded component text: the kept pages' components in page rank and
    reading order, then each kept entity's and relation's mentions; duplicates dropped."""
    passages: list[EvidencePassage] = []
    seen: set[tuple[str, int, tuple[str, ...]]] = set()

    def add(doc_id: str, number: int, component_ids: list[str], score: float) -> None:
        page = book.page(doc_id, number)
        if page is None:
            return
        comps = [c for cid in dict.fromkeys(component_ids) if (c := page.component(cid)) is not None]
        comps = [c for c in comps if quotable(c)]
        key = (doc_id, number, tuple(c.id for c in comps))
        if not comps or key in seen:
            return
        seen.add(key)
        # Blank lines keep components apart as sentences, so one quoted sentence is not
        # repeated inside a longer multi-component passage.
        # A table quotes row by row: the row that matches, not the whole table.
        texts = [rows_as_sentences(c.content) if c.kind is ComponentKind.TABLE else c.content for c in comps]
        passages.append(EvidencePassage(doc_id, number, key[2], "\n\n".join(texts), score))

    for scored in evidence.pages:
        page = book.page(scored.doc_id, scored.page)
        for comp in sorted(page.components, key=lambda c: c.order) if page else []:
            add(scored.doc_id, scored.page, [comp.id], scored.score)
    ranked = {(p.doc_id, p.page) for p in evidence.pages}
    for mention, score in [(m, s.score) for s in evidence.entities for m in quoted_mentions(s.entity, ranked)] + [
        (m, s.score) for s in evidence.relations for m in quoted_mentions(s.relation, ranked)
    ]:
        add(mention.doc_id, mention.page, mention.component_ids, score)
    return passages


def quoted_mentions(item: Entity | Relation, ranked: set[tuple[str, int]]) -> list[Mention]:
    """The mentions of an entity or relation that give passages, in its order: every one on a
    page the evidence ranks, and of the others the first ``OFF_PAGE_MENTIONS``. A hub of a
    filing ("stock units", mentioned on thousands of pages) would otherwise make a passage of
    every page it is named on, none of them chosen for the question."""
    off_page = 0
    kept = []
    for mention in item.mentions:
        if (mention.doc_id, mention.page) not in ranked:
            off_page += 1
            if off_page > OFF_PAGE_MENTIONS:
                continue
        kept.append(mention)
    return kept


def offline_answer(
    query: str, evidence: Evidence, book: CitationBook, reason: str = NO_MODEL, items: Sequence[str] = ()
) -> str:
    """The extractive answer (no model, for ``reason``), citing the components it quotes;
    ``items`` are quoted first (a measure's input line items: ``extractive.extractive_answer``)."""
    passages = offline_passages(evidence, book)
    parties = compared_parties(evidence)
    return extractive_answer(
        query, passages, book, reason=reason, items=items, parties=parties, named=named_documents(evidence)
    )
