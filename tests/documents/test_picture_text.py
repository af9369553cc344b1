"""Text drawn inside pictures of born-digital pages is read by OCR (``documents/picture_text``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
import pytest

from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.documents.ocr.layout import OcrLine
from docgraph.documents.picture_text import new_lines, pictures_to_read, raster_share
from docgraph.methods.building.chunking import page_chunks
from docgraph.store import SQLiteStore
from docgraph.types import BBox, Component, ComponentKind

PICTURE_WORDS = ("Lighthouse", "Turbines", "Harbour")
LAYER_SENTENCE = "Quarterly results for the regional offices are summarised in the chart below."
CHART_PAGE = ("c31e6580d0175ab3f9d99d1ff0bfa000.pdf", 8)  # a survey chart saved as an image


def _picture_pdf(out: Path) -> Path:
    """One page: a sentence in the text layer above a raster image whose words are pixels."""
    with pymupdf.open() as art:
        canvas = art.new_page(width=400, height=220)
        canvas.insert_text((20, 70), "Harbour Lighthouse", fontsize=30)
        canvas.insert_text((20, 140), "Turbines 42% Revenue", fontsize=30)
        pixels = canvas.get_pixmap(dpi=150, alpha=False)
    with pymupdf.open() as doc:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 160), LAYER_SENTENCE * 3, fontsize=12)
        page.insert_image(pymupdf.Rect(97, 200, 497, 420), pixmap=pixels)
        doc.save(out)
    return out


def _ingested(pdf: Path, root: Path, picture_text: bool):
    store = SQLiteStore(root)
    report = ingest(store, root, IngestSettings(workers=1, picture_text=picture_text), [pdf])
    assert report.failures == []
    doc = store.get_document(report.added[0].id, with_pages=True)
    store.close()
    return doc


@pytest.fixture(scope="module")
def picture_pdf(tmp_path_factory) -> Path:
    return _picture_pdf(tmp_path_factory.mktemp("picture") / "picture.pdf")


def test_the_words_of_a_raster_picture_join_its_component_and_chunk(picture_pdf, tmp_path):
    page = _ingested(picture_pdf, tmp_path / "ws", picture_text=True).pages[0]
    pictures = [c for c in page.components if c.kind is ComponentKind.IMAGE]
    assert len(pictures) == 1
    assert all(word in pictures[0].text for word in PICTURE_WORDS)
    assert "Quarterly" not in pictures[0].text  # the layer's own sentence stays where it is
    image_chunks = [c for c in page_chunks(page) if c.modality != "text"]
    assert any(all(word in chunk.text for word in PICTURE_WORDS) for chunk in image_chunks)


def test_turned_off_the_picture_keeps_only_the_layers_text(picture_pdf, tmp_path):
    page = _ingested(picture_pdf, tmp_path / "ws", picture_text=False).pages[0]
    assert not any(word in page.text for word in PICTURE_WORDS)
    assert "Quarterly" in page.text


def test_a_chart_saved_as_an_image_in_a_real_report(shared_data, tmp_path):
    source = shared_data / "mmlongbench_doc" / "documents" / CHART_PAGE[0]
    if not source.is_file():
        pytest.skip("the MMLongBench-Doc documents are not in the shared data")
    excerpt = tmp_path / "chart.pdf"
    with pymupdf.open(source) as src, pymupdf.open() as out:
        out.insert_pdf(src, from_page=CHART_PAGE[1] - 1, to_page=CHART_PAGE[1] - 1)
        out.save(excerpt)
        assert "Reduce Medical Errors" not in src[CHART_PAGE[1] - 1].get_text()
    page = _ingested(excerpt, tmp_path / "ws", picture_text=True).pages[0]
    picture_text = " ".join(c.text for c in page.components if c.kind is ComponentKind.IMAGE)
    assert "Figure 9" in picture_text and "Reduce Medical Errors" in picture_text


def test_reading_a_picture_loads_the_line_reader_alone(picture_pdf):
    from docgraph.documents.ocr.reader import OcrEngine

    with pymupdf.open(picture_pdf) as doc:
        pix = doc[0].get_pixmap(dpi=144, clip=pymupdf.Rect(97, 200, 497, 420), alpha=False)
    engine = OcrEngine(threads=1)
    lines = engine.lines(np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3), 2.0)
    assert "Lighthouse" in " ".join(line.text for line in lines)
    assert engine.reader is not None and engine.regions is None  # no region network for a picture


def _picture(x0: float, y0: float, x1: float, y1: float) -> Component:
    return Component(id="IM1", kind=ComponentKind.IMAGE, bbox=BBox(x0=x0, y0=y0, x1=x1, y1=y1), order=0)


def test_only_large_mostly_raster_pictures_are_read():
    chart, logo, vector = _picture(100, 100, 400, 400), _picture(20, 20, 60, 50), _picture(100, 450, 400, 750)
    images = [(90, 90, 410, 410), (20, 20, 60, 50), (100, 450, 400, 500)]  # the vector one: a strip of raster
    assert raster_share(chart.bbox, images) == 1.0
    assert raster_share(vector.bbox, images) == pytest.approx(1 / 6)
    assert pictures_to_read([chart, logo, vector], images, 595, 842) == [chart]


def test_unsure_lines_and_the_layers_own_words_are_dropped():
    lines = [
        OcrLine((0, 30, 100, 40), "Reduce Medical Errors 50%", 0.9),
        OcrLine((0, 10, 100, 20), "Figure 9", 0.95),
        OcrLine((0, 50, 100, 60), "TNS N Soe", 0.3),  # a photo read as letters
        OcrLine((0, 70, 100, 80), "Source: annual survey", 0.9),  # also in the text layer
        OcrLine((0, 90, 100, 95), "%", 0.9),  # no word at all
    ]
    assert new_lines(lines, {"source", "annual", "survey"}) == ["Figure 9", "Reduce Medical Errors 50%"]


NOISY_PICTURES = ("NUS-Business-School-BBA-Brochure-2024.pdf", 5)  # Leptonica clips a box on one of them
_READ_PICTURES = """
import sys, numpy as np, pymupdf
from docgraph.documents.ocr.tesseract_engine import TesseractReader
reader = TesseractReader("eng")
page = pymupdf.open(sys.argv[1])[int(sys.argv[2]) - 1]
for info in page.get_image_info():
    clip = pymupdf.Rect(info["bbox"]) & page.rect
    if clip.width > 36 and clip.height > 36:
        pix = page.get_pixmap(dpi=144, clip=clip, alpha=False)
        reader.lines(np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3), 2.0)
"""


def test_reading_pictures_prints_nothing_to_the_terminal(shared_data):
    import subprocess
    import sys

    source = shared_data / "mmlongbench_doc" / "documents" / NOISY_PICTURES[0]
    if not source.is_file():
        pytest.skip("the MMLongBench-Doc documents are not in the shared data")
    done = subprocess.run(
        [sys.executable, "-c", _READ_PICTURES, str(source), str(NOISY_PICTURES[1])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Error in" not in done.stderr, done.stderr[-2000:]  # Leptonica's clipping notes are silenced
