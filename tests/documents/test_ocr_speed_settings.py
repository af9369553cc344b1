"""OCR speed settings (``ingest.ocr_*``): they reach the engine, shape what the models see, and
the fast defaults still recover the words of a real rasterised page."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pymupdf
import pytest
from docs_helpers import rasterise

from docgraph.config import IngestSettings
from docgraph.documents import pages
from docgraph.documents.ocr.rapidocr_engine import narrow
from docgraph.documents.ocr.reader import OcrEngine, OcrOptions
from docgraph.documents.render import render_page

WORLD_HISTORY = "openstax_world_history_v1_excerpt.pdf"


def recall(found: str, reference: str) -> float:
    ref = Counter(re.findall(r"[a-z0-9]+", reference.lower()))
    got = Counter(re.findall(r"[a-z0-9]+", found.lower()))
    return sum(min(n, got[w]) for w, n in ref.items()) / max(1, sum(ref.values()))


def record_inputs(engine: OcrEngine) -> dict[str, list[tuple[int, ...]]]:
    """Wrap the detector's and recogniser's model sessions to record the shapes they are given."""
    engine._load()
    seen: dict[str, list[tuple[int, ...]]] = {"det": [], "rec": []}
    for name, model in (("det", engine.reader.detector), ("rec", engine.reader.recogniser)):
        session = model.session

        def call(batch, _session=session, _name=name):
            seen[_name].append(tuple(batch.shape))
            return _session(batch)

        model.session = call
    return seen


@pytest.fixture(scope="module")
def scanned_page(tmp_path_factory, documents_dir):
    """World History page 2 as a scan (image-only PDF at 150 dpi) rendered at 144 dpi, and its text layer."""
    tmp = tmp_path_factory.mktemp("ocr-speed")
    scan = rasterise(documents_dir / WORLD_HISTORY, [2], tmp / "scan.pdf")
    with pymupdf.open(scan) as doc, pymupdf.open(documents_dir / WORLD_HISTORY) as src:
        page = doc[0]
        yield np.asarray(render_page(page, 144)), page.rect.width, page.rect.height, src[1].get_text()


def test_settings_reach_the_engine_and_a_change_makes_a_new_one():
    settings = IngestSettings(ocr_det_dpi=48, ocr_rec_width_scale=0.9, ocr_rec_batch=3)
    assert pages.ocr_options(settings) == OcrOptions(det_dpi=48, rec_width_scale=0.9, rec_batch=3)
    state = pages._WorkerState()
    state.onnx_threads = 1
    first = state.engine(settings)
    assert first.options.det_dpi == 48 and state.engine(settings) is first
    assert state.engine(IngestSettings()).options == OcrOptions()


def test_defaults_are_the_fast_choice():
    defaults = pages.ocr_options(IngestSettings())
    assert defaults.det_dpi == 72 and defaults.rec_width_scale < 1.0 and defaults.rec_batch > 1


def test_narrow_keeps_height_and_scales_width():
    crops = [np.zeros((30, 400, 3), np.uint8), np.zeros((24, 10, 3), np.uint8)]
    assert [c.shape for c in narrow(crops, 0.8)] == [(30, 320, 3), (24, 8, 3)]
    assert narrow(crops, 1.0) is crops


def test_detector_input_is_limited_and_recognition_runs_in_batches(scanned_page):
    rgb, width, height, _ = scanned_page
    top = np.ascontiguousarray(rgb[: rgb.shape[0] // 4])  # the first quarter: a few lines, cheap
    engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", det_dpi=96, rec_width_scale=0.8, rec_batch=4))
    seen = record_inputs(engine)
    engine.blocks(top, 2.0, width, height / 4)  # rendered at 144 dpi: the detector gets 2/3 of it
    (det,) = seen["det"]
    assert abs(det[3] - top.shape[1] * 2 / 3) <= 16 and abs(det[2] - top.shape[0] * 2 / 3) <= 16  # multiples of 32
    assert len(seen["rec"]) >= 2 and max(shape[0] for shape in seen["rec"]) == 4


def test_small_images_keep_rapidocrs_enlarging():
    engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", det_dpi=72))
    seen = record_inputs(engine)
    snippet = np.full((60, 200, 3), 255, np.uint8)  # a blank snippet at 144 dpi: 30 px high at 72 dpi
    engine.blocks(snippet, 2.0, 100, 30)
    assert min(seen["det"][0][2:]) >= 736


def test_fast_defaults_recover_the_words_of_a_rasterised_page(scanned_page):
    rgb, width, height, reference = scanned_page
    engine = OcrEngine(threads=1, options=pages.ocr_options(IngestSettings(ocr_engine="rapidocr")))
    seen = record_inputs(engine)
    blocks = engine.blocks(rgb, 2.0, width, height)
    assert seen["det"][0][2:] == (800, 608)  # a Letter page at 72 dpi, in multiples of 32
    assert recall(" ".join(b.text for b in blocks), reference) >= 0.97
