"""Ingestion speed: pages/second for born-digital and for scanned pages, in one run.

    .venv/bin/python benchmarks/ingest.py [--data DIR] [--scanned-pages N] [--workers N]

Born-digital: every PDF of ``shared/data/documents`` in one ``ingest`` call (pages in
parallel, one worker per core; pool start-up included). Scanned: pages of the World History
excerpt rasterised at 150 dpi into an image-only PDF, so they take the OCR path. Reports
wall-clock pages/s and CPU seconds per page (this process plus its page workers), which
stays comparable when other work shares the machine. Target on 2 cores: ≥ 4 born-digital
pages/s. ``--parsers`` names the parser backends to compare in the same run (default: the
``pymupdf`` layout model and ``pymupdf-fast``, which skips its image features); the
scanned pages go through the first one.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

from docgraph.config import IngestSettings
from docgraph.documents import ingest
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


def rasterise(src: Path, pages: int, out: Path) -> Path:
    with pymupdf.open(src) as doc, pymupdf.open() as dst:
        for index in range(min(pages, doc.page_count)):
            page = doc[index]
            pix = page.get_pixmap(dpi=150, alpha=False)
            dst.new_page(width=page.rect.width, height=page.rect.height).insert_image(page.rect, pixmap=pix)
        dst.save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=shared_documents(), help="folder of PDFs")
    parser.add_argument("--scanned-pages", type=int, default=4, help="pages to OCR (0 = skip)")
    parser.add_argument("--workers", type=int, default=0, help="page workers (0 = one per core)")
    parser.add_argument("--parsers", default="pymupdf,pymupdf-fast",
                        help="comma-separated parser backends, each ingesting every document (ingest.parser)")
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
        for backend in backends:
            wall, cpu, pages, documents = run(pdfs, Path(tmp) / f"born-{backend}",
                                              settings.model_copy(update={"parser": backend}))
            rows.append((f"born-digital, {backend} (all documents)", pages, wall, cpu))
            rows.extend((f"  {doc}", n, seconds, None) for doc, n, seconds in documents)
        if args.scanned_pages > 0:
            scan = rasterise(args.data / SCANNED_SOURCE, args.scanned_pages, Path(tmp) / "scanned.pdf")
            wall, cpu, pages, _ = run([scan], Path(tmp) / "scanned", settings)
            rows.append(("scanned (OCR path)", pages, wall, cpu))
    print(f"{'input':<40} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'cpu s/page':>10}")
    for name, pages, seconds, cpu in rows:
        cpu_text = f"{cpu / max(pages, 1):10.2f}" if cpu is not None else " " * 10
        print(f"{name:<40} {pages:>6} {seconds:>8.1f} {pages / max(seconds, 1e-9):>8.2f} {cpu_text}")
    print(f"\nload average {os.getloadavg()[0]:.1f} at end; target: >= 4 born-digital pages/s on 2 cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
