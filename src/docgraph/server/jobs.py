"""Background work of the web app: a thread-safe live ``Progress`` and a one-at-a-time job queue.

Builds and ingestion write to the workspace, so they run one after another on a single
worker thread; their state lives here, server-side, so a page reload (or a second browser
tab) sees the same live progress. Finished jobs are kept (the most recent ones) so the
page can show how the last build went.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ..errors import DocgraphError
from ..models.usage import subtract
from ..models.usage import total as total_usage
from ..types import Usage

log = logging.getLogger(__name__)

JobState = Literal["queued", "running", "done", "failed"]
MAX_NOTES = 50
MAX_FINISHED = 50


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def json_scalar(value: Any) -> Any:
    """``value`` if JSON can carry it as a scalar, else its ``str``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


class LiveProgress:
    """A ``Progress`` that many threads may read while one reports into it.

    ``snapshot()`` gives the current phase (description, done/total), the latest stats the
    reporter passed (rounds, calls, tokens …), recent notes and an ETA from the rate of the
    current phase. ``clock`` is injectable so tests can pin the ETA.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._total = 0
        self._done = 0
        self._description = ""
        self._phase = 0
        self._phase_started: float | None = None
        self._stats: dict[str, Any] = {}
        self._notes: deque[str] = deque(maxlen=MAX_NOTES)
        self._closed = False

    def start(self, total: int, description: str) -> None:
        with self._lock:
            self._total, self._done, self._description = max(0, int(total)), 0, description
            self._phase += 1
            self._phase_started = self._clock()

    def advance(self, n: int = 1, **stats: Any) -> None:
        with self._lock:
            self._done += n
            for key, value in stats.items():
                if isinstance(value, (dict, list, tuple, set)):
                    continue  # structured stats belong in the final report, not the live line
                self._stats[key] = json_scalar(value)

    def note(self, message: str) -> None:
        with self._lock:
            self._notes.append(str(message))

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def snapshot(self) -> dict[str, Any]:
        """The live state as JSON-ready data; ``eta_s`` is None until a rate is known."""
        with self._lock:
            elapsed = 0.0 if self._phase_started is None else max(0.0, self._clock() - self._phase_started)
            eta: float | None = None
            if self._total and self._done >= self._total:
                eta = 0.0
            elif self._done > 0 and elapsed > 0:
                eta = (self._total - self._done) * elapsed / self._done
            return {
                "description": self._description,
                "phase": self._phase,
                "done": self._done,
                "total": self._total,
                "elapsed_s": round(elapsed, 2),
                "eta_s": None if eta is None else round(eta, 1),
                "stats": dict(self._stats),
                "notes": list(self._notes),
                "closed": self._closed,
            }


@dataclass
class Job:
    """One piece of background work: an ingestion or a method's build."""

    id: str
    kind: Literal["build", "ingest"]
    key: str
    label: str
    run: Callable[[LiveProgress], dict[str, Any]] = field(repr=False)
    method: str | None = None
    state: JobState = "queued"
    created_at: str = field(default_factory=_now_iso)
    started_at: str | None = None
    finished_at: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    progress: LiveProgress = field(default_factory=LiveProgress)
    usage_at_start: Usage | None = None
    usage_at_end: Usage | None = None
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


class JobManager:
    """Runs jobs one at a time, in submission order, on a daemon worker thread.

    ``usage`` returns the workspace's per-stage model usage; a job shows the calls and
    tokens spent since it started (model calls made by questions asked meanwhile count
    too — the store keeps usage per stage, not per caller).
    """

    def __init__(self, usage: Callable[[], dict[str, Usage]]) -> None:
        self._usage = usage
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._ids = itertools.count(1)
        self._worker: threading.Thread | None = None
        self._stopping = False

    # ------------------------------------------------------------------ submitting
    def submit(
        self,
        kind: Literal["build", "ingest"],
        key: str,
        label: str,
        run: Callable[[LiveProgress], dict[str, Any]],
        method: str | None = None,
    ) -> tuple[Job, bool]:
        """Queue a job; returns ``(job, created)``. A queued or running job with the same
        ``key`` (e.g. ``build:kg4vd``) is returned instead of queueing a twin."""
        with self._lock:
            if self._stopping:
                raise RuntimeError("the server is shutting down; no new jobs")
            for job in self._jobs.values():
                if job.key == key and job.active:
                    return job, False
            job = Job(id=f"{kind}-{next(self._ids)}", kind=kind, key=key, label=label, run=run, method=method)
            self._jobs[job.id] = job
            self._forget_old()
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="docgraph-jobs", daemon=True)
                self._worker.start()
        self._queue.put(job)
        return job, True

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if not j.active]
        for job in finished[: max(0, len(finished) - MAX_FINISHED)]:
            del self._jobs[job.id]

    # ------------------------------------------------------------------ reading
    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        """All known jobs, oldest first."""
        with self._lock:
            return list(self._jobs.values())

    def busy(self) -> bool:
        with self._lock:
            return any(j.active for j in self._jobs.values())

    def snapshot(self, job: Job) -> dict[str, Any]:
        """A job as JSON-ready data, with live progress and the usage spent so far."""
        usage = None
        if job.usage_at_start is not None:
            now = job.usage_at_end or total_usage(self._usage())
            usage = {k: round(v, 3) for k, v in subtract(now, job.usage_at_start).model_dump().items()}
        return {
            "id": job.id,
            "kind": job.kind,
            "method": job.method,
            "label": job.label,
            "state": job.state,
            "created_at": job.created_at,
            "started_at": job.started_at,
            "finished_at": job.finished_at,
            "progress": job.progress.snapshot(),
            "usage": usage,
            "result": job.result,
            "error": job.error,
        }

    # ------------------------------------------------------------------ running
    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            if job.state == "queued":  # not cancelled by shutdown meanwhile
                self._run_one(job)

    def _run_one(self, job: Job) -> None:
        job.started_at = _now_iso()
        try:
            job.usage_at_start = total_usage(self._usage())
        except Exception:  # usage is informative; never block the job on it
            log.exception("reading usage before %s failed", job.id)
        job.state = "running"
        try:
            job.result = job.run(job.progress)
            job.state = "done"
        except Exception as exc:  # the job failed; the server and other jobs go on
            log.exception("%s failed", job.id)
            # docgraph's own errors say what to do; anything else gets its type for the bug report
            job.error = str(exc) if isinstance(exc, DocgraphError) else f"{type(exc).__name__}: {exc}"
            job.state = "failed"
        finally:
            job.progress.close()
            try:
                job.usage_at_end = total_usage(self._usage())
            except Exception:
                log.exception("reading usage after %s failed", job.id)
            job.finished_at = _now_iso()
            job.finished.set()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Stop taking jobs and let the worker finish the running one (up to ``timeout``).
        Returns whether the worker has stopped; a build cut short resumes next time."""
        with self._lock:
            self._stopping = True
            worker = self._worker
            pending = [j for j in self._jobs.values() if j.state == "queued"]
        for job in pending:
            job.state, job.error = "failed", "cancelled: the server stopped before it started"
            job.finished.set()
        self._queue.put(None)
        if worker is None:
            return True
        worker.join(timeout)
        return not worker.is_alive()
