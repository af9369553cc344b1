"""OCR line readers side by side on every kind of shared document: CPU s per page and word recovery.

    .venv/bin/python benchmarks/ocr_engines.py [--data DIR] [--pages N] [--engines auto,tesseract,rapidocr]

For each PDF of ``shared/data/documents``, its first ``--pages`` pages with at least 30
words in their text layer are scanned (rendered at 150 dpi into an image-only page, as
``benchmarks/ingest.py`` does), rendered back at 144 dpi as ingestion renders a page for OCR,
and read by ``OcrEngine`` with each engine (its CDLA regions included, one thread, model
loading excluded). Word recovery: the share of the text layer's words, with multiplicity,
found on the same page. ``auto`` (the default engine) is Tesseract with PP-OCR again for the
pages Tesseract doubts; the last line counts them. ``benchmarks/ingest.py`` gives the pages/s
of whole ingests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pymupdf
from ingest import add_scan, recovery, shared_documents

from docgraph.documents.ocr.reader import OcrEngine, OcrOptions
from docgraph.documents.render import render_page

MIN_WORDS = 30
OCR_DPI = 144


def scanned_pages(pdf: Path, count: int) -> list[tuple[np.ndarray, float, float, str]]:
    """(pixels at 144 dpi, width, height, text layer) of the first ``count`` wordy pages as scans."""
    out = []
    with pymupdf.open(pdf) as doc:
        for page in doc:
            text = page.get_text()
            if len(text.split()) < MIN_WORDS:
                continue
            with pymupdf.open() as scan:
                out.append(
                    (np.asarray(render_page(add_scan(page, scan), OCR_DPI)), page.rect.width, page.rect.height, text)
                )
            if len(out) == count:
                break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=shared_documents(), help="folder of PDFs")
    parser.add_argument("--pages", type=int, default=4, help="pages per document")
    parser.add_argument("--engines", default="auto,tesseract,rapidocr", help="comma-separated ingest.ocr_engine values")
    args = parser.parse_args(argv)
    engines = [name for name in args.engines.split(",") if name]
    readers = {name: OcrEngine(threads=1, options=OcrOptions(engine=name)) for name in engines}
    for reader in readers.values():
        reader._load()  # model loading is not timed
        if reader.options.engine == "auto":
            reader._second_reader()
    pdfs = sorted(args.data.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.data}; pass --data or set DOCGRAPH_SHARED_DATA", file=sys.stderr)
        return 2
    header = f"{'document':<44} {'pages':>5} " + " ".join(f"{name + ' s/page':>18} {'words':>6}" for name in engines)
    print(header)
    totals: dict[str, list[tuple[float, float]]] = {name: [] for name in engines}
    read = 0
    for pdf in pdfs:
        pages = scanned_pages(pdf, args.pages)
        if not pages:
            continue
        read += len(pages)
        cells = []
        for name, reader in readers.items():
            found, started = [], time.process_time()
            for rgb, width, height, _ in pages:
                found.append(" ".join(block.text for block in reader.blocks(rgb, OCR_DPI / 72.0, width, height)))
            seconds = (time.process_time() - started) / len(pages)
            words = recovery(found, [text for *_, text in pages])
            totals[name].append((seconds, words))
            cells.append(f"{seconds:>18.2f} {words:>6.3f}")
        print(f"{pdf.name[:44]:<44} {len(pages):>5} " + " ".join(cells), flush=True)
    print(
        f"{'mean over documents':<44} {'':>5} "
        + " ".join(
            f"{np.mean([s for s, _ in totals[n]]):>18.2f} {np.mean([w for _, w in totals[n]]):>6.3f}" for n in engines
        )
    )
    for name, reader in readers.items():
        if reader.options.engine == "auto":
            print(f"{name}: {reader.reread} of {read} pages read again by rapidocr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
