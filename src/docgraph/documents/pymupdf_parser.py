"""Default ``Parser`` backend: PyMuPDF 2.x with pymupdf4llm's layout analysis (AGPL-3.0).

pymupdf4llm types each region (title, section-header, text, list-item, table, caption,
formula, picture, page-header, page-footer, footnote) with a model that ships inside the
``pymupdf-layout`` wheel, and puts them in reading order. Table cells come from its layout
grid as Markdown (``Table.extract()`` would mangle decimals). OCR is never run here: pages
without a text layer take the pipeline's OCR path instead.

Two backends: ``pymupdf`` runs the layout model on the page's text geometry *and* a CNN
over its rendered image (``imf+rf``, the wheel's default); ``pymupdf-fast`` runs the same
model family on the geometry alone (``rf``): about 4x less CPU for layout, which is ~80 % of
born-digital ingest, at some cost in region typing (on the shared documents: the same
text per page to 95 %, fewer captions told from paragraphs, more regions called tables).

The image CNN (``feature_imf1.onnx``, a 300 x 300 page in, 172 feature maps out) is most of
``pymupdf``'s cost. ``layout_runtime = "openvino"`` (``ingest.layout_runtime``, the default)
runs it on OpenVINO's CPU plugin in f32 instead of the wheel's onnxruntime session: the same
outputs to float rounding, in less than half the CPU time on an AVX2 CPU (docs/results,
2026-12-01 "ingest with the layout network on OpenVINO"). bf16 is not used: its outputs
differ enough that the regions it finds change.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf

from ..accel import OpenVinoSession, openvino_available
from ..errors import ConfigError
from ..types import ComponentKind
from .lines import lines_to_text
from .parser import LayoutBlock, PageInfo, ParsedPdf
from .pdf import open_pdf

_KINDS = {
    "title": ComponentKind.TITLE,
    "section-header": ComponentKind.TITLE,
    "text": ComponentKind.PARAGRAPH,
    "footnote": ComponentKind.PARAGRAPH,
    "code": ComponentKind.PARAGRAPH,
    "list-item": ComponentKind.LIST,
    "caption": ComponentKind.CAPTION,
    "table": ComponentKind.TABLE,
    "picture": ComponentKind.IMAGE,
    "formula": ComponentKind.EQUATION,
    "page-header": ComponentKind.HEADER,
    "page-footer": ComponentKind.FOOTER,
}
_PUA = re.compile("[\ue000-\uf8ff]")
_BULLET = re.compile(r"^[\s•◦▪▫■□●○‣⁃∙·\-–*]+")


def _span_join(spans: list[dict]) -> str:
    """Text of one line: spans in order, with a space where the PDF leaves a visible gap."""
    out = ""
    prev = None
    for span in spans:
        text = _PUA.sub("", span["text"])
        if prev is not None and out and not out[-1].isspace() and not text[:1].isspace():
            gap = span["bbox"][0] - prev["bbox"][2]
            if gap > 0.15 * max(span.get("size", 10.0), 1.0):
                out += " "
        out += text
        prev = span
    return " ".join(out.split())


def _textlines_text(textlines: list[dict] | None) -> str:
    return lines_to_text([_span_join(tl["spans"]) for tl in textlines or []])


def _table_text(table: dict) -> str:
    rows = table.get("extract") or []
    return "\n".join(" | ".join(" ".join((cell or "").split()) for cell in row) for row in rows)


ACCURATE_FEATURES, FAST_FEATURES = "imf+rf", "rf"
LAYOUT_RUNTIMES = ("openvino", "onnxruntime")
_LAYOUT_FUNCTIONS: dict[tuple[str, str], Callable[..., Any]] = {}


def use_layout_model(features: str, runtime: str = "onnxruntime") -> None:
    """Point pymupdf4llm's layout analysis at the model of ``features`` (``imf+rf`` or ``rf``),
    its image network run by ``runtime`` (one of ``LAYOUT_RUNTIMES``; openvino falls back to
    onnxruntime when it is not installed), in this process; each model loads once per process."""
    import pymupdf.layout  # noqa: F401 - activates the default (imf+rf) model
    from pymupdf.layout import DocumentLayoutAnalyzer

    if runtime not in LAYOUT_RUNTIMES:
        raise ConfigError(f"ingest.layout_runtime must be one of {', '.join(LAYOUT_RUNTIMES)}, not {runtime!r}")
    if runtime == "openvino" and (features == FAST_FEATURES or not openvino_available()):
        runtime = "onnxruntime"  # the geometry-only model has no image network
    activated = pymupdf._get_layout  # the wheel's activated model (set by importing pymupdf.layout)
    if not _LAYOUT_FUNCTIONS and activated is not None:
        _LAYOUT_FUNCTIONS[ACCURATE_FEATURES, "onnxruntime"] = activated
    key = (features, runtime)
    if key not in _LAYOUT_FUNCTIONS:
        if runtime == "openvino":
            _LAYOUT_FUNCTIONS.update(_with_openvino(features))
        else:
            model = DocumentLayoutAnalyzer.get_model(feature_set_name=features)
            _LAYOUT_FUNCTIONS[key] = lambda *args, **kwargs: model.predict(*args, **kwargs)
    pymupdf._get_layout = _LAYOUT_FUNCTIONS[key]


def _with_openvino(features: str) -> dict[tuple[str, str], Callable[..., Any]]:
    """Layout functions for ``features`` on both runtimes, sharing one model whose page-image
    network session is set per call: the wheel's activated model for ``imf+rf`` (no second
    load), a new one otherwise. Both sessions compute the same features (see the module doc),
    so which one a call uses changes nothing but its speed."""
    from pymupdf.layout import DocumentLayoutAnalyzer

    wheel = _LAYOUT_FUNCTIONS.get((features, "onnxruntime"))
    model = _model_behind(wheel) or DocumentLayoutAnalyzer.get_model(feature_set_name=features)
    extractor = getattr(getattr(model, "_model", None), "feature_extractor", None)
    session = getattr(extractor, "_session", None)
    if extractor is None or session is None or not hasattr(session, "run"):
        raise ConfigError(
            "pymupdf-layout's image network is not where docgraph expects it (an unknown "
            'pymupdf-layout version); set ingest.layout_runtime = "onnxruntime"'
        )
    openvino = OpenVinoSession(
        session, threads=_onnx_threads(session), precision="f32", setting="ingest.layout_runtime"
    )

    def running(network: Any) -> Callable[..., Any]:
        def predict(*args: Any, **kwargs: Any) -> Any:
            extractor._session = network
            return model.predict(*args, **kwargs)

        return predict

    return {(features, "openvino"): running(openvino), (features, "onnxruntime"): running(session)}


def _model_behind(function: Callable[..., Any] | None) -> Any:
    """The layout model a wheel-made ``_get_layout`` closure calls (None when there is none)."""
    for cell in getattr(function, "__closure__", None) or ():
        value = cell.cell_contents
        if hasattr(value, "predict") and hasattr(getattr(value, "_model", None), "feature_extractor"):
            return value
    return None


def _onnx_threads(session: Any) -> int:
    """The intra-op thread count the wheel's onnxruntime session was given (0 = its default)."""
    try:
        return int(session.get_session_options().intra_op_num_threads)
    except (AttributeError, TypeError, ValueError):
        return 0


class PyMuPDFDocument:
    """A PDF opened with PyMuPDF; ``layout`` runs pymupdf4llm on one page at a time with the
    layout model of ``layout_features``."""

    def __init__(
        self,
        path: Path,
        password: str | None = None,
        layout_features: str = ACCURATE_FEATURES,
        layout_runtime: str = "onnxruntime",
    ):
        self.path = path
        self.layout_features = layout_features
        self.layout_runtime = layout_runtime
        self._doc = open_pdf(path, password)
        self.page_count = self._doc.page_count

    def page_info(self, number: int) -> PageInfo:
        page = self._doc[number - 1]
        chars = sum(len(w) for w in page.get_text("text").split())
        return PageInfo(
            width=page.rect.width, height=page.rect.height, text_chars=chars, has_images=bool(page.get_image_info())
        )

    def layout(self, number: int) -> list[LayoutBlock]:
        from pymupdf4llm.helpers.document_layout import parse_document
        from pymupdf4llm.ocr import OCRMode

        use_layout_model(self.layout_features, self.layout_runtime)
        parsed = parse_document(self._doc, pages=[number - 1], use_ocr=OCRMode.NEVER, force_text=True)
        page = self._doc[number - 1]
        blocks = []
        for box in parsed.pages[0].boxes:
            block = self._block(page, box)
            if block is not None:
                blocks.append(block)
        return blocks

    def _block(self, page: pymupdf.Page, box) -> LayoutBlock | None:
        kind = _KINDS.get(box.boxclass, ComponentKind.PARAGRAPH)
        bbox = (float(box.x0), float(box.y0), float(box.x1), float(box.y1))
        if kind is ComponentKind.TABLE:
            table = box.table or {}
            markdown = (table.get("markdown") or "").strip() or None
            text = _table_text(table) or " ".join(page.get_text("text", clip=bbox).split())
            return LayoutBlock(kind, bbox, text=text, markdown=markdown)
        text = _textlines_text(box.textlines)
        if kind is ComponentKind.LIST:
            text = _BULLET.sub("", text)
        if kind is ComponentKind.TITLE:
            return LayoutBlock(kind, bbox, text=text, heading_size=float(box.max_fontsize or 0)) if text else None
        if not text and not kind.is_visual:
            return None  # an empty text region carries nothing
        return LayoutBlock(kind, bbox, text=text)

    def close(self) -> None:
        self._doc.close()


class PyMuPDFParser:
    """``layout_runtime``: what runs the layout's image network (``ingest.layout_runtime``)."""

    name = "pymupdf"
    layout_features = ACCURATE_FEATURES

    def __init__(self, layout_runtime: str = "openvino"):
        self.layout_runtime = layout_runtime

    def open(self, path: Path, password: str | None = None) -> ParsedPdf:
        return PyMuPDFDocument(Path(path), password, self.layout_features, self.layout_runtime)


class FastPyMuPDFParser(PyMuPDFParser):
    """``pymupdf-fast``: layout from the text geometry alone (see the module doc)."""

    name = "pymupdf-fast"
    layout_features = FAST_FEATURES
