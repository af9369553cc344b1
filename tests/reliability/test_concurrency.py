"""One workspace, several users at once (issue 15 item 4): a second writer gets a clear
"workspace busy" naming the first, readers — the CLI's and the web app's — go on, and the
store ends as one uninterrupted build leaves it (``store.writelock``; the process cases are
``docgraph.testing.concurrency``, also run by ``benchmarks/faults.py``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest_paths import OPENSTAX

from docgraph import Workspace
from docgraph.errors import WorkspaceBusyError
from docgraph.store.writelock import LOCK_FILE, holder, write_lock
from docgraph.testing.concurrency import MAX_LATENCY_S, cli_writers_case, mixed_clients_case, web_app_case


def test_the_lock_is_reentrant_for_its_thread_and_refuses_another(tmp_path):
    with write_lock(tmp_path, "build --method dense"):
        with write_lock(tmp_path, "build --method dense --rebuild-vectors"):  # same thread: nested
            assert holder(tmp_path) == {
                "pid": os.getpid(),
                "what": "build --method dense",
                "since": holder(tmp_path)["since"],
            }
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
    code = (
        "import sys, time; from docgraph.store.writelock import write_lock\n"
        "with write_lock(sys.argv[1], 'build --method kg4vd'):\n    print('held', flush=True); time.sleep(60)\n"
    )
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


def assert_survived(result) -> None:
    assert result.problems == [] and result.read_errors == [], (result.problems, result.read_errors)
    assert (result.refused, result.lost, result.duplicated, result.changed, result.check_problems) == (
        result.writers,
        0,
        0,
        0,
        0,
    )
    assert result.reads > 0 and result.survived


@pytest.mark.slow
def test_a_second_cli_writer_is_refused_readers_go_on_and_the_build_is_whole(
    _openstax_template, _dense_template, tmp_path
):
    result = cli_writers_case(_openstax_template, _dense_template, tmp_path, add=OPENSTAX)
    assert result.writers == 3 and result.reads == 2
    assert_survived(result)


@pytest.mark.slow
def test_the_web_app_serves_while_the_cli_builds_and_its_own_build_is_told_busy(
    _openstax_template, _dense_template, tmp_path
):
    result = web_app_case(_openstax_template, _dense_template, tmp_path, doc_id="040fed959f81")
    assert result.reads >= 8 and result.slowest_read_s < MAX_LATENCY_S  # responsive on two busy cores
    assert_survived(result)


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


@pytest.mark.slow
def test_web_clients_uploading_building_and_asking_at_once(_dense_template, tmp_path):
    from conftest_paths import ACCIONA

    result = mixed_clients_case(_dense_template, ACCIONA, tmp_path, clients=8, seconds=20)
    assert result.problems == [] and result.read_errors == [], (result.problems, result.answered)
    assert {key.split()[0] for key in result.answered} == {"upload", "build", "ask", "list"}
    assert (result.lost, result.duplicated, result.changed, result.check_problems) == (0, 0, 0, 0)
    assert result.survived, result
