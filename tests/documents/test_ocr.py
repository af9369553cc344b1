"""Scanned path: pages without a text layer are OCRed (and only those); PNG/JPEG page images."""

from __future__ import annotations

from collections import Counter

import pymupdf
import pytest
from docs_helpers import rasterise, word_recall
from PIL import Image

from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.documents.images import IMAGE_DPI, image_to_pdf
from docgraph.store import SQLiteStore
from docgraph.types import ComponentKind

WORLD_HISTORY = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, documents_dir):
    """A 3-page PDF: page 1 born-digital, pages 2-3 image-only scans of World History pages 2-3."""
    tmp = tmp_path_factory.mktemp("ocr")
    scans = rasterise(documents_dir / WORLD_HISTORY, [2, 3], tmp / "scans.pdf")
    with pymupdf.open() as out, pymupdf.open(documents_dir / WORLD_HISTORY) as src, pymupdf.open(scans) as img:
        out.insert_pdf(src, from_page=1, to_page=1)
        out.insert_pdf(img)
        out.save(tmp / "mixed.pdf")
    root = tmp / "ws"
    store = SQLiteStore(root)
    report = ingest(store, root, IngestSettings(workers=2), [tmp / "mixed.pdf"])
    assert report.failures == []
    yield store, root, store.get_document(report.added[0].id, with_pages=True)
    store.close()


def test_only_pages_without_text_layer_are_ocred(mixed):
    _, _, doc = mixed
    assert [p.source for p in doc.pages] == ["pdf", "ocr", "ocr"]
    for page in doc.pages[1:]:
        assert page.components and all(c.source == "ocr" for c in page.components)
        assert all(c.bbox.inside(page.width, page.height) for c in page.components)


def test_ocr_recovers_the_words_of_the_text_layer(mixed, documents_dir):
    _, _, doc = mixed
    with pymupdf.open(documents_dir / WORLD_HISTORY) as src:
        for page, original in zip(doc.pages[1:], (2, 3)):
            assert word_recall(page.text, src[original - 1].get_text()) >= 0.9


def test_ocr_regions_are_typed_and_get_section_paths(mixed):
    _, _, doc = mixed
    kinds = Counter(c.kind for p in doc.pages[1:] for c in p.components)
    assert kinds[ComponentKind.PARAGRAPH] >= 4 and kinds[ComponentKind.TITLE] >= 2
    titles = [c.text for c in doc.pages[2].components if c.kind is ComponentKind.TITLE]
    assert any("Pedagogical Foundation" in t for t in titles)
    assert all(c.section_path and c.section_path[0] == doc.title for p in doc.pages for c in p.components)


def test_png_page_image_is_ocred(tmp_path, documents_dir):
    with pymupdf.open(documents_dir / WORLD_HISTORY) as src:
        clip = pymupdf.Rect(72, 95, 540, 165)  # the "About OpenStax" paragraph of page 2
        src[1].get_pixmap(dpi=IMAGE_DPI, clip=clip).save(tmp_path / "paragraph.png")
        reference = src[1].get_text(clip=clip)
    store = SQLiteStore(tmp_path / "ws")
    report = ingest(store, tmp_path / "ws", IngestSettings(workers=1), [tmp_path / "paragraph.png"])
    doc = store.get_document(report.added[0].id, with_pages=True)
    assert (doc.kind, doc.page_count, doc.pages[0].source) == ("image", 1, "ocr")
    page = doc.pages[0]
    assert Image.open(tmp_path / "ws" / page.image_path).size == Image.open(tmp_path / "paragraph.png").size
    assert word_recall(page.text, reference) >= 0.9
    store.close()


def test_exif_rotated_jpeg_is_laid_out_upright(tmp_path):
    image = Image.new("RGB", (300, 100), "white")
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: displayed rotated by 90°
    image.save(tmp_path / "photo.jpg", exif=exif)
    pdf = image_to_pdf(tmp_path / "photo.jpg", tmp_path / "photo.pdf", dpi=144, max_render_pixels=10**8)
    with pymupdf.open(pdf) as doc:
        assert (round(doc[0].rect.width), round(doc[0].rect.height)) == (50, 150)
