"""Optional inference runtimes, shared by ingestion (OCR networks) and the offline text embedder."""

from __future__ import annotations


def openvino_available() -> bool:
    """True when the ``openvino`` package imports (it is a dependency; a trimmed install may lack it)."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True
