"""Progress while model calls are in flight (issue 19): the running call is visible and the
plain progress line keeps printing between page updates."""

from __future__ import annotations

import threading
import time

from docgraph.models.base import user
from docgraph.models.inflight import CALLS
from docgraph.progress import TerminalProgress


def test_a_running_call_is_listed_until_it_returns(openai_stub, stub_hub):
    openai_stub.delay_s = 0.6
    chat = stub_hub.chat("build")
    worker = threading.Thread(target=lambda: chat.complete([user("slow")], stage="slow.stage"))
    worker.start()
    deadline = time.monotonic() + 5
    while CALLS.by_stage().get("slow.stage") != 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert CALLS.by_stage().get("slow.stage") == 1
    assert CALLS.summary()["in_flight"] >= 1
    worker.join(5)
    assert "slow.stage" not in CALLS.by_stage()


def test_plain_progress_prints_running_calls_between_updates(capsys, monkeypatch):
    monkeypatch.setattr(TerminalProgress, "HEARTBEAT_S", 0.05)
    progress = TerminalProgress(enabled=False, interval_s=0.1, live=lambda: {"in_flight": 2, "longest_s": 7})
    progress.start(5, "kg4vd pages")
    time.sleep(0.5)  # no advance: only the heartbeat prints
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    beats = [line for line in lines[1:-1] if line.startswith("kg4vd pages: 0/5")]
    assert beats and all(line.endswith("in_flight=2, longest_s=7") for line in beats)


def test_no_heartbeat_lines_without_running_calls(capsys, monkeypatch):
    monkeypatch.setattr(TerminalProgress, "HEARTBEAT_S", 0.05)
    progress = TerminalProgress(enabled=False, interval_s=0.1, live=lambda: {})
    progress.start(5, "kg4vd pages")
    time.sleep(0.3)
    progress.close()
    assert len(capsys.readouterr().err.splitlines()) == 2  # start and close only
