"""Optional inference runtimes, shared by ingestion (OCR and layout networks) and the offline text embedder."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError
from .user_cache import user_cache_dir

PRECISIONS = ("auto", "f32")  # auto: bf16 where the CPU computes it natively (AMX, AVX512-BF16), else f32


def openvino_available() -> bool:
    """True when the ``openvino`` package imports (it is a dependency; a trimmed install may lack it)."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def native_bf16() -> bool:
    """True when OpenVINO's CPU plugin computes bf16 natively here (AMX or AVX512-BF16)."""
    if not openvino_available():
        return False
    import openvino as ov

    try:
        return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    except RuntimeError:  # pragma: no cover - a plugin without the property
        return False


def compiled_model_cache() -> Path | None:
    """Where OpenVINO keeps the models it has compiled from files, so that the next process
    loads them instead of compiling again (a cost every page worker and CLI call would pay):
    ``DOCGRAPH_OPENVINO_CACHE`` (empty: no cache), else
    ``$XDG_CACHE_HOME/docgraph/openvino`` (``~/.cache/...``). None when it cannot be created.
    OpenVINO keys each entry by the model's content, the compile options and its own
    version, and compiles afresh when an entry does not load."""
    return user_cache_dir("openvino", "DOCGRAPH_OPENVINO_CACHE")


def compile_on_cpu(model: Any, threads: int = 0, precision: str = "auto") -> Any:
    """``model`` (an ONNX path or an ``openvino.Model``) compiled for OpenVINO's CPU plugin:
    latency hint, no core pinning (page workers share the cores), ``threads`` inference
    threads (0 = the plugin's choice), ``precision`` one of ``PRECISIONS``. A model given by
    its path goes through ``compiled_model_cache``; when the cache fails, it compiles without it."""
    import openvino as ov

    config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "ENABLE_CPU_PINNING": False}
    if threads > 0:
        config["INFERENCE_NUM_THREADS"] = threads
    if precision == "f32":
        config["INFERENCE_PRECISION_HINT"] = "f32"
    cache = compiled_model_cache() if isinstance(model, (str, Path)) else None
    if cache is not None:
        config["CACHE_DIR"] = str(cache)
    core = ov.Core()
    try:
        return core.compile_model(model, "CPU", config)
    except RuntimeError:
        if "CACHE_DIR" not in config:
            raise
        # The disk cache is shared by processes without a lock: two page workers compiling a
        # model no entry holds yet can meet one writing the entry the other reads or drops
        # ("cannot set permissions: No such file or directory [...blob]"). The model itself
        # is fine: compile it without the cache (a real model error raises again here).
        del config["CACHE_DIR"]
        return core.compile_model(model, "CPU", config)


class OpenVinoSession:
    """The part of ``onnxruntime.InferenceSession`` the OCR wheels use, served by OpenVINO.

    Built from an onnxruntime session (for its model path, input/output names and metadata);
    ``run(names, feeds)`` returns the outputs named, in that order, as numpy arrays.
    ``width_step`` > 0: each input's last dimension is zero-padded to a multiple of it (only
    for models where zero columns are what the caller pads with anyway: text recognition).
    ``setting`` names the setting that chooses the runtime, for the error when the session has
    no model file behind it.
    """

    def __init__(
        self,
        ort_session: Any,
        threads: int = 0,
        precision: str = "auto",
        width_step: int = 0,
        setting: str = "ingest.ocr_runtime",
    ):
        path = getattr(ort_session, "_model_path", None)
        if not path or not Path(path).is_file():
            raise ConfigError(
                f"cannot hand the ONNX model to OpenVINO (no model file behind the onnxruntime "
                f'session); set {setting} = "onnxruntime"'
            )
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
