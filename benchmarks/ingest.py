"""Ingestion speed: pages/second for born-digital and for scanned pages, in one run.

    .venv/bin/python benchmarks/ingest.py [--data DIR] [--scanned-pages N] [--workers N]

Born-digital: every PDF of ``shared/data/documents`` in one ``ingest`` call (pages in
parallel, one worker per core; pool start-up included). Scanned: pages of the World History
excerpt rasterised at 150 dpi into an image-only PDF (its 5 pages repeated to reach N), so
they take the OCR path; they are ingested seven times, the first five with rapidocr reading
the lines (the approach before Tesseract): with the pre-tuning settings (full-resolution
detection, lines recognised at full width, onnxruntime), with its tuned settings run by
onnxruntime, by OpenVINO (bf16 where the CPU computes it natively), by OpenVINO in f32, and
with ``ocr_runtime = "auto"`` (OpenVINO where bf16 is native, else onnxruntime; the row
names which); then with ``ocr_engine = "tesseract"`` for every page; the last as shipped
(``ocr_engine = "auto"``: Tesseract, PP-OCR again where it is unsure). Each row gives the word
recovery against the source PDF's own text layer. Reports
wall-clock pages/s and CPU seconds per page (this process plus its page workers, pool and
model start-up included), which stays comparable when other work shares the machine; the
"est. pages/s" column is workers / CPU-s-per-page, the rate on idle cores. Targets on
2 cores: ≥ 4 born-digital pages/s, ≥ 1 scanned page/s. ``--parsers`` names the parser
backends to compare in the same run (default: the ``pymupdf`` layout model and
``pymupdf-fast``, which skips its image features); ``pymupdf`` runs twice, its page-image
network on OpenVINO (``ingest.layout_runtime``, as shipped) and on onnxruntime (before);
the scanned pages go through the first one. ``--scanned-only`` skips the born-digital rows;
``--ocr-rows shipped`` runs only the shipped OCR settings. Scanned rows also give the rate
"running", from the first stored page to the last: what a long scanned document approaches
once the page workers and their models are up.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pymupdf

from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.documents.ocr.runtime import resolve_runtime
from docgraph.progress import NullProgress
from docgraph.store import SQLiteStore

REPO = Path(__file__).resolve().parents[1]
SCANNED_SOURCE = "openstax_world_history_v1_excerpt.pdf"


def shared_documents() -> Path:
    env = os.environ.get("DOCGRAPH_SHARED_DATA")
    return (Path(env) if env else REPO.parent / "shared" / "data") / "documents"


class Timeline(NullProgress):
    """Remembers when each page of each document was stored."""

    def __init__(self) -> None:
        self.events: list[tuple[float, str]] = []

    def advance(self, n: int = 1, **stats) -> None:
        self.events.append((time.perf_counter(), str(stats.get("doc", ""))))


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(paths: list[Path], root: Path, settings: IngestSettings) -> tuple[float, float, int, list]:
    """Ingest ``paths`` into a fresh workspace: (wall s, cpu s, pages, per-document rows)."""
    store = SQLiteStore(root)
    timeline = Timeline()
    cpu, started = cpu_seconds(), time.perf_counter()
    report = ingest(store, root, settings, paths, progress=timeline)
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    store.close()
    for failure in report.failures:
        print(f"failed: {failure}", file=sys.stderr)
    return wall, cpu, report.pages, per_document(timeline, started)


def per_document(timeline: Timeline, started: float) -> list[tuple[str, int, float]]:
    """(document, pages, seconds from the previous document's last page to its own) in ingest order."""
    counts: dict[str, int] = {}
    finished: dict[str, float] = {}
    for when, doc in timeline.events:
        counts[doc] = counts.get(doc, 0) + 1
        finished[doc] = when
    ends = [started] + list(finished.values())
    return [(doc, counts[doc], ends[i + 1] - ends[i]) for i, doc in enumerate(finished)]


SCAN_DPI = 150


def add_scan(page: pymupdf.Page, dst: pymupdf.Document) -> pymupdf.Page:
    """Append to ``dst`` an image-only copy of ``page``: its pixels at 150 dpi, as a scanner would."""
    scan = dst.new_page(width=page.rect.width, height=page.rect.height)
    scan.insert_image(page.rect, pixmap=page.get_pixmap(dpi=SCAN_DPI, alpha=False))
    return scan


def rasterise(src: Path, pages: int, out: Path) -> Path:
    """An image-only PDF of ``pages`` pages: the pages of ``src`` scanned (``add_scan``), repeated as needed."""
    with pymupdf.open(src) as doc, pymupdf.open() as dst:
        for index in range(pages):
            add_scan(doc[index % doc.page_count], dst)
        dst.save(out)
    return out


def words(text: str) -> Counter:
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def recovery(found: list[str], reference: list[str]) -> float:
    """Share of the reference words (with multiplicity, page by page) found on the same page."""
    hits = total = 0
    for got, ref in zip(map(words, found), map(words, reference)):
        hits += sum(min(n, got[w]) for w, n in ref.items())
        total += sum(ref.values())
    return hits / max(1, total)


def running_rate(timeline: Timeline) -> float | None:
    """Pages/s from the first stored page to the last: the rate once workers and models are up,
    which a long document approaches (None below 3 pages)."""
    times = sorted(when for when, _ in timeline.events)
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) >= 3 and times[-1] > times[0] else None


def run_scanned(
    scan: Path, source: Path, root: Path, settings: IngestSettings
) -> tuple[float, float, int, float, float | None]:
    """Ingest the image-only ``scan``: (wall s, cpu s, pages, word recovery against ``source``'s
    text layer, pages/s once running)."""
    store = SQLiteStore(root)
    timeline = Timeline()
    cpu, started = cpu_seconds(), time.perf_counter()
    report = ingest(store, root, settings, [scan], progress=timeline)
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    for failure in report.failures:
        print(f"failed: {failure}", file=sys.stderr)
    doc = store.get_document(report.added[0].id, with_pages=True)
    with pymupdf.open(source) as src:
        reference = [src[(page.number - 1) % src.page_count].get_text() for page in doc.pages]
    store.close()
    return wall, cpu, report.pages, recovery([page.text for page in doc.pages], reference), running_rate(timeline)


PREVIOUS_OCR = {
    "ocr_engine": "rapidocr",
    "ocr_det_dpi": 0,
    "ocr_rec_width_scale": 1.0,
    "ocr_rec_batch": 6,
    "ocr_runtime": "onnxruntime",
}  # before the speed tuning
OCR_ROWS = (
    ("previous OCR settings", PREVIOUS_OCR),
    ("rapidocr, onnxruntime", {"ocr_engine": "rapidocr", "ocr_runtime": "onnxruntime"}),  # before OpenVINO
    ("rapidocr, openvino", {"ocr_engine": "rapidocr", "ocr_runtime": "openvino"}),
    ("rapidocr, openvino f32", {"ocr_engine": "rapidocr", "ocr_runtime": "openvino", "ocr_precision": "f32"}),
    (f"rapidocr as shipped before ({resolve_runtime('auto')})", {"ocr_engine": "rapidocr"}),
    ("tesseract", {"ocr_engine": "tesseract"}),
    ("default OCR settings (auto)", {}),
)


def born_digital_rows(backends: list[str]) -> list[tuple[str, dict]]:
    """(label, settings update) per born-digital run: each backend as shipped, and ``pymupdf``
    also with its layout image network on onnxruntime (the approach before OpenVINO), with
    PNG page images (the format before JPEG) and without reading the text of pictures (the
    approach before ``ingest.picture_text``)."""
    rows = []
    for backend in backends:
        rows.append((f"{backend} (all documents)", {"parser": backend}))
        if backend == "pymupdf":
            rows.append((f"{backend}, layout on onnxruntime", {"parser": backend, "layout_runtime": "onnxruntime"}))
            rows.append((f"{backend}, PNG page images", {"parser": backend, "image_format": "png"}))
            rows.append((f"{backend}, pictures' text not read", {"parser": backend, "picture_text": False}))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=shared_documents(), help="folder of PDFs")
    parser.add_argument("--scanned-pages", type=int, default=4, help="pages to OCR (0 = skip)")
    parser.add_argument("--workers", type=int, default=0, help="page workers (0 = one per core)")
    parser.add_argument(
        "--parsers",
        default="pymupdf,pymupdf-fast",
        help="comma-separated parser backends, each ingesting every document (ingest.parser)",
    )
    parser.add_argument("--scanned-only", action="store_true", help="skip the born-digital rows")
    parser.add_argument(
        "--ocr-rows",
        choices=("all", "shipped"),
        default="all",
        help="scanned rows: every OCR approach, or only the shipped settings",
    )
    args = parser.parse_args(argv)
    backends = [name for name in args.parsers.split(",") if name]
    settings = IngestSettings(workers=args.workers, parser=backends[0])
    pdfs = sorted(args.data.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.data}; pass --data or set DOCGRAPH_SHARED_DATA", file=sys.stderr)
        return 2
    workers = args.workers or os.cpu_count()
    print(f"{workers} page workers, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start\n")
    rows = []
    with tempfile.TemporaryDirectory(prefix="docgraph-bench-") as tmp:
        for label, update in [] if args.scanned_only else born_digital_rows(backends):
            wall, cpu, pages, documents = run(pdfs, Path(tmp) / f"born-{len(rows)}", settings.model_copy(update=update))
            rows.append((f"born-digital, {label}", pages, wall, cpu))
            rows.extend((f"  {doc}", n, seconds, None) for doc, n, seconds in documents)
        if args.scanned_pages > 0:
            scan = rasterise(args.data / SCANNED_SOURCE, args.scanned_pages, Path(tmp) / "scanned.pdf")
            for label, ocr in OCR_ROWS if args.ocr_rows == "all" else OCR_ROWS[-1:]:
                wall, cpu, pages, recovered, rate = run_scanned(
                    scan, args.data / SCANNED_SOURCE, Path(tmp) / label, settings.model_copy(update=ocr)
                )
                rows.append((f"scanned (OCR), {label}", pages, wall, cpu, recovered, rate))
    print(
        f"{'input':<40} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'cpu s/page':>10} "
        f"{'est. pages/s':>12} {'words':>6} {'running':>8}"
    )
    for name, pages, seconds, cpu, *scanned in rows:
        per_page = cpu / max(pages, 1) if cpu is not None else None
        cpu_text = f"{per_page:10.2f} {workers / max(per_page, 1e-9):12.2f}" if per_page is not None else " " * 23
        words_text = f" {scanned[0]:6.3f}" if scanned else ""
        rate_text = f" {scanned[1]:8.2f}" if scanned and scanned[1] is not None else ""
        rate = pages / max(seconds, 1e-9)
        print(f"{name:<40} {pages:>6} {seconds:>8.1f} {rate:>8.2f} {cpu_text}{words_text}{rate_text}")
    print(
        f"\nload average {os.getloadavg()[0]:.1f} at end; est. pages/s = {workers} workers / cpu s per page; "
        "running = pages/s from the first stored page to the last (start-up excluded); "
        f"targets on 2 cores: >= 4 born-digital pages/s, >= 1 scanned page/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
