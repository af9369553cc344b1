"""The page-worker pool (``documents.runner.PageRunner``): every worker is started by the
start-up probe, side by side, before the first page is handed out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from docgraph.config import IngestSettings
from docgraph.documents.pages import PageJob, PageResult
from docgraph.documents.parser import parser_target
from docgraph.documents.runner import PageRunner


def page_jobs(shared_data: Path, root: Path, doc_id: str, numbers: range) -> list[PageJob]:
    """Jobs for pages ``numbers`` of a short shared report, as one document ``doc_id``."""
    settings = IngestSettings()
    pdf = shared_data / "documents" / "jstor_open_access_latin_america_report.pdf"
    return [
        PageJob(
            doc_id=doc_id,
            number=n,
            pdf_path=str(pdf),
            password=None,
            root=str(root),
            settings=settings,
            parser=parser_target(settings.parser),
        )
        for n in numbers
    ]


def test_the_probe_starts_every_worker_at_once():
    notes: list[str] = []
    runner = PageRunner(2, notes.append)
    try:
        pool = runner._executor()
        assert pool is not None, notes
        processes = list(pool._processes.values())  # the executor's own table of its workers
        assert len(processes) == 2 and all(p.is_alive() for p in processes)
        assert len({p.pid for p in processes}) == 2
    finally:
        runner.close()
    assert notes == []


def test_workers_are_replaced_between_documents_after_their_share_of_pages(shared_data, tmp_path):
    """``recycle_after`` pages per worker: the next document gets fresh worker processes (the
    old ones have exited), and its pages come back as from any worker."""

    def jobs(doc_id: str, numbers: range) -> list[PageJob]:
        return page_jobs(shared_data, tmp_path, doc_id, numbers)

    runner = PageRunner(2, lambda note: None, recycle_after=2)
    try:
        first = list(runner.run(jobs("a", range(1, 4))))  # 3 pages: under 2 per worker
        pool = runner._pool
        old = list(pool._processes.values())
        second = list(runner.run(jobs("b", range(4, 6))))  # same pool: 5 pages handed out by its end
        assert runner._pool is pool
        third = list(runner.run(jobs("c", range(6, 8))))  # 5 >= 2 × 2: a fresh pool
        assert runner._pool is not pool
        assert not any(p.is_alive() for p in old)
        assert {p.pid for p in runner._pool._processes.values()}.isdisjoint({p.pid for p in old})
        for results in (first, second, third):
            assert all(
                isinstance(r, PageResult) and r.page.number == j.number and r.page.components for j, r in results
            ), results
        assert sorted(j.number for j, _ in third) == [6, 7]
    finally:
        runner.close()


def test_a_one_page_document_goes_to_the_workers_when_the_run_has_more_pages(shared_data, tmp_path):
    """Run in the calling process, a lone page would load the page networks there for the
    rest of the run; only a run of one page in all stays in-process."""
    [job] = page_jobs(shared_data, tmp_path, "a", range(1, 2))
    alone = PageRunner(2, lambda note: None)
    planned = PageRunner(2, lambda note: None)
    planned.plan(5)
    try:
        [(_, result)] = list(alone.run([job]))
        assert isinstance(result, PageResult) and alone._pool is None
        [(_, result)] = list(planned.run([job]))
        assert isinstance(result, PageResult) and planned._pool is not None
    finally:
        alone.close()
        planned.close()


def test_a_failing_page_comes_back_as_its_exception_in_process_and_from_the_workers(shared_data, tmp_path):
    """The in-process loop and the worker loop both hand back a page's exception in place of
    its result (the worker loop once reused the in-process loop's ``except ... as`` name)."""
    [good] = page_jobs(shared_data, tmp_path, "a", range(1, 2))
    bad = replace(good, number=2, pdf_path=str(tmp_path / "missing.pdf"))
    alone = PageRunner(2, lambda note: None)
    pooled = PageRunner(2, lambda note: None)
    try:
        [(job, result)] = list(alone.run([bad]))
        assert job is bad and isinstance(result, Exception) and alone._pool is None
        results = dict((j.pdf_path, r) for j, r in pooled.run([good, bad]))
        assert pooled._pool is not None
        assert isinstance(results[good.pdf_path], PageResult)
        assert isinstance(results[bad.pdf_path], Exception)
    finally:
        alone.close()
        pooled.close()
