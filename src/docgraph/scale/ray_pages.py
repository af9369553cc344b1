"""``RayPageRunner``: the ``documents.runner.PageRunner`` contract with pages as Ray tasks.

Each page (``documents.pages.process_page``: render, layout, OCR, crops) is one task; at
most 2 × the cluster's CPUs are in flight, so memory stays bounded. Results come back as
pages finish and the caller writes them (one writer). A task whose worker process dies
is rerun up to ``ray.max_retries`` times; after that its page is reported like a page
whose local worker died (``BrokenProcessPool``). An exception the page raised is returned
as itself. Like the local pool's workers, a Ray worker exits after ``recycle_after`` pages
(``ingest.worker_pages``; Ray's ``max_calls``) and a fresh one takes over: a page worker's
heap grows over hundreds of pages, and an idle one keeps it. Page tasks run in workers of
their own (``cluster.remote_task``), which Ray retires once other docgraph work needs the CPUs.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool

from ..config import IngestSettings, RaySettings
from ..documents import pages
from ..documents.pages import PageJob, PageResult
from ..documents.runner import PageResults, RunnerFactory
from .cluster import cluster_cpus, connect, fault_point, remote_task, task_error

_worker_ready = False


def page_task(job: PageJob) -> PageResult:
    """One page in a Ray worker (its ONNX/OpenCV threads limited once per process)."""
    global _worker_ready
    fault_point()
    if not _worker_ready:
        pages.init_worker()
        _worker_ready = True
    return pages.process_page(job)


class RayPageRunner:
    def __init__(self, settings: RaySettings, note: Callable[[str], None], recycle_after: int = 0):
        self.settings = settings
        self._ray = connect(settings)
        self.workers = cluster_cpus(self._ray)
        options = {"max_retries": settings.max_retries}
        if recycle_after > 0:
            options["max_calls"] = recycle_after  # pages per worker process; 0 = never replaced
        self._task = remote_task(self._ray, page_task, "pages", **options)
        note(
            f"pages run as Ray tasks on {self.workers} CPU(s)"
            + (f" of the cluster at {settings.address}" if settings.address else " of a local cluster")
        )

    def _outcome(self, ref) -> PageResult | Exception:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = task_error(ray, exc)
            if not isinstance(cause, Exception):
                raise cause from exc  # KeyboardInterrupt / SystemExit in the task
            return cause
        except ray.exceptions.RayError as exc:  # the worker died more often than max_retries allows
            return BrokenProcessPool(f"the Ray worker running this page died ({type(exc).__name__})")

    def plan(self, pages: int) -> None:
        """Part of the page-runner contract (``documents.runner.PageRunner.plan``); every page
        is a Ray task here whatever the run's size."""

    def run(self, jobs: list[PageJob]) -> PageResults:
        """Yield ``(job, result or the exception it raised)`` as pages finish."""
        ray = self._ray
        queue = list(reversed(jobs))
        running: dict = {}
        try:
            while queue or running:
                while queue and len(running) < 2 * self.workers:
                    job = queue.pop()
                    running[self._task.remote(job)] = job
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in sorted(done, key=lambda r: running[r].number):
                    job = running.pop(ref)
                    yield job, self._outcome(ref)
        finally:
            # pages already running still write their images: wait, so that a caller removing a
            # failed document's files afterwards removes them all
            if running:
                ray.wait(list(running), num_returns=len(running))

    def close(self) -> None:
        """Nothing to stop: the cluster outlives the run (``ray.shutdown`` is the caller's)."""


def ray_runner(ray: RaySettings, settings: IngestSettings) -> RunnerFactory:
    """The ``ingest`` runner factory that sends pages to the Ray cluster ``ray`` names."""
    return lambda note: RayPageRunner(ray, note, recycle_after=settings.worker_pages)
