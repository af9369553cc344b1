"""``ingest.worker_memory_mb``: a page worker past its memory budget after a scanned page
drops its OCR engine (whose buffers grow with the scanned pages read) and reads the next
scanned page with a fresh one, with the same result."""

from __future__ import annotations

import pytest
from docs_helpers import rasterise

from docgraph.config import IngestSettings
from docgraph.documents import pages
from docgraph.documents.pages import PageJob
from docgraph.documents.parser import parser_target

WORLD_HISTORY = "openstax_world_history_v1_excerpt.pdf"


@pytest.fixture(scope="module")
def scan(tmp_path_factory, documents_dir):
    tmp = tmp_path_factory.mktemp("worker-memory")
    return rasterise(documents_dir / WORLD_HISTORY, [2, 3], tmp / "scan.pdf")


def read(scan, tmp_path, number: int, limit_mb: int) -> pages.PageResult:
    settings = IngestSettings(worker_memory_mb=limit_mb)
    return pages.process_page(
        PageJob("scan", number, str(scan), None, str(tmp_path), settings, parser_target(settings.parser))
    )


def texts(result: pages.PageResult) -> list[str]:
    return [c.text for c in result.page.components]


def test_past_the_budget_the_ocr_engine_is_dropped_and_comes_back(scan, tmp_path, monkeypatch):
    monkeypatch.setattr(pages, "_STATE", pages._WorkerState())
    kept = read(scan, tmp_path, 1, limit_mb=0)
    assert kept.page.source == "ocr" and pages._STATE.ocr is not None, "0 = no budget: the engine stays"
    roomy = read(scan, tmp_path, 1, limit_mb=1_000_000)
    assert pages._STATE.ocr is not None and texts(roomy) == texts(kept)

    dropped = read(scan, tmp_path, 1, limit_mb=1)  # every process is past 1 MB
    assert pages._STATE.ocr is None, "past the budget the OCR engine was let go"
    assert texts(dropped) == texts(kept), "the page itself was read before the engine went"
    again = read(scan, tmp_path, 2, limit_mb=1)
    assert again.page.source == "ocr" and " ".join(texts(again)).strip(), "a fresh engine read the next page"
    pages._STATE.release()


def test_a_born_digital_page_never_loads_or_drops_an_engine(documents_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(pages, "_STATE", pages._WorkerState())
    settings = IngestSettings(worker_memory_mb=1)
    pages.process_page(
        PageJob(
            "pdf", 1, str(documents_dir / WORLD_HISTORY), None, str(tmp_path), settings, parser_target(settings.parser)
        )
    )
    assert pages._STATE.ocr is None and pages._STATE.within_memory(1) is False
    pages._STATE.release()
