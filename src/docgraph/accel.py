"""Optional inference runtimes, shared by ingestion (OCR networks) and the offline text embedder."""

from __future__ import annotations

from typing import Any

PRECISIONS = ("auto", "f32")  # auto: bf16 where the CPU computes it natively (AMX, AVX512-BF16), else f32


def openvino_available() -> bool:
    """True when the ``openvino`` package imports (it is a dependency; a trimmed install may lack it)."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def compile_on_cpu(model: Any, threads: int = 0, precision: str = "auto") -> Any:
    """``model`` (an ONNX path or an ``openvino.Model``) compiled for OpenVINO's CPU plugin:
    latency hint, no core pinning (page workers share the cores), ``threads`` inference
    threads (0 = the plugin's choice), ``precision`` one of ``PRECISIONS``."""
    import openvino as ov

    config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "ENABLE_CPU_PINNING": False}
    if threads > 0:
        config["INFERENCE_NUM_THREADS"] = threads
    if precision == "f32":
        config["INFERENCE_PRECISION_HINT"] = "f32"
    return ov.Core().compile_model(model, "CPU", config)
