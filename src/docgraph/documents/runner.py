"""Running page jobs across cores: a process pool shared by all documents of one ingest run.

Results come back as pages finish (not in page order). At most ``2 × workers`` pages are
in flight, so memory stays bounded however long the document. A single job, or
``workers == 1``, runs in-process without starting a pool, unless ``plan`` said the run
hands out more pages: its one-page documents then go to the pool too (run here, one page
would load the layout and OCR networks into the caller for the rest of the run). Workers
are replaced by fresh ones, between documents, once they have handled ``recycle_after``
pages each: the networks keep buffers sized for the largest pages they saw, and a long
run's workers otherwise grow to nearly twice their fresh size.

Workers are spawned (never forked: the caller may hold threads, ONNX sessions or a database
connection). Spawned workers re-import the main script, so when that script has no
``if __name__ == "__main__":`` guard, or cannot be re-imported at all (``python - < script.py``:
the main module was read from standard input), pages run in-process instead, with a note
saying so. A pool whose workers cannot start is detected before any page is given to it (a
probe job) and pages then run in-process too: a worker that cannot start is never reported
as a page that failed.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Generator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Protocol

from . import pages
from .pages import PageJob, PageResult

PageResults = Generator[tuple[PageJob, PageResult | Exception], None, None]
"""A run's ``(job, result or the exception it raised)`` pairs; closing it waits for the pages in flight."""


class PagesRunner(Protocol):
    """What runs an ingest's page jobs: ``PageRunner`` here, Ray tasks in ``scale.ray_pages``."""

    workers: int

    def plan(self, pages: int) -> None: ...

    def run(self, jobs: list[PageJob]) -> PageResults: ...

    def close(self) -> None: ...


RunnerFactory = Callable[[Callable[[str], None]], PagesRunner]
"""Makes the runner of one ingest run, given the callback that shows the user a note."""

_MAIN_GUARD = re.compile(r"""if\s+__name__\s*==\s*['"]__main__['"]""")


def spawn_unsafe_reason() -> str | None:
    """Why spawned workers cannot re-import the main module safely, or None when they can."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    spec = getattr(main, "__spec__", None)
    if not path or (spec is not None and spec.name.split(".")[-1] == "__main__"):
        return None  # interactive, -c, or a package's __main__: not re-imported
    if not Path(path).is_file():
        return (
            f"the main module ({path}) is not a file that page workers can re-import, as with "
            "`python - < script.py`; save the script to a file to use all cores"
        )
    try:
        text = Path(path).read_text(encoding="utf-8", errors="ignore")
    except OSError:
        return f"the main module ({path}) cannot be read by page workers"
    if _MAIN_GUARD.search(text) is None:
        return 'put your script\'s code under `if __name__ == "__main__":` to use all cores'
    return None


def spawn_safe() -> bool:
    """Whether spawned workers can re-import the main module without re-running its code."""
    return spawn_unsafe_reason() is None


class PageRunner:
    def __init__(self, workers: int, note: Callable[[str], None], recycle_after: int = 0):
        self.workers = max(1, workers)
        self._note = note
        self.recycle_after = recycle_after  # pages per worker before the pool is replaced; 0 = never
        self._handled = 0  # pages the current pool has run
        self._planned = 0  # pages the whole run will hand out (``plan``); 0 = not said
        reason = spawn_unsafe_reason() if self.workers > 1 else None
        if reason:
            note(f"pages are processed on one core: {reason}")
            self.workers = 1
        self._pool: ProcessPoolExecutor | None = None

    def plan(self, pages: int) -> None:
        """Say how many pages the whole run hands out. A one-page document then goes to the
        workers too, unless the run has one page in all: run in-process, its page would load
        the layout and OCR networks into the calling process for the rest of the run."""
        self._planned = pages

    def _executor(self) -> ProcessPoolExecutor | None:
        """The worker pool, started and probed on first use; None (pages run in-process from
        then on) when its workers cannot start."""
        if self._pool is None and self.workers > 1:
            # spawn: workers never inherit the caller's threads, locks or database connection
            pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=pages.init_worker
            )
            try:
                # one probe per worker: each submit starts a worker, so all start side by side
                # (one probe started the second worker only after the first was up: ~2 s later)
                for probe in [pool.submit(os.getpid) for _ in range(self.workers)]:
                    probe.result()  # a worker that cannot start breaks the pool here
            except BrokenProcessPool:
                pool.shutdown(wait=False, cancel_futures=True)
                self._note(
                    "pages are processed on one core: page workers could not start in this "
                    "Python process (see the messages above); the files are not at fault"
                )
                self.workers = 1
                return None
            self._pool = pool
        return self._pool

    def run(self, jobs: list[PageJob]) -> PageResults:
        """Yield ``(job, result or the exception it raised)`` as pages finish.

        A worker interrupted by Ctrl-C re-raises ``KeyboardInterrupt`` here; a worker that died
        (crash, out of memory) fails its page and the pool is replaced for the next document.
        """
        if self._pool is not None and 0 < self.recycle_after * self.workers <= self._handled:
            self._pool.shutdown(wait=True)  # between documents: nothing is in flight
            self._pool, self._handled = None, 0
        alone = len(jobs) <= 1 and self._planned <= 1  # one page, and all the run has
        pool = None if self._pool is None and alone else self._executor()
        if pool is None:
            for job in jobs:
                try:
                    yield job, pages.process_page(job)
                except Exception as exc:  # reported per page by the caller
                    yield job, exc
            return
        queue = list(reversed(jobs))
        running: dict[Future, PageJob] = {}
        broken = False
        try:
            while queue or running:
                while queue and len(running) < 2 * self.workers:
                    job = queue.pop()
                    running[pool.submit(pages.process_page, job)] = job
                    self._handled += 1
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f].number):
                    job = running.pop(future)
                    error = future.exception()
                    if error is not None and not isinstance(error, Exception):
                        raise error  # KeyboardInterrupt / SystemExit in a worker
                    broken = broken or isinstance(error, BrokenProcessPool)
                    yield job, error if error is not None else future.result()
        finally:
            # pages already running still write their images: wait, so that a caller removing
            # a failed document's files afterwards removes them all
            wait([f for f in running if not f.cancel()])
            if broken:
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None

    def close(self) -> None:
        """Stop the workers (waiting for pages in progress) and close in-process files."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        pages.release()
