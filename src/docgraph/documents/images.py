"""PNG/JPEG page images → a one-page PDF, so every input reaches the parser as a PDF.

The page is laid out at ``IMAGE_DPI`` pixels per inch, so rendering at the default 144 dpi
reproduces the image's own pixels. EXIF orientation is applied; JPEGs are embedded as-is.
Pages without a text layer take the OCR path, so an image page is always OCRed.
"""

from __future__ import annotations

import io
from pathlib import Path

import pymupdf
from PIL import Image, ImageOps, UnidentifiedImageError

from ..errors import InputError
from .render import check_render_size

IMAGE_DPI = 144
_ORIENTATION_TAG = 0x0112


def _image_size_and_orientation(path: Path) -> tuple[int, int, int]:
    try:
        with Image.open(path) as im:
            im.verify()
        with Image.open(path) as im:
            orientation = im.getexif().get(_ORIENTATION_TAG, 1)
            width, height = im.size
    except Image.DecompressionBombError as exc:
        raise InputError(f"is too large an image to read safely ({exc}); scale it down", path=str(path)) from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise InputError(
            f"is not a readable PNG/JPEG image ({exc}); re-export or re-download it", path=str(path)
        ) from exc
    if orientation in (5, 6, 7, 8):  # rotated by 90°: width and height swap
        width, height = height, width
    return width, height, orientation


def image_to_pdf(path: Path, out: Path, *, dpi: int, max_render_pixels: int) -> Path:
    """Write a one-page PDF holding the image at ``path``; refuses images over the render cap."""
    width, height, orientation = _image_size_and_orientation(path)
    page_w, page_h = width * 72.0 / IMAGE_DPI, height * 72.0 / IMAGE_DPI
    check_render_size(page_w, page_h, dpi, max_render_pixels, path=str(path), page=1)
    doc = pymupdf.open()
    try:
        page = doc.new_page(width=page_w, height=page_h)
        if orientation == 1:
            page.insert_image(page.rect, filename=str(path))
        else:
            with Image.open(path) as im:
                upright = ImageOps.exif_transpose(im)
                buffer = io.BytesIO()
                upright.save(buffer, format="PNG")
            page.insert_image(page.rect, stream=buffer.getvalue())
        out.parent.mkdir(parents=True, exist_ok=True)
        doc.save(out, deflate=True)
    except (RuntimeError, ValueError) as exc:
        raise InputError(
            f"could not be turned into a page ({exc}); re-export it as PNG or JPEG", path=str(path)
        ) from exc
    finally:
        doc.close()
    return out
