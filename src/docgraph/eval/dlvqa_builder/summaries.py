"""Page summaries and the document summary (stages ``dlvqa.page_summary`` and
``dlvqa.doc_summary``).

A page summary is asked with the rendered page image and the component manifest. The
document summary is asked from the page summaries in page order; a document with more
pages than ``batch`` is summarised in parts of ``batch`` pages first
(``dlvqa.doc_summary.part``), and the parts are then summarised together.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...models.base import ChatModel, user
from ...prompts import material, render_prompt
from ...types import Page
from .pages import component_manifest, page_image, sees_images
from .schemas import SummaryReply

_PACKAGE = __package__


def summarize_page(chat: ChatModel, root: Path, title: str, page: Page, pages: int) -> str:
    """The summary of one page (one call)."""
    prompt = render_prompt(
        _PACKAGE,
        "page_summary.md",
        title=material(title),
        page=str(page.number),
        pages=str(pages),
        manifest=material(component_manifest(page)),
    )
    images = [page_image(root, page)] if sees_images(chat) else []
    result = chat.complete([user(prompt, images)], stage="dlvqa.page_summary", schema=SummaryReply)
    return _summary(result.parsed)


def summarize_document(
    chat: ChatModel, title: str, summaries: Sequence[tuple[int, str]], pages: int, batch: int
) -> str:
    """The document summary from ``(page, summary)`` pairs in page order (see the module doc)."""
    items = [(number, number, text) for number, text in summaries]
    stage = "dlvqa.doc_summary"
    while len(items) > batch:
        parts = [items[i : i + batch] for i in range(0, len(items), batch)]
        items = [
            (
                p[0][0],
                p[-1][1],
                _ask(chat, title, pages, p, f"; summaries of part {n} of {len(parts)}", f"{stage}.part"),
            )
            for n, p in enumerate(parts, start=1)
        ]
    return _ask(chat, title, pages, items, "", stage)


def _ask(chat: ChatModel, title: str, pages: int, items: Sequence[tuple[int, int, str]], part: str, stage: str) -> str:
    listing = "\n".join(f"{_label(first, last)}: {text}" for first, last, text in items) or "(no page summaries)"
    prompt = render_prompt(
        _PACKAGE, "doc_summary.md", title=material(title), pages=str(pages), part=part, summaries=material(listing)
    )
    return _summary(chat.complete([user(prompt)], stage=stage, schema=SummaryReply).parsed)


def _label(first: int, last: int) -> str:
    return f"Page {first}" if first == last else f"Pages {first}–{last}"


def _summary(parsed: object) -> str:
    return parsed.summary.strip() if isinstance(parsed, SummaryReply) else ""
