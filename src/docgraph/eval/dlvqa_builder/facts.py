"""Grounded atomic facts of one page (stage ``dlvqa.facts``).

The model sees the page's Set-of-Marks image (components boxed and tagged by id), the
component manifest, the document summary and the page summary, and returns at most
``max_facts`` facts. ``ground`` then ties every fact to components of that page: ids the
page does not have are dropped; a visual fact left without a visual component (image,
table, equation) is tied to the page's only one when there is exactly one, and is
otherwise dropped and counted — a visual fact must point at what it describes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...models.base import ChatModel, user
from ...models.chat.response_format import json_schema_format
from ...prompts import material, render_prompt
from ...types import Page
from .pages import component_manifest, sees_images, visual_components
from .schemas import Fact, FactDraft, FactsReply

_PACKAGE = __package__


@dataclass
class PageFacts:
    facts: list[Fact]
    ungrounded: int = 0  # visual facts dropped for want of a visual component


def fact_id(page: int, n: int) -> str:
    return f"p{page}.{n}"


def ground(drafts: Sequence[FactDraft], page: Page) -> PageFacts:
    """Facts of ``page`` from the model's drafts (see the module doc); ids ``p<page>.<n>``."""
    known = {c.id for c in page.components}
    visual = visual_components(page)
    facts: list[Any] = []
    dropped = 0
    for draft in drafts:
        text = " ".join(draft.text.split())
        if not text:
            continue
        ids = list(dict.fromkeys(c.strip() for c in draft.components if c.strip() in known))
        if draft.type == "visual" and not any(c in visual for c in ids):
            if len(visual) != 1:
                dropped += 1
                continue
            ids = [visual[0], *ids]
        facts.append(
            Fact(id=fact_id(page.number, len(facts) + 1), page=page.number, type=draft.type, text=text, components=ids)
        )
    return PageFacts(facts, dropped)


def extract_facts(
    chat: ChatModel, root: Path, title: str, page: Page, pages: int, doc_summary: str, page_summary: str, max_facts: int
) -> PageFacts:
    """The grounded facts of one page (one call)."""
    prompt = render_prompt(
        _PACKAGE,
        "facts.md",
        title=material(title),
        page=str(page.number),
        pages=str(pages),
        doc_summary=material(doc_summary or "(none)"),
        page_summary=material(page_summary or "(none)"),
        manifest=material(component_manifest(page)),
        max_facts=str(max_facts),
    )
    fmt = json_schema_format(FactsReply, max_items={"facts": max_facts})
    with tempfile.TemporaryDirectory(prefix="dlvqa-marks-") as folder:
        images = [_marks(root, page, Path(folder))] if sees_images(chat) else []
        result = chat.complete([user(prompt, images)], stage="dlvqa.facts", schema=FactsReply, response_format=fmt)
    reply = result.parsed if isinstance(result.parsed, FactsReply) else FactsReply()
    return ground(reply.facts[:max_facts], page)


def _marks(root: Path, page: Page, folder: Path) -> Path:
    """The page's Set-of-Marks image, drawn into ``folder`` (calls are cached by image content)."""
    from ...documents.marks import draw_marks

    return Path(draw_marks(page, root, folder / f"{page.doc_id}-p{page.number:04d}.png"))
