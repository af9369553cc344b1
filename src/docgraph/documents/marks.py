"""Set-of-Marks page images: every component boxed and tagged with its id, colour by kind;
masked components greyed out; crops of the union of given components.

Drawn with Pillow on the stored page image; output is deterministic (same page and mask →
byte-identical PNG). Boxes are page points scaled by ``page.dpi / 72``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from ..errors import InputError
from ..types import BBox, Component, ComponentKind, Page
from .render import pixel_box

KIND_COLOURS: dict[ComponentKind, tuple[int, int, int]] = {
    ComponentKind.PARAGRAPH: (31, 119, 180),
    ComponentKind.TITLE: (214, 39, 40),
    ComponentKind.TABLE: (44, 160, 44),
    ComponentKind.IMAGE: (255, 127, 14),
    ComponentKind.CAPTION: (148, 103, 189),
    ComponentKind.EQUATION: (140, 86, 75),
    ComponentKind.LIST: (23, 190, 207),
    ComponentKind.HEADER: (127, 127, 127),
    ComponentKind.FOOTER: (127, 127, 127),
}
MASK_FILL = (190, 190, 190)
TAG_TEXT = (255, 255, 255)


def _page_image(page: Page, root: Path) -> Image.Image:
    path = Path(root) / page.image_path
    if not path.is_file():
        raise InputError(
            f"page image {path} is missing; remove and re-add the document", path=page.doc_id, page=page.number
        )
    with Image.open(path) as src:
        return src.convert("RGB")


def _components(page: Page, ids: Iterable[str]) -> list[Component]:
    wanted = list(dict.fromkeys(ids))
    known = {c.id: c for c in page.components}
    unknown = [i for i in wanted if i not in known]
    if unknown:
        raise InputError(
            f"no component(s) {', '.join(unknown)} on this page; it has {', '.join(known) or 'none'}",
            path=page.doc_id,
            page=page.number,
        )
    return [known[i] for i in wanted]


def marks_image(page: Page, root: Path, mask: Iterable[str] = ()) -> Image.Image:
    """The Set-of-Marks image of ``page`` with the components in ``mask`` greyed out."""
    masked = {c.id for c in _components(page, mask)}
    image = _page_image(page, root)
    scale = page.dpi / 72.0
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(10, round(7 * scale)))
    line = max(2, round(scale))
    ordered = sorted(page.components, key=lambda c: c.order)
    for comp in ordered:
        if comp.id in masked:
            draw.rectangle(pixel_box(comp.bbox, scale, image.size), fill=MASK_FILL)
    for comp in ordered:
        if comp.id in masked:
            continue
        colour = KIND_COLOURS[comp.kind]
        x0, y0, x1, y1 = pixel_box(comp.bbox, scale, image.size)
        draw.rectangle((x0, y0, max(x0, x1 - 1), max(y0, y1 - 1)), outline=colour, width=line)
        left, top, right, bottom = draw.textbbox((0, 0), comp.id, font=font)
        tag_w, tag_h = right - left + 6, bottom - top + 4
        ty = y0 - tag_h if y0 - tag_h >= 0 else y0
        draw.rectangle((x0, ty, x0 + tag_w, ty + tag_h), fill=colour)
        draw.text((x0 + 3 - left, ty + 2 - top), comp.id, fill=TAG_TEXT, font=font)
    return image


def _save(image: Image.Image, out_path: Path) -> Path:
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    image.save(out_path, format="PNG")
    return out_path


def draw_marks(page: Page, root: Path, out_path: Path, mask: Iterable[str] = frozenset()) -> Path:
    """Write the Set-of-Marks PNG of ``page`` to ``out_path`` (``mask``: ids to grey out)."""
    return _save(marks_image(page, root, mask), out_path)


def crop_components(page: Page, root: Path, ids: Iterable[str], out_path: Path, *, padding: float = 0.0) -> Path:
    """Write the crop of the union of the given components' boxes (plus ``padding`` points)."""
    comps = _components(page, ids)
    if not comps:
        raise InputError("no component ids given to crop", path=page.doc_id, page=page.number)
    box = comps[0].bbox
    for comp in comps[1:]:
        box = box.union(comp.bbox)
    box = BBox(x0=box.x0 - padding, y0=box.y0 - padding, x1=box.x1 + padding, y1=box.y1 + padding)
    image = _page_image(page, root)
    return _save(image.crop(pixel_box(box, page.dpi / 72.0, image.size)), out_path)
