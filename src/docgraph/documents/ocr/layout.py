"""Pure geometry for the OCR path: merge OCR text lines into layout regions, in reading order.

Input: OCR lines and typed layout regions, both in page points. Output: ``LayoutBlock``s
with ``source="ocr"``. A line belongs to the region covering most of it; lines outside
every region become paragraphs of their own; table regions become Markdown grids by
clustering their lines into rows and column bands. No models and no I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from ...types import ComponentKind
from ..lines import lines_to_text
from ..parser import LayoutBlock

Box = tuple[float, float, float, float]

# rapid-layout's CDLA model classes → component kinds
CDLA_KINDS = {
    "text": ComponentKind.PARAGRAPH,
    "reference": ComponentKind.PARAGRAPH,
    "title": ComponentKind.TITLE,
    "figure": ComponentKind.IMAGE,
    "figure_caption": ComponentKind.CAPTION,
    "table": ComponentKind.TABLE,
    "table_caption": ComponentKind.CAPTION,
    "header": ComponentKind.HEADER,
    "footer": ComponentKind.FOOTER,
    "equation": ComponentKind.EQUATION,
}
LINE_HEIGHT_PER_POINT = 1.3  # an OCR line box is ~1.3× the font size


@dataclass(frozen=True)
class OcrLine:
    bbox: Box
    text: str
    confidence: float = 1.0  # the reader's own, 0..1 (Tesseract: the line's mean word confidence)


@dataclass(frozen=True)
class Region:
    bbox: Box
    kind: ComponentKind


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _overlap(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _rows(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Lines grouped into visual rows (vertical centres within half a line height), left to right."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.bbox[1] + ln.bbox[3]) / 2):
        centre = (line.bbox[1] + line.bbox[3]) / 2
        if rows:
            top, bottom = min(ln.bbox[1] for ln in rows[-1]), max(ln.bbox[3] for ln in rows[-1])
            if top <= centre <= bottom:
                rows[-1].append(line)
                continue
        rows.append([line])
    return [sorted(row, key=lambda ln: ln.bbox[0]) for row in rows]


def _text(lines: list[OcrLine]) -> str:
    return lines_to_text([" ".join(ln.text for ln in row) for row in _rows(lines)])


def grid_markdown(lines: list[OcrLine]) -> str:
    """A Markdown table from the lines of a table region: rows by position, columns by x-bands."""
    rows = _rows(lines)
    bands: list[list[float]] = []
    for x0, x1 in sorted((ln.bbox[0], ln.bbox[2]) for ln in lines):
        if bands and x0 <= bands[-1][1]:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    grid = []
    for row in rows:
        cells = [""] * len(bands)
        for line in row:
            col = max(range(len(bands)), key=lambda i: min(line.bbox[2], bands[i][1]) - max(line.bbox[0], bands[i][0]))
            cells[col] = f"{cells[col]} {line.text}".strip()
        grid.append(["" if not c else c.replace("|", "\\|") for c in cells])
    if not grid:
        return ""
    out = ["|" + "|".join(grid[0]) + "|", "|" + "|".join("---" for _ in bands) + "|"]
    out += ["|" + "|".join(row) + "|" for row in grid[1:]]
    return "\n".join(out)


def _paragraphs(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Group loose lines into paragraphs: a new one starts at a large vertical gap or no x-overlap."""
    groups: list[list[OcrLine]] = []
    for row in _rows(lines):
        box = _union([ln.bbox for ln in row])
        height = box[3] - box[1]
        if groups:
            last = _union([ln.bbox for ln in groups[-1]])
            x_overlap = min(last[2], box[2]) - max(last[0], box[0])
            if box[1] - last[3] <= 0.8 * height and x_overlap > 0:
                groups[-1].extend(row)
                continue
        groups.append(list(row))
    return groups


def reading_order(blocks: list[LayoutBlock], page_width: float) -> list[LayoutBlock]:
    """Column-aware order: full-width blocks split the page into bands; in each band the left
    column is read before the right one, each top to bottom."""
    middle = page_width / 2

    def column(b: LayoutBlock) -> int:
        x0, _, x1, _ = b.bbox
        return 0 if x1 <= middle + 0.05 * page_width else 1 if x0 >= middle - 0.05 * page_width else -1

    ordered: list[LayoutBlock] = []
    band: list[LayoutBlock] = []
    for block in sorted(blocks, key=lambda b: (b.bbox[1], b.bbox[0])):
        if column(block) == -1:
            ordered += sorted(band, key=lambda b: (column(b), b.bbox[1], b.bbox[0]))
            band = []
            ordered.append(block)
        else:
            band.append(block)
    return ordered + sorted(band, key=lambda b: (column(b), b.bbox[1], b.bbox[0]))


def _region_block(region: Region, lines: list[OcrLine]) -> LayoutBlock | None:
    kind = region.kind
    # text regions shrink to their lines (the model's regions overlap); visual ones keep their extent
    boxes = [ln.bbox for ln in lines]
    box = _union([region.bbox] + boxes) if kind.is_visual or not boxes else _union(boxes)
    if kind is ComponentKind.TABLE and lines:
        markdown = grid_markdown(lines)
        text = "\n".join(" | ".join(ln.text for ln in row) for row in _rows(lines))
        return LayoutBlock(kind, box, text=text, markdown=markdown, source="ocr")
    if not lines and not kind.is_visual:
        return None
    heading = None
    if kind is ComponentKind.TITLE:
        heading = median(ln.bbox[3] - ln.bbox[1] for ln in lines) / LINE_HEIGHT_PER_POINT
    return LayoutBlock(kind, box, text=_text(lines), heading_size=heading, source="ocr")


def merge(lines: list[OcrLine], regions: list[Region], width: float, height: float) -> list[LayoutBlock]:
    """Blocks of one OCRed page in reading order, boxes clipped to the page."""
    assigned: dict[int, list[OcrLine]] = {i: [] for i in range(len(regions))}
    loose: list[OcrLine] = []
    for line in lines:
        best, share = None, 0.5
        for i, region in enumerate(regions):
            frac = _overlap(line.bbox, region.bbox) / max(_area(line.bbox), 1e-6)
            if frac > share or (best is not None and frac == share and _area(region.bbox) < _area(regions[best].bbox)):
                best, share = i, frac
        (assigned[best] if best is not None else loose).append(line)
    blocks = [b for i, r in enumerate(regions) if (b := _region_block(r, assigned[i])) is not None]
    blocks += [
        LayoutBlock(ComponentKind.PARAGRAPH, _union([ln.bbox for ln in g]), text=_text(g), source="ocr")
        for g in _paragraphs(loose)
    ]
    clipped = []
    for b in blocks:
        x0, y0, x1, y1 = max(0.0, b.bbox[0]), max(0.0, b.bbox[1]), min(width, b.bbox[2]), min(height, b.bbox[3])
        if x1 - x0 > 1 and y1 - y0 > 1:
            clipped.append(LayoutBlock(b.kind, (x0, y0, x1, y1), b.text, b.markdown, b.heading_size, "ocr"))
    return reading_order(clipped, width)
