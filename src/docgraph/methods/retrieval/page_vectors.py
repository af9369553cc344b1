"""Page vectors and the embedding of image+text items, shared by KG4VD and the ``pages`` baseline.

Keys are ``"<doc_id>:<page>"`` (``page_key`` / ``parse_page_key``). ``page_matrix``
represents each page whole: with a real image embedder, the rendered page with its
text; with the offline text fallback, the normalised mean of the page's chunk vectors
(chunks of ``CHUNK_WORDS`` words, embedded as ``chunk_vectors``: body plus context elements), so a
page is not its first 512 tokens, and the chunk rows come back for callers that index
them (KG4VD's structural layer) at no extra cost. A page without chunks is embedded
as its page item either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...models.base import ImageItem
from ...models.usage import embedding_stage
from ...progress import Progress
from ...types import Chunk, Page
from ..base import MethodContext
from ..building.chunking import document_chunks
from ..building.embed_blocks import blocks
from .chunk_vectors import ContextualChunks

MAX_PAGE_TEXT_CHARS = 4000
CHUNK_WORDS = 160  # the chunk baselines' default


def page_key(doc_id: str, page: int) -> str:
    return f"{doc_id}:{page}"


def parse_page_key(key: str) -> tuple[str, int]:
    doc_id, _, number = key.rpartition(":")
    return doc_id, int(number)


def page_item(ctx: MethodContext, page: Page) -> ImageItem:
    text = "\n".join(
        c.content for c in sorted(page.components, key=lambda c: c.order) if c.content and not c.furniture
    )[:MAX_PAGE_TEXT_CHARS]
    image = ctx.path(page.image_path) if page.image_path else None
    return ImageItem(image_path=image if image is not None and image.exists() else None, text=text)


def embed_items(
    ctx: MethodContext, items: Sequence[ImageItem], progress: Progress | None = None, description: str = "kg4vd vectors"
) -> np.ndarray:
    """Image-embedder rows for ``items``, one ``embed_blocks`` block per call, so the embedding
    cache keeps finished blocks when a long run is interrupted and ``progress`` moves every
    few seconds; the embedding usage is metered as ``embed.<description>``."""
    if not items:
        return np.zeros((0, 0), dtype=np.float32)
    if progress is not None:
        progress.start(len(items), description)
    try:
        parts = []
        with embedding_stage(description):
            for start, end in blocks([len(item.text or "") for item in items]):
                parts.append(np.asarray(ctx.models.image_embedder.embed_items(items[start:end]), dtype=np.float32))
                if progress is not None:
                    progress.advance(len(parts[-1]))
    finally:
        if progress is not None:
            progress.close()
    return np.vstack(parts)


def page_matrix(
    ctx: MethodContext, pages: Sequence[Page], progress: Progress | None = None, label: str = "page"
) -> tuple[list[Chunk], np.ndarray, np.ndarray]:
    """(chunks of ``pages``, their rows, one row per page in ``pages`` order); see module doc."""
    chunks = document_chunks(pages, CHUNK_WORDS)
    parts = ContextualChunks.of(chunks, ctx.settings.models.embedding)
    chunk_rows = (
        parts.combine(
            embed_items(
                ctx, [ImageItem(image_path=None, text=t) for t in parts.texts()], progress, f"{label} chunk vectors"
            )
        )
        if chunks
        else np.zeros((0, 0), np.float32)
    )
    fallback = bool(getattr(ctx.models.image_embedder, "is_text_fallback", False))
    by_page: dict[tuple[str, int], list[int]] = {}
    for row, chunk in enumerate(chunks):
        by_page.setdefault((chunk.doc_id, chunk.page), []).append(row)
    whole_pages = [p for p in pages if not fallback or (p.doc_id, p.number) not in by_page]
    whole = dict(
        zip(
            [(p.doc_id, p.number) for p in whole_pages],
            embed_items(ctx, [page_item(ctx, p) for p in whole_pages], progress, f"{label} page vectors"),
        )
    )
    rows = []
    for p in pages:
        key = (p.doc_id, p.number)
        if key in whole:
            rows.append(whole[key])
        else:
            mean = chunk_rows[by_page[key]].mean(axis=0)
            rows.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
    return chunks, chunk_rows, np.vstack(rows).astype(np.float32)
