"""Running page jobs across cores: a process pool shared by all documents of one ingest run.

Results come back as pages finish (not in page order). At most ``2 × workers`` pages are
in flight, so memory stays bounded however long the document. A single job, or
``workers == 1``, runs in-process without starting a pool.

Workers are spawned (never forked: the caller may hold threads, ONNX sessions or a database
connection). Spawned workers re-import the main script, so when that script has no
``if __name__ == "__main__":`` guard, pages run in-process instead, with a note saying so.
"""

from __future__ import annotations

import multiprocessing
import re
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator

from . import pages
from .pages import PageJob, PageResult

_MAIN_GUARD = re.compile(r"""if\s+__name__\s*==\s*['"]__main__['"]""")


def spawn_safe() -> bool:
    """Whether spawned workers can re-import the main module without re-running its code."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    spec = getattr(main, "__spec__", None)
    if not path or (spec is not None and spec.name.split(".")[-1] == "__main__"):
        return True  # interactive, -c, or a package's __main__: not re-imported
    try:
        return _MAIN_GUARD.search(Path(path).read_text(encoding="utf-8", errors="ignore")) is not None
    except OSError:
        return True


class PageRunner:
    def __init__(self, workers: int, note: Callable[[str], None]):
        self.workers = max(1, workers)
        if self.workers > 1 and not spawn_safe():
            note("pages are processed on one core: put your script's code under "
                 "`if __name__ == \"__main__\":` to use all cores")
            self.workers = 1
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: workers never inherit the caller's threads, locks or database connection
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=pages.init_worker)
        return self._pool

    def run(self, jobs: list[PageJob]) -> Iterator[tuple[PageJob, PageResult | Exception]]:
        """Yield ``(job, result or the exception it raised)`` as pages finish.

        A worker interrupted by Ctrl-C re-raises ``KeyboardInterrupt`` here; a worker that died
        (crash, out of memory) fails its page and the pool is replaced for the next document.
        """
        if self._pool is None and (self.workers == 1 or len(jobs) <= 1):
            for job in jobs:
                try:
                    yield job, pages.process_page(job)
                except Exception as exc:  # reported per page by the caller
                    yield job, exc
            return
        pool = self._executor()
        queue = list(reversed(jobs))
        running: dict[Future, PageJob] = {}
        broken = False
        try:
            while queue or running:
                while queue and len(running) < 2 * self.workers:
                    job = queue.pop()
                    running[pool.submit(pages.process_page, job)] = job
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f].number):
                    job = running.pop(future)
                    exc = future.exception()
                    if exc is not None and not isinstance(exc, Exception):
                        raise exc  # KeyboardInterrupt / SystemExit in a worker
                    broken = broken or isinstance(exc, BrokenProcessPool)
                    yield job, exc if exc is not None else future.result()
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
