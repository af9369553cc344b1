"""One workspace, several users at once (issue 15 item 4): a second writer gets a clear
"workspace busy" naming the first, readers — the CLI's and the web app's — go on, and the
store ends as one uninterrupted build leaves it (``store.writelock``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from docgraph import Workspace
from docgraph.errors import WorkspaceBusyError
from docgraph.store.integrity import check_workspace
from docgraph.store.writelock import LOCK_FILE, holder, write_lock
from docgraph.testing.faults import canonical_dump, compare_dumps, docgraph_command, subprocess_env

from conftest_paths import OPENSTAX

TOKEN = "tok-concurrency"


def test_the_lock_is_reentrant_for_its_thread_and_refuses_another(tmp_path):
    with write_lock(tmp_path, "build --method dense"):
        with write_lock(tmp_path, "build --method dense --rebuild-vectors"):  # same thread: nested
            assert holder(tmp_path) == {"pid": os.getpid(), "what": "build --method dense",
                                        "since": holder(tmp_path)["since"]}
        refused: list[BaseException] = []

        def other() -> None:
            try:
                with write_lock(tmp_path, "add"):
                    pass
            except WorkspaceBusyError as exc:
                refused.append(exc)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert len(refused) == 1 and "`docgraph build --method dense` (pid" in str(refused[0])
        assert "`add` was not started" in str(refused[0])
    assert holder(tmp_path) is None
    with write_lock(tmp_path, "add"):  # free again
        pass


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    code = ("import sys, time; from docgraph.store.writelock import write_lock\n"
            "with write_lock(sys.argv[1], 'build --method kg4vd'):\n    print('held', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        assert holder(tmp_path)["pid"] == proc.pid
        with pytest.raises(WorkspaceBusyError, match=f"pid {proc.pid}"):
            with write_lock(tmp_path, "add"):
                pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert (tmp_path / LOCK_FILE).exists() and holder(tmp_path) is None
    with write_lock(tmp_path, "add"):
        pass


def _start(root: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(docgraph_command("--workspace", str(root), *args), env=subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _wait_for_writer(root: Path, proc: subprocess.Popen, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = holder(root)
        if info:
            return info
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the build never took the write lock")


@pytest.mark.slow
def test_a_second_cli_writer_is_refused_readers_go_on_and_the_build_is_whole(_openstax_template, _dense_template,
                                                                            tmp_path):
    root = Path(shutil.copytree(_openstax_template, tmp_path / "ws"))
    build = _start(root, "build", "--method", "dense")
    info = _wait_for_writer(root, build)
    assert (info["pid"], info["what"]) == (build.pid, "build --method dense")
    others = {"build hvm": _start(root, "build", "--method", "hvm"), "add": _start(root, "add", str(OPENSTAX)),
              "repair": _start(root, "check", "--repair"), "ls": _start(root, "ls"), "check": _start(root, "check")}
    done = {name: (p.wait(timeout=120), *p.communicate()) for name, p in others.items()}
    assert build.wait(timeout=300) == 0, build.communicate()
    for name in ("build hvm", "add", "repair"):
        rc, out, err = done[name]
        assert rc == 1 and "is busy: `docgraph build --method dense`" in err and f"pid {build.pid}" in err, (name, err)
    assert done["ls"][0] == 0 and "040fed959f81      5  ready" in done["ls"][1]
    assert done["check"][0] == 0  # a plain check reads on (and warns if the build is still writing)
    diff = compare_dumps(canonical_dump(_dense_template), canonical_dump(root))
    assert diff.equal, diff.examples
    assert check_workspace(root).findings == []


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_the_web_app_serves_while_the_cli_builds_and_its_own_build_is_told_busy(_openstax_template, _dense_template,
                                                                              tmp_path):
    root = Path(shutil.copytree(_openstax_template, tmp_path / "ws"))
    port = _free_port()
    server = subprocess.Popen(docgraph_command("-w", str(root), "serve", "--port", str(port)),
                              env={**subprocess_env(), "DOCGRAPH_TOKEN": TOKEN}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base, auth = f"http://127.0.0.1:{port}/api", {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/documents", headers=auth, timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        build = _start(root, "build", "--method", "dense")
        _wait_for_writer(root, build)
        job = httpx.post(f"{base}/build", json={"method": "hvm"}, headers=auth, timeout=10).json()
        latencies, statuses = [], set()
        while build.poll() is None:
            for path in ("/documents", "/build", "/documents/040fed959f81/pages/3",
                         "/documents/040fed959f81/pages/3/image"):
                started = time.monotonic()
                statuses.add(httpx.get(base + path, headers=auth, timeout=30).status_code)
                latencies.append(time.monotonic() - started)
        assert build.returncode == 0, build.communicate()
        finished = httpx.get(f"{base}/jobs/{job['id']}", headers=auth, timeout=10).json()
        while finished["state"] in ("queued", "running"):
            time.sleep(0.2)
            finished = httpx.get(f"{base}/jobs/{job['id']}", headers=auth, timeout=10).json()
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert statuses == {200} and len(latencies) >= 8
    assert max(latencies) < 5.0, sorted(latencies)[-5:]  # the app stays responsive on two busy cores
    assert finished["state"] == "failed" and "is busy: `docgraph build --method dense`" in finished["error"]
    diff = compare_dumps(canonical_dump(_dense_template), canonical_dump(root))
    assert diff.equal, diff.examples  # nothing of the refused hvm build, all of the dense one
    assert check_workspace(root).findings == []


def test_two_threads_of_one_process_cannot_build_one_workspace_at_once(_dense_template, tmp_path):
    root = Path(shutil.copytree(_dense_template, tmp_path / "ws"))
    with Workspace(root) as ws, write_lock(root, "build --method kg4vd"):
        errors: list[BaseException] = []
        thread = threading.Thread(target=lambda: errors.append(_try(lambda: Workspace(root).build("bm25"))))
        thread.start()
        thread.join()
        assert isinstance(errors[0], WorkspaceBusyError)
        assert ws.build("bm25").pages_built == 5  # the holding thread itself may


def _try(work):
    try:
        work()
    except BaseException as exc:  # noqa: BLE001 - handed to the test
        return exc
    return None
