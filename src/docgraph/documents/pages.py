"""Processing one page: render, choose the text-layer or OCR path, assign ids, write crops.

Damaged or missing fonts are found here (``fonts``) and returned with the page.

Runs in page-worker processes (or in-process for small jobs). Each process keeps the last
opened PDF, one parser and one OCR engine, so a document is reopened once per worker, not
once per page; a worker past ``ingest.worker_memory_mb`` after a page drops the OCR engine
(its buffers grow with the scanned pages read) and loads it again when needed. Section
paths and heading levels need the whole document and are assigned later (``sections``);
this module returns each heading's size for that.
"""

from __future__ import annotations

import gc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import IngestSettings
from ..memory import GrowthTrim, release_free_heap, resident_mb
from ..types import BBox, Component, ComponentKind, Page
from .fonts import FontProblem, page_font_problems, reset_warnings
from .ocr.reader import OcrEngine, OcrOptions
from .parser import LayoutBlock, ParsedPdf, load_parser
from .pdf import open_pdf
from .picture_text import read_picture_text
from .render import crop, crop_image_path, page_image_path, render_page, save_image

if TYPE_CHECKING:
    import pymupdf

MIN_SIDE_PT = 0.5  # boxes thinner than this are dropped
OCR_MIN_DPI = 144  # OCR reads pages at least this sharp, whatever ingest.dpi is


@dataclass(frozen=True)
class PageJob:
    doc_id: str
    number: int
    pdf_path: str
    password: str | None
    root: str
    settings: IngestSettings
    parser: str  # import path of the parser backend (see ``parser.parser_target``)


@dataclass
class PageResult:
    page: Page
    heading_sizes: dict[str, float]  # heading component id → size, for document-wide levels
    font_problems: list[FontProblem] = field(default_factory=list)  # damaged or missing fonts (``fonts``)


class _WorkerState:
    """Per-process cache: the open PDF (parser + renderer views) and the OCR engine."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.parsed: ParsedPdf | None = None
        self.pdf: pymupdf.Document | None = None
        self.ocr: OcrEngine | None = None
        self.onnx_threads = 0
        self.trim = GrowthTrim()  # page-sized buffers, freed, go back once they add up (docgraph.memory)

    def open(self, job: PageJob):
        key = (job.pdf_path, job.password, job.parser, job.settings.layout_runtime)
        if key != self.key:
            self.release()
            parser = load_parser(job.parser)
            if hasattr(parser, "layout_runtime"):  # backends with a layout network to place (pymupdf)
                parser.layout_runtime = job.settings.layout_runtime
            self.parsed = parser.open(Path(job.pdf_path), job.password)
            self.pdf = open_pdf(Path(job.pdf_path), job.password)
            self.key = key
        return self.parsed, self.pdf

    def engine(self, settings: IngestSettings) -> OcrEngine:
        options = ocr_options(settings)
        if self.ocr is None or self.ocr.options != options:
            self.ocr = OcrEngine(threads=self.onnx_threads, options=options)
        return self.ocr

    def within_memory(self, limit_mb: int) -> bool:
        """After a page: past ``limit_mb`` of resident memory (0 = no limit), drop the OCR
        engine and give its buffers back. True when it was dropped."""
        resident = resident_mb() if limit_mb and self.ocr is not None else None
        if resident is None or resident <= limit_mb:
            return False
        self.ocr = None
        gc.collect()  # the networks' sessions hold their buffers until collected
        release_free_heap()
        return True

    def release(self) -> None:
        for doc in (self.parsed, self.pdf):
            if doc is not None:
                doc.close()
        self.key, self.parsed, self.pdf = None, None, None


_STATE = _WorkerState()


def ocr_options(settings: IngestSettings) -> OcrOptions:
    """The OCR engine options of ``settings`` (``ingest.ocr_*``)."""
    return OcrOptions(
        det_dpi=settings.ocr_det_dpi,
        rec_width_scale=settings.ocr_rec_width_scale,
        rec_batch=settings.ocr_rec_batch,
        runtime=settings.ocr_runtime,
        precision=settings.ocr_precision,
        engine=settings.ocr_engine,
        min_confidence=settings.ocr_min_confidence,
        languages=settings.ocr_languages,
    )


def _limit_onnx_threads(threads: int) -> None:
    """Make every ONNX session created in this process use ``threads`` intra-op threads.

    The layout model creates its sessions on import without a thread option; with one ONNX
    thread per worker process, two workers on two cores do 5.2 pages/s instead of 3.4.
    """
    import onnxruntime as ort

    base = ort.SessionOptions
    if getattr(base, "_docgraph_threads", None) is not None:
        return

    class LimitedSessionOptions(base):  # type: ignore[misc, valid-type]  # onnxruntime's SessionOptions, found at run time
        _docgraph_threads = threads

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.intra_op_num_threads = threads
            self.inter_op_num_threads = 1

    ort.SessionOptions = LimitedSessionOptions


def init_worker() -> None:
    """Initializer of page-worker processes: one ONNX/OpenCV thread each."""
    _limit_onnx_threads(1)
    _STATE.onnx_threads = 1
    try:
        import cv2

        cv2.setNumThreads(1)
    except ImportError:  # pragma: no cover - opencv comes with rapidocr
        pass


def release() -> None:
    """Close the PDF this process holds open (end of an ingest run)."""
    _STATE.release()


def _components(blocks: list[LayoutBlock], width: float, height: float) -> tuple[list[Component], dict[str, float]]:
    counts: Counter = Counter()
    components: list[Component] = []
    headings: dict[Any, Any] = {}
    for block in blocks:
        box = BBox(x0=block.bbox[0], y0=block.bbox[1], x1=block.bbox[2], y1=block.bbox[3]).clip(width, height)
        if box.width < MIN_SIDE_PT or box.height < MIN_SIDE_PT:
            continue
        counts[block.kind] += 1
        comp = Component(
            id=f"{block.kind.value}{counts[block.kind]}",
            kind=block.kind,
            bbox=box,
            order=len(components),
            text=block.text,
            markdown=block.markdown,
            furniture=block.kind.is_furniture,
            source=block.source,
        )
        if block.kind is ComponentKind.TITLE and block.heading_size:
            headings[comp.id] = float(block.heading_size)
        components.append(comp)
    return components, headings


def process_page(job: PageJob) -> PageResult:
    """Render page ``job.number``, extract its components and write its crops."""
    settings, root = job.settings, Path(job.root)
    parsed, pdf = _STATE.open(job)
    info = parsed.page_info(job.number)
    page = pdf[job.number - 1]
    reset_warnings()
    image_rel = page_image_path(job.doc_id, job.number, settings.image_format)
    image = render_page(page, settings.dpi)
    save_image(image, root, image_rel, settings.jpeg_quality)
    scanned = info.text_chars < settings.ocr_min_chars and info.has_images
    if scanned:
        ocr_dpi = max(settings.dpi, OCR_MIN_DPI)
        pixels = np.asarray(image if ocr_dpi == settings.dpi else render_page(page, ocr_dpi))
        blocks = _STATE.engine(settings).blocks(pixels, ocr_dpi / 72.0, info.width, info.height)
    else:
        blocks = parsed.layout(job.number)
    components, headings = _components(blocks, info.width, info.height)
    fonts = page_font_problems(" ".join(c.text for c in components))
    if settings.picture_text and not scanned and info.has_images:
        picture_dpi = max(settings.dpi, OCR_MIN_DPI)
        read_picture_text(page, image, settings.dpi, components, lambda: _STATE.engine(settings), picture_dpi)
    for comp in components:
        region = crop(page, image, settings.dpi, comp.bbox, settings.crop_dpi) if comp.kind.is_visual else None
        if region is not None:
            comp.crop_path = crop_image_path(job.doc_id, job.number, comp.id, settings.image_format)
            save_image(region, root, comp.crop_path, settings.jpeg_quality)
    result = Page(
        doc_id=job.doc_id,
        number=job.number,
        width=info.width,
        height=info.height,
        image_path=image_rel,
        dpi=settings.dpi,
        source="ocr" if scanned else "pdf",
        components=components,
    )
    _STATE.trim.after_work()  # without it a worker keeps its peak (docgraph.memory)
    _STATE.within_memory(settings.worker_memory_mb)
    return PageResult(result, headings, fonts)
