"""Text lines of a page image read by rapidocr 3.x's PP-OCR networks (``ingest.ocr_engine = "rapidocr"``).

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
Detection grows with its input area; at 58 dpi (640 px) recovery drops ~1 point.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ConfigError
from .layout import OcrLine

REC_WIDTH_STEP = 64  # px: recognition batches padded to this (rapidocr pads with the same zeros), see ocr_runtime
MIN_DET_SHORT_SIDE = 160  # px: smaller images (a snippet, one line) keep rapidocr's own sizing, which enlarges them


def narrow(crops: list[np.ndarray], scale: float) -> list[np.ndarray]:
    """Line crops with their width multiplied by ``scale`` (height kept); unchanged at 1.0."""
    if scale >= 1.0:
        return crops
    import cv2

    return [
        cv2.resize(c, (max(1, round(c.shape[1] * scale)), c.shape[0]), interpolation=cv2.INTER_AREA) if c.size else c
        for c in crops
    ]


class RapidOcrReader:
    """Reads text lines with PP-OCR detection + recognition; one set of networks, reused.

    ``det_dpi``: the detector sees the page at this resolution (0 = the full render);
    ``rec_width_scale``: line crops are narrowed to this fraction of their width before
    recognition; ``rec_batch``: lines per recognition batch; ``threads``: ONNX intra-op
    threads (0 = the runtime's default). See ``OcrOptions``.
    """

    def __init__(
        self, det_dpi: int, rec_width_scale: float, rec_batch: int, threads: int = 0, memory_arena: bool = True
    ):
        try:
            from rapidocr import RapidOCR
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise ConfigError(f'ingest.ocr_engine = "rapidocr" needs rapidocr ({exc}); reinstall docgraph') from exc
        self.det_dpi = det_dpi
        # the line-direction classifier flips clear, upright lines by 180° now and then (turning
        # them into garbage); pages are rendered upright, so it is off
        # with the memory arena on (the wheel turns it off), ONNX reuses buffers between calls: ~7% faster,
        # for ~100 MB held per process (``memory_arena``)
        params: dict = {
            "Global.log_level": "warning",
            "Global.use_cls": False,
            "Rec.rec_batch_num": rec_batch,
            "EngineConfig.onnxruntime.enable_cpu_mem_arena": memory_arena,
        }
        if det_dpi > 0:  # the side limit is set per page (``lines``)
            params["Det.limit_type"] = "max"
        if threads > 0:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
            params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
        self.ocr = RapidOCR(params=params)
        if rec_width_scale < 1.0:
            recognize = self.ocr.recognize_txt  # rapidocr 3.x: crops of every detected line, in one call
            # patched on the instance on purpose: rapidocr has no hook between cropping and recognising
            self.ocr.recognize_txt = lambda img: recognize(narrow(img, rec_width_scale))  # type: ignore[method-assign]

    @property
    def detector(self) -> Any:
        return self.ocr._load_det_model()

    @property
    def recogniser(self) -> Any:
        return self.ocr._load_rec_model()

    def networks(self) -> list[tuple[Any, int]]:
        """``(session holder, width step)`` of each network, for ``ocr_runtime.use_openvino``."""
        return [(self.detector, 0), (self.recogniser, REC_WIDTH_STEP)]

    def lines(self, rgb: np.ndarray, scale: float) -> list[OcrLine]:
        """The non-empty text lines of ``rgb`` (rendered at ``scale`` pixels per point), boxes in points."""
        from rapidocr.utils.output import RapidOCROutput  # loaded with rapidocr by __init__

        if self.det_dpi > 0:  # rapidocr reads these on every call
            ratio = self.det_dpi / (72.0 * scale)
            detector = self.detector
            if min(rgb.shape[:2]) * ratio >= MIN_DET_SHORT_SIDE:
                detector.limit_type, detector.limit_side_len = "max", round(max(rgb.shape[:2]) * ratio)
            else:
                detector.limit_type, detector.limit_side_len = "min", 736
        result = self.ocr(np.ascontiguousarray(rgb[:, :, ::-1]))
        found: list[OcrLine] = []
        # the full pipeline's output; rapidocr gives a partial one (boxes without texts) when a
        # stage found nothing: no lines then
        if isinstance(result, RapidOCROutput) and result.boxes is not None and result.txts is not None:
            scores = list(result.scores) if result.scores is not None else [1.0] * len(result.txts)
            for quad, text, score in zip(result.boxes, result.txts, scores):
                if text and text.strip():
                    xs, ys = quad[:, 0] / scale, quad[:, 1] / scale
                    found.append(
                        OcrLine(
                            (float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())),
                            text.strip(),
                            confidence=float(score),
                        )
                    )
        return found
