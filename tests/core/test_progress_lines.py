"""Progress without a terminal: plain lines a log file can keep."""

from __future__ import annotations

from docgraph.progress import TerminalProgress


def test_plain_lines_when_stderr_is_not_a_terminal(capsys):
    progress = TerminalProgress(enabled=False, interval_s=0.0)
    progress.start(4, "kg4vd build")
    progress.advance(1, rounds=2)
    progress.note("a skipped page")
    progress.advance(3, rounds=7)
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("kg4vd build: 0/4 (0%)")
    assert lines[1].startswith("kg4vd build: 1/4 (25%)") and "eta" in lines[1] and lines[1].endswith("rounds=2")
    assert lines[2] == "a skipped page"
    assert lines[3].startswith("kg4vd build: 4/4 (100%)") and "eta" not in lines[3]
    assert lines[-1].startswith("kg4vd build: 4/4 (100%)") and lines[-1].endswith("rounds=7 done")


def test_plain_lines_are_throttled(capsys):
    progress = TerminalProgress(enabled=False, interval_s=3600.0)
    progress.start(100, "ingest")
    for _ in range(100):
        progress.advance()
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[-1].startswith("ingest: 100/100 (100%)") and lines[-1].endswith("done")
