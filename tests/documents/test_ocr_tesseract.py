"""Tesseract as the OCR line reader (``ingest.ocr_engine = "tesseract"``, and first under the
default ``"auto"``): the words and boxes of a real scanned page, the regions still typed by
CDLA, clear errors for languages that are not installed; ``"auto"`` reading a stylised slide
that Tesseract doubts again with rapidocr, and leaving a clean page to Tesseract alone."""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest
from docs_helpers import rasterise, word_recall

from docgraph.config import IngestSettings
from docgraph.documents import pages
from docgraph.documents.ocr import runtime as ocr_runtime
from docgraph.documents.ocr.doubt import doubtful, mean_confidence
from docgraph.documents.ocr.layout import OcrLine, Region
from docgraph.documents.ocr.reader import OcrEngine, OcrOptions
from docgraph.documents.ocr.runtime import OpenVinoSession
from docgraph.documents.ocr.tesseract_engine import TesseractReader, tessdata_dir
from docgraph.documents.render import render_page
from docgraph.errors import ConfigError
from docgraph.types import ComponentKind

WORLD_HISTORY = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="module")
def scanned_page(tmp_path_factory, documents_dir):
    """World History page 3 as a scan (image-only PDF at 150 dpi) rendered at 144 dpi, its text
    layer, and where the text layer puts the words "Pedagogical Foundation" (points)."""
    scan = rasterise(documents_dir / WORLD_HISTORY, [3], tmp_path_factory.mktemp("tesseract") / "scan.pdf")
    with pymupdf.open(scan) as doc, pymupdf.open(documents_dir / WORLD_HISTORY) as src:
        page = doc[0]
        (heading,) = src[2].search_for("Pedagogical Foundation")[:1]
        yield (np.asarray(render_page(page, 144)), page.rect.width, page.rect.height, src[2].get_text(), tuple(heading))


def test_auto_is_the_default_reader():
    options = pages.ocr_options(IngestSettings())
    assert options.engine == "auto" and options.languages == "eng" and options.min_confidence == 0.85
    assert pages.ocr_options(IngestSettings(ocr_min_confidence=0.5)).min_confidence == 0.5
    assert pages.ocr_options(IngestSettings(ocr_engine="rapidocr", ocr_languages="eng+deu")) == OcrOptions(
        engine="rapidocr", languages="eng+deu"
    )


def test_lines_carry_the_pages_words_with_boxes_in_points(scanned_page):
    rgb, width, height, reference, heading = scanned_page
    lines = TesseractReader("eng").lines(rgb, 2.0)
    assert len(lines) >= 20
    assert word_recall(" ".join(line.text for line in lines), reference) >= 0.97
    for line in lines:
        x0, y0, x1, y1 = line.bbox
        assert 0 <= x0 < x1 <= width + 1 and 0 <= y0 < y1 <= height + 1
        assert line.text == line.text.strip() and "\n" not in line.text
    (found,) = [line for line in lines if "Pedagogical Foundation" in line.text]
    assert all(abs(a - b) <= 6 for a, b in zip(found.bbox[1::2], heading[1::2]))  # same height on the page
    assert found.bbox[0] <= heading[0] + 6 and found.bbox[2] >= heading[2] - 6


def test_the_engine_merges_tesseract_lines_into_typed_regions(scanned_page):
    rgb, width, height, reference, _ = scanned_page
    blocks = OcrEngine(threads=1).blocks(rgb, 2.0, width, height)
    assert all(block.source == "ocr" for block in blocks)
    assert word_recall(" ".join(block.text for block in blocks), reference) >= 0.97
    kinds = {block.kind for block in blocks}
    assert ComponentKind.PARAGRAPH in kinds and ComponentKind.TITLE in kinds


def test_lines_carry_tesseracts_confidence(scanned_page):
    lines = TesseractReader("eng").lines(scanned_page[0], 2.0)
    assert all(0.0 <= line.confidence <= 1.0 for line in lines)
    assert mean_confidence(lines) >= 0.9, "clean textbook print"


def test_auto_leaves_a_clean_page_to_tesseract(scanned_page):
    rgb, width, height, reference, _ = scanned_page
    engine = OcrEngine(threads=1, options=OcrOptions(engine="auto"))
    blocks = engine.blocks(rgb, 2.0, width, height)
    assert word_recall(" ".join(block.text for block in blocks), reference) >= 0.97
    assert engine.reread == 0 and engine.second is None, "rapidocr is never loaded for it"


@pytest.fixture(scope="module")
def stylised_slide(shared_data):
    """A scanned slide whose title is light text on a coloured band (MMLongBench-Doc's
    social-media deck, slide 2: "Steps for Measurement on Any Social Channel")."""
    path = (
        shared_data / "mmlongbench_doc" / "documents" / "measuringsuccessonfacebooktwitterlinkedin-160317142140_95.pdf"
    )
    with pymupdf.open(path) as doc:
        page = doc[1]
        yield np.asarray(render_page(page, 144)), page.rect.width, page.rect.height


def test_auto_reads_a_slide_tesseract_doubts_again_with_rapidocr(stylised_slide):
    rgb, width, height = stylised_slide
    alone = OcrEngine(threads=1, options=OcrOptions(engine="tesseract"))
    tesseract_text = " ".join(block.text for block in alone.blocks(rgb, 2.0, width, height))
    assert "Measurement" not in tesseract_text, "the case this is for: Tesseract loses the title"
    assert mean_confidence(alone.reader.lines(rgb, 2.0)) < 0.85
    auto = OcrEngine(threads=1, options=OcrOptions(engine="auto"))
    text = " ".join(block.text for block in auto.blocks(rgb, 2.0, width, height))
    assert "Steps for Measurement" in text and "Social Channel" in text
    assert auto.reread == 1 and auto.second is not None
    inner = auto.second.detector.session.session
    if hasattr(inner, "get_session_options"):  # onnxruntime (OpenVINO takes over where the CPU computes bf16)
        assert not inner.get_session_options().enable_cpu_mem_arena, (
            "the occasional second reader keeps no memory arena"
        )


def test_a_reading_is_doubted_by_its_confidence_or_by_text_it_missed():
    title = Region((10, 10, 200, 40), ComponentKind.TITLE)
    figure = Region((10, 60, 200, 300), ComponentKind.IMAGE)
    sure, unsure = OcrLine((10, 10, 200, 40), "two words", 0.95), OcrLine((10, 50, 90, 60), "x7 =) oS", 0.2)
    assert not doubtful([sure], [title], 0.85)
    assert mean_confidence([sure, unsure]) == pytest.approx((2 * 0.95 + 3 * 0.2) / 5)
    assert doubtful([sure, unsure], [title], 0.85)
    assert doubtful([], [title], 0.85), "nothing read where the layout sees a title"
    clean = [OcrLine((10, 10, 200, 40), "a well read line of ten words in clean print", 0.97)] * 3
    assert mean_confidence(clean + [unsure]) > 0.85 and not doubtful(clean, [title], 0.85)
    assert doubtful(clean + [unsure], [title], 0.85), "a garbled part under a confident title"
    assert not doubtful([], [figure], 0.85) and not doubtful([], [], 0.85)


def test_a_blank_page_reads_as_no_lines():
    assert TesseractReader("eng").lines(np.full((400, 300, 3), 255, np.uint8), 2.0) == []


def test_a_language_without_its_model_is_a_clear_error(tmp_path, monkeypatch):
    assert (tessdata_dir() / "eng.traineddata").is_file()
    with pytest.raises(ConfigError, match=r"no xyz\.traineddata in .*pip install tessdata\.fast-xyz"):
        TesseractReader("eng+xyz")
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))
    assert tessdata_dir() == tmp_path
    with pytest.raises(ConfigError, match="TESSDATA_PREFIX"):
        TesseractReader("eng")
    with pytest.raises(ConfigError, match="ocr_languages"):
        TesseractReader("eng; rm -rf /")
    with pytest.raises(ConfigError, match="ocr_engine"):
        OcrEngine(threads=1, options=OcrOptions(engine="easyocr"))._load()


@pytest.mark.parametrize("available", [True, False])
def test_auto_runs_the_regions_network_on_openvino_wherever_it_is_installed(monkeypatch, available):
    monkeypatch.setattr(ocr_runtime, "openvino_available", lambda: available)
    monkeypatch.setattr(ocr_runtime, "native_bf16", lambda: False)
    assert ocr_runtime.resolve_runtime("auto", "tesseract") == ("openvino" if available else "onnxruntime")
    assert ocr_runtime.resolve_runtime("auto", "rapidocr") == "onnxruntime"
    engine = OcrEngine(threads=1)
    engine._load()
    assert isinstance(engine.regions.session.session, OpenVinoSession) is available
    assert isinstance(engine.reader, TesseractReader)


def test_threads_sharing_a_reader_take_turns(scanned_page):
    """One Tesseract instance is not thread-safe; a reader shared by threads (in-process
    ingests beside the web app's) must give each page its own lines."""
    from concurrent.futures import ThreadPoolExecutor

    rgb, width, height, reference, _ = scanned_page
    blank = np.full((400, 300, 3), 255, np.uint8)
    reader = TesseractReader("eng")
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda image: reader.lines(image, 2.0), [rgb, blank, rgb, blank]))
    assert results[1] == [] and results[3] == []
    assert results[0] == results[2] and word_recall(" ".join(line.text for line in results[0]), reference) >= 0.97


def test_only_the_chosen_reader_is_imported():
    """A page worker reading with Tesseract never imports rapidocr (~1 s of its start-up)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom docgraph.documents.ocr.reader import OcrEngine, OcrOptions\n"
        "engine = OcrEngine(threads=1)\nengine._load()\n"
        "print(type(engine.reader).__name__, 'rapidocr' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["TesseractReader", "False"]
