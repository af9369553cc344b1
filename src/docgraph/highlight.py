"""Cited pages with their regions outlined: what ``ask --highlight DIR`` and the web app show."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from PIL import Image, ImageDraw

from .store.base import Store
from .types import Answer, Citation

OUTLINE = (230, 40, 40)


def highlight_page(store: Store, root: Path, citations: list[Citation], out_path: Path) -> Path:
    """Write the page of ``citations`` (all on one page) with each cited box outlined and numbered."""
    first = citations[0]
    page = store.get_page(first.doc_id, first.page)
    if page is None:
        raise FileNotFoundError(f"page {first.page} of {first.doc_id} is not in the workspace")
    scale = page.dpi / 72.0
    with Image.open(root / page.image_path) as src:
        image = src.convert("RGB")
    draw = ImageDraw.Draw(image)
    width = max(2, round(scale * 1.5))
    for citation in citations:
        for box in citation.bboxes:
            rect = [box.x0 * scale, box.y0 * scale, box.x1 * scale, box.y1 * scale]
            draw.rectangle(rect, outline=OUTLINE, width=width)
            draw.text((rect[0] + 2, max(0, rect[1] - 12)), f"[{citation.number}]", fill=OUTLINE)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    image.save(out_path, format="PNG")
    return out_path


def write_highlights(store: Store, root: Path, answer: Answer, out_dir: Path) -> list[Path]:
    """One PNG per cited page, named ``<doc_id>-p<page>.png``; returns the paths written."""
    by_page: dict[tuple[str, int], list[Citation]] = defaultdict(list)
    for citation in answer.citations:
        by_page[(citation.doc_id, citation.page)].append(citation)
    return [
        highlight_page(store, root, cits, Path(out_dir) / f"{doc_id}-p{number:04d}.png")
        for (doc_id, number), cits in sorted(by_page.items())
    ]
