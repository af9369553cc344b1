"""Page images and component crops as image files under the workspace (PyMuPDF rendering).

Layout (paths stored workspace-relative): ``pages/<doc_id>/p0001.jpg`` and
``crops/<doc_id>/p0001-IM1.jpg`` (``.png`` with ``ingest.image_format = "png"``, and in
workspaces ingested before JPEG became the default: readers follow the stored path). Files
are written atomically (temp file + rename), so an interrupted run never leaves a
half-written image behind a stored page.

Why JPEG by default: at quality 90 it encodes several times faster than PNG and takes less
disk on average (more than PNG on plain text pages, much less on photographs; docs/results,
2026-12-02 "page images and crops as JPEG"). Nothing offline reads the pixels; a vision
model or the web viewer sees no difference at that quality.
"""

from __future__ import annotations

import io
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image

from ..errors import InputError
from ..types import BBox

PAGE_DIR = "pages"
CROP_DIR = "crops"
PNG_COMPRESS_LEVEL = 1  # measured: faster and smaller than MuPDF's PNG writer on photo pages
SUFFIXES = {"jpeg": ".jpg", "png": ".png"}  # ingest.image_format → file suffix


def page_image_path(doc_id: str, number: int, image_format: str = "png") -> str:
    return f"{PAGE_DIR}/{doc_id}/p{number:04d}{SUFFIXES[image_format]}"


def crop_image_path(doc_id: str, number: int, component_id: str, image_format: str = "png") -> str:
    return f"{CROP_DIR}/{doc_id}/p{number:04d}-{component_id}{SUFFIXES[image_format]}"


def remove_document_files(root: Path, doc_id: str) -> None:
    """Delete the page images and crops of one document (missing folders are fine)."""
    for folder in (PAGE_DIR, CROP_DIR):
        shutil.rmtree(Path(root) / folder / doc_id, ignore_errors=True)


def remove_partial_files(root: Path, doc_id: str) -> None:
    """Delete the temporary files of writes that never finished (``save_image`` killed mid-write)."""
    for folder in (PAGE_DIR, CROP_DIR):
        for tmp in (Path(root) / folder / doc_id).glob(".*.tmp"):
            tmp.unlink(missing_ok=True)


def remove_unstored_page_files(root: Path, doc_id: str, stored: set[int]) -> None:
    """Delete the images and crops of pages that have no stored row (written before a failure
    stopped the add: the resumed add renders them again), and temporary files."""
    for folder in (PAGE_DIR, CROP_DIR):
        for path in (Path(root) / folder / doc_id).glob("p*.*"):
            number = path.name[1:5]
            if number.isdigit() and int(number) not in stored:
                path.unlink(missing_ok=True)
    remove_partial_files(root, doc_id)


def render_size(width: float, height: float, dpi: int) -> tuple[int, int]:
    """Pixel size of a ``width`` × ``height`` point page rendered at ``dpi`` (MuPDF's rounding)."""
    zoom = dpi / 72.0
    pixels = (pymupdf.Rect(0, 0, width, height) * pymupdf.Matrix(zoom, zoom)).irect
    return max(1, pixels.width), max(1, pixels.height)


def check_render_size(width: float, height: float, dpi: int, max_pixels: int, *, path: str, page: int) -> None:
    """Raise ``InputError`` when the page's render would exceed ``max_pixels``."""
    w, h = render_size(width, height, dpi)
    if w * h > max_pixels:
        raise InputError(
            f"would render to {w}×{h} px ({w * h / 1e6:.0f} MP) at {dpi} dpi, over the "
            f"{max_pixels / 1e6:.0f} MP cap; lower ingest.dpi or raise ingest.max_render_pixels",
            path=path,
            page=page,
        )


def pixel_box(box: BBox, scale: float, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The pixel rectangle covering ``box`` at ``scale`` px/pt (outward rounding, clipped to ``size``)."""
    w, h = size
    return (
        max(0, math.floor(box.x0 * scale)),
        max(0, math.floor(box.y0 * scale)),
        min(w, math.ceil(box.x1 * scale)),
        min(h, math.ceil(box.y1 * scale)),
    )


def png_bytes(image: Image.Image) -> bytes:
    """``image`` as PNG: fast zlib level, and for RGB images OpenCV's encoder with the Sub row
    filter, faster than Pillow's (which tries every filter on every row) for a few per cent
    more bytes. Lossless either way."""
    if image.mode == "RGB" and _CV2_PNG_PARAMS:
        import cv2

        ok, encoded = cv2.imencode(".png", cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR), _CV2_PNG_PARAMS)
        if ok:
            return encoded.tobytes()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def _cv2_png_params() -> list[int]:
    """OpenCV's PNG options (level, Sub filter), or [] when OpenCV lacks the filter option (< 4.10)."""
    try:
        import cv2
    except ImportError:  # pragma: no cover - opencv comes with rapidocr
        return []
    if not hasattr(cv2, "IMWRITE_PNG_FILTER"):
        return []
    return [cv2.IMWRITE_PNG_COMPRESSION, PNG_COMPRESS_LEVEL, cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_SUB]


_CV2_PNG_PARAMS = _cv2_png_params()


def _cv2_jpeg(image: Image.Image, quality: int) -> bytes | None:
    """An RGB ``image`` as JPEG by OpenCV's encoder; None without OpenCV or when it fails."""
    try:
        import cv2
    except ImportError:  # pragma: no cover - opencv comes with rapidocr
        return None
    ok, encoded = cv2.imencode(
        ".jpg", cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality]
    )
    return encoded.tobytes() if ok else None


def jpeg_bytes(image: Image.Image, quality: int) -> bytes:
    """``image`` as JPEG at ``quality`` (OpenCV's encoder; Pillow's without OpenCV)."""
    encoded = _cv2_jpeg(image, quality) if image.mode == "RGB" else None
    if encoded is not None:
        return encoded
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def save_image(image: Image.Image, root: Path, rel: str, jpeg_quality: int = 90) -> None:
    """Write ``image`` to ``root/rel`` atomically, as JPEG when ``rel`` ends in ``.jpg``, else PNG
    (``png_bytes``)."""
    target = Path(root) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        data = jpeg_bytes(image, jpeg_quality) if target.suffix == ".jpg" else png_bytes(image)
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except BaseException:  # a full disk, an interrupt: no half-written file left behind
        tmp.unlink(missing_ok=True)
        raise


def render_page(page: pymupdf.Page, dpi: int) -> Image.Image:
    """The whole page as an RGB image at ``dpi``."""
    pix = page.get_pixmap(dpi=dpi, alpha=False, colorspace=pymupdf.csRGB)
    return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)


def crop(page: pymupdf.Page, page_image: Image.Image, image_dpi: int, bbox: BBox, dpi: int) -> Image.Image | None:
    """The region ``bbox`` at ``dpi``: cut from ``page_image`` (rendered at ``image_dpi``) when the
    resolutions match, else rendered; None when it would be under 2 px wide or high."""
    if image_dpi == dpi:
        x0, y0, x1, y1 = pixel_box(bbox, dpi / 72.0, page_image.size)
        return page_image.crop((x0, y0, x1, y1)) if x1 - x0 >= 2 and y1 - y0 >= 2 else None
    clip = pymupdf.Rect(bbox.as_tuple()) & page.rect
    if clip.is_empty or clip.width * dpi / 72 < 2 or clip.height * dpi / 72 < 2:
        return None
    pix = page.get_pixmap(dpi=dpi, clip=clip, alpha=False, colorspace=pymupdf.csRGB)
    return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
