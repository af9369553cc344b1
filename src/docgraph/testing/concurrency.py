"""Concurrency cases of the reliability matrix (issue 15 item 4), on real processes.

- ``cli_writers_case(base, reference, work)``: ``docgraph build --method dense`` runs on a copy
  of ``base``; while it holds the write lock, another build, an add and a ``check --repair``
  start (each must be refused with "workspace busy" naming the build) and ``ls`` and
  ``check`` read (each must succeed); the finished workspace must equal ``reference``
  (a workspace the same build finished on) and pass ``docgraph check``.
- ``web_app_case(base, reference, work)``: ``docgraph serve`` on a copy of ``base``; the CLI
  builds dense on it while the app serves the documents, the build status and a page and
  its image in a loop (every answer 200, the slowest under ``MAX_LATENCY_S``), and the app's
  own build job (hvm) must fail as busy; the store is then compared and checked as above.
- ``mixed_clients_case(base, upload, work)``: ``docgraph serve`` on a copy of ``base`` (dense
  built); clients upload ``upload``, start dense builds, ask and list documents in parallel
  for a while: no 5xx and no transport error, the slowest answer under ``MAX_MIXED_S``; when
  the jobs are done the workspace must equal one where the same file was added and dense
  built by the CLI, and pass ``docgraph check``.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from ..store.integrity import check_workspace
from ..store.writelock import holder
from .faults import canonical_dump, compare_dumps, docgraph_command, run_to_completion, subprocess_env
from .ports import free_port

MAX_LATENCY_S = 5.0
MAX_MIXED_S = 30.0  # an answer or an upload waits behind the model-free CPU work of the others
QUESTIONS = ("Who are the senior contributing authors?", "What does the preface say about OpenStax?")
TOKEN = "tok-concurrency"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BUSY = "is busy: `docgraph build --method dense`"


@dataclass
class ConcurrencyResult:
    case: str
    refused: int = 0  # writers told "workspace busy" naming the holder
    writers: int = 0  # writers started beside the build
    reads: int = 0  # reads answered while the build ran
    read_errors: list[str] = field(default_factory=list)
    slowest_read_s: float = 0.0  # of the web app's answers (a CLI reader's time is mostly Python starting)
    lost: int = 0
    duplicated: int = 0
    changed: int = 0
    check_problems: int = 0
    problems: list[str] = field(default_factory=list)
    answered: dict[str, int] = field(default_factory=dict)  # "<kind> <status>" -> requests (mixed clients)
    max_latency_s: float = MAX_LATENCY_S

    @property
    def survived(self) -> bool:
        return (
            self.refused == self.writers
            and not self.read_errors
            and self.reads > 0
            and self.slowest_read_s < self.max_latency_s
            and not (self.lost or self.duplicated or self.changed)
            and not self.check_problems
            and not self.problems
        )


def _start(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        docgraph_command("--workspace", str(root), *args),
        env=env or subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_writer(root: Path, proc: subprocess.Popen, timeout: float = 60) -> dict:
    """The write lock's holder once ``proc`` (a writer) has taken it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = holder(root)
        if info:
            return info
        if proc.poll() is not None:
            raise RuntimeError(f"the writer ended before taking the lock: {proc.communicate()}")
        time.sleep(0.05)
    raise RuntimeError("the writer never took the write lock")


def _compare(result: ConcurrencyResult, reference: Path, root: Path) -> ConcurrencyResult:
    diff = compare_dumps(canonical_dump(reference), canonical_dump(root))
    result.lost, result.duplicated = sum(diff.lost.values()), sum(diff.extra.values())
    result.changed = sum(diff.changed.values())
    findings = check_workspace(root).findings
    result.check_problems = len(findings)
    result.problems += diff.examples + [f.message for f in findings]
    return result


def cli_writers_case(base: Path, reference: Path, work: Path, add: Path) -> ConcurrencyResult:
    """See the module doc; ``add`` is a file the refused ``docgraph add`` names."""
    result = ConcurrencyResult("two CLI writers (build + build, add, check --repair) and CLI readers")
    root = Path(shutil.copytree(base, work / "cli-writers"))
    build = _start(root, "build", "--method", "dense")
    info = wait_for_writer(root, build)
    if info.get("pid") != build.pid:
        result.problems.append(f"the lock names {info}, not the build (pid {build.pid})")
    writers = [
        _start(root, "build", "--method", "hvm"),
        _start(root, "add", str(add)),
        _start(root, "check", "--repair"),
    ]
    readers = {command: _start(root, command) for command in ("ls", "check")}
    for proc in writers:
        rc, err = proc.wait(timeout=300), proc.communicate()[1]
        result.writers += 1
        result.refused += rc == 1 and BUSY in err and f"pid {build.pid}" in err
    for command, proc in readers.items():
        rc = proc.wait(timeout=300)
        result.reads += 1
        if rc != 0:
            result.read_errors.append(f"{command} exited {rc}: {proc.communicate()[1][-300:]}")
    if build.wait(timeout=600) != 0:
        result.problems.append(f"the build failed: {build.communicate()[1][-500:]}")
    return _compare(result, reference, root)


def serve_workspace(root: Path, timeout: float = 120) -> tuple[subprocess.Popen, str]:
    """`docgraph serve` on ``root`` (token ``TOKEN``) once it answers; (process, API base URL).
    Its output goes to ``root/../serve-<port>.log``."""
    port = free_port()
    log = open(root.parent / f"serve-{port}.log", "w")  # noqa: SIM115 - the server writes to it while it runs
    server = subprocess.Popen(
        docgraph_command("-w", str(root), "serve", "--port", str(port)),
        env={**subprocess_env(), "DOCGRAPH_TOKEN": TOKEN},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    base = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx.get(f"{base}/documents", headers=AUTH, timeout=5)
            return server, base
        except httpx.TransportError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                said = (root.parent / f"serve-{port}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"docgraph serve did not start on port {port}: {said}") from None
            time.sleep(0.2)


def web_app_case(base: Path, reference: Path, work: Path, doc_id: str) -> ConcurrencyResult:
    """See the module doc; ``doc_id``: a document of ``base`` whose page 3 the app serves."""
    result = ConcurrencyResult("web app serving while the CLI builds; the app's own build")
    root = Path(shutil.copytree(base, work / "web-app"))
    server, api = serve_workspace(root)
    try:
        build = _start(root, "build", "--method", "dense")
        wait_for_writer(root, build)
        job = httpx.post(f"{api}/build", json={"method": "hvm"}, headers=AUTH, timeout=10).json()
        result.writers = 1
        paths = ("/documents", "/build", f"/documents/{doc_id}/pages/3", f"/documents/{doc_id}/pages/3/image")
        while build.poll() is None:
            for path in paths:
                started = time.monotonic()
                status = httpx.get(api + path, headers=AUTH, timeout=30).status_code
                result.slowest_read_s = max(result.slowest_read_s, time.monotonic() - started)
                result.reads += 1
                if status != 200:
                    result.read_errors.append(f"GET {path}: {status}")
        if build.returncode != 0:
            result.problems.append(f"the build failed: {build.communicate()[1][-500:]}")
        deadline = time.monotonic() + 120
        state = httpx.get(f"{api}/jobs/{job['id']}", headers=AUTH, timeout=10).json()
        while state["state"] in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.2)
            state = httpx.get(f"{api}/jobs/{job['id']}", headers=AUTH, timeout=10).json()
        result.refused = int(state["state"] == "failed" and BUSY in (state.get("error") or ""))
        if not result.refused:
            result.problems.append(f"the app's build job: {state['state']} {state.get('error')}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return _compare(result, reference, root)


def _client(
    api: str, kind: str, upload: Path, until: float, seen: Counter, slowest: list[float], lock: threading.Lock
) -> None:
    with httpx.Client(headers=AUTH, timeout=120) as http:
        i = 0
        while time.monotonic() < until:
            started = time.monotonic()
            status: int | str  # the HTTP status, or the name of the transport error
            try:
                if kind == "upload":
                    with open(upload, "rb") as fh:
                        status = http.post(
                            f"{api}/upload", files={"files": (upload.name, fh, "application/pdf")}
                        ).status_code
                elif kind == "build":
                    status = http.post(f"{api}/build", json={"method": "dense"}).status_code
                elif kind == "ask":
                    status = http.post(f"{api}/ask", json={"question": QUESTIONS[i % 2], "method": "dense"}).status_code
                else:
                    status = http.get(f"{api}/documents").status_code
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            with lock:
                seen[f"{kind} {status}"] += 1
                slowest[0] = max(slowest[0], time.monotonic() - started)
            i += 1
            time.sleep(0.2)


def _wait_idle(api: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while httpx.get(f"{api}/build", headers=AUTH, timeout=30).json()["busy"] and time.monotonic() < deadline:
        time.sleep(0.5)


def mixed_clients_case(
    base: Path, upload: Path, work: Path, clients: int = 8, seconds: float = 60
) -> ConcurrencyResult:
    """See the module doc; ``base`` has dense built, ``upload`` is a PDF it does not hold yet."""
    result = ConcurrencyResult(
        f"{clients} web clients uploading, building, asking and listing for {seconds:g} s", max_latency_s=MAX_MIXED_S
    )
    root = Path(shutil.copytree(base, work / "mixed"))
    server, api = serve_workspace(root)
    seen: Counter = Counter()
    slowest, lock = [0.0], threading.Lock()
    kinds = ["upload", "build", "ask", "list"]
    try:
        until = time.monotonic() + seconds
        threads = [
            threading.Thread(target=_client, args=(api, kinds[i % 4], upload, until, seen, slowest, lock))
            for i in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _wait_idle(api)
        httpx.post(f"{api}/build", json={"method": "dense"}, headers=AUTH, timeout=30)  # the last upload's document
        _wait_idle(api)
    finally:
        server.terminate()
        server.wait(timeout=30)
    result.reads = sum(seen.values())
    result.slowest_read_s = slowest[0]
    result.read_errors = [
        f"{key}: {n}" for key, n in sorted(seen.items()) if not key.split()[1].isdigit() or int(key.split()[1]) >= 500
    ]
    result.answered = dict(sorted(seen.items()))
    uploaded = sorted((root / "uploads").rglob(upload.name))
    if len(uploaded) != 1:
        result.problems.append(f"uploads kept: {uploaded}")
        return result
    reference = Path(shutil.copytree(base, work / "mixed-reference"))
    run_to_completion(docgraph_command("--workspace", str(reference), "add", str(uploaded[0])), work)
    run_to_completion(docgraph_command("--workspace", str(reference), "build", "--method", "dense"), work)
    return _compare(result, reference, root)
