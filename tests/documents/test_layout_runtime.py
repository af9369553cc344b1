"""pymupdf-layout's page-image network on OpenVINO (``ingest.layout_runtime``) and the PNG writer."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from docgraph.accel import openvino_available
from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.documents.pymupdf_parser import PyMuPDFParser, use_layout_model
from docgraph.documents.render import png_bytes
from docgraph.errors import ConfigError
from docgraph.store import SQLiteStore

DOCUMENTS = ("openstax_world_history_v1_excerpt.pdf", "acciona_sustainability_report_2020_p1.pdf")


def blocks(parsed, number: int) -> list[tuple]:
    return [(b.kind, b.text, b.bbox) for b in parsed.layout(number)]


@pytest.mark.skipif(not openvino_available(), reason="openvino is not installed")
@pytest.mark.parametrize("name", DOCUMENTS)
def test_openvino_layout_finds_the_same_regions_as_onnxruntime(documents_dir, name):
    reference = PyMuPDFParser("onnxruntime").open(documents_dir / name)
    openvino = PyMuPDFParser("openvino").open(documents_dir / name)
    try:
        for number in range(1, reference.page_count + 1):
            want, got = blocks(reference, number), blocks(openvino, number)
            assert [(k, t) for k, t, _ in got] == [(k, t) for k, t, _ in want], f"{name} p{number}"
            for (_, _, a), (_, _, b) in zip(got, want):
                assert max(abs(x - y) for x, y in zip(a, b)) < 0.5, f"{name} p{number}: boxes moved"
    finally:
        reference.close()
        openvino.close()


@pytest.mark.skipif(not openvino_available(), reason="openvino is not installed")
def test_both_runtimes_share_the_wheels_model_and_switch_its_session(documents_dir, monkeypatch):
    import pymupdf
    import pymupdf.layout  # noqa: F401 - the wheel activates its model on import

    from docgraph.accel import OpenVinoSession
    from docgraph.documents import pymupdf_parser

    parsed = PyMuPDFParser("onnxruntime").open(documents_dir / DOCUMENTS[0])
    parsed.layout(1)  # whatever ran before in this process: the model holds its own session again
    parsed.close()
    monkeypatch.setattr(pymupdf, "_get_layout", pymupdf._get_layout)  # restored afterwards
    monkeypatch.setattr(pymupdf_parser, "_LAYOUT_FUNCTIONS", {})  # as in a fresh page worker

    def no_second_model(*args, **kwargs):
        raise AssertionError("a second imf+rf layout model was loaded")

    monkeypatch.setattr(pymupdf.layout.DocumentLayoutAnalyzer, "get_model", no_second_model)
    use_layout_model("imf+rf", "openvino")
    model = pymupdf_parser._model_behind(pymupdf_parser._LAYOUT_FUNCTIONS["imf+rf", "openvino"])
    extractor = model._model.feature_extractor
    for runtime, on_openvino in (("openvino", True), ("onnxruntime", False), ("openvino", True)):
        parsed = PyMuPDFParser(runtime).open(documents_dir / DOCUMENTS[0])
        try:
            assert parsed.layout(1)
        finally:
            parsed.close()
        assert isinstance(extractor._session, OpenVinoSession) is on_openvino, runtime


def test_unknown_layout_runtime_is_a_clear_error():
    with pytest.raises(ConfigError, match="ingest.layout_runtime"):
        use_layout_model("imf+rf", "tensorrt")
    with pytest.raises(ValueError):
        IngestSettings(layout_runtime="tensorrt")


def test_ingest_uses_the_layout_runtime_setting(tmp_path, documents_dir):
    stored = {}
    for runtime in ("onnxruntime", "openvino"):
        store = SQLiteStore(tmp_path / runtime)
        try:
            report = ingest(
                store,
                tmp_path / runtime,
                IngestSettings(layout_runtime=runtime, workers=1),
                [documents_dir / DOCUMENTS[0]],
            )
            assert not report.failures and report.pages == 5
            doc = store.list_documents()[0]
            stored[runtime] = [
                [(c.kind, c.text) for c in store.get_page(doc.id, n).components] for n in range(1, doc.page_count + 1)
            ]
        finally:
            store.close()
    assert stored["openvino"] == stored["onnxruntime"]


@pytest.mark.parametrize("mode", ["RGB", "L", "RGBA"])
def test_png_bytes_are_lossless(mode):
    rng = np.random.default_rng(7)
    shape = {"RGB": (41, 67, 3), "L": (41, 67), "RGBA": (41, 67, 4)}[mode]
    pixels = rng.integers(0, 256, shape, dtype=np.uint8)
    image = Image.fromarray(pixels, mode)
    decoded = Image.open(io.BytesIO(png_bytes(image)))
    assert decoded.mode == mode
    assert np.array_equal(np.asarray(decoded), pixels)
