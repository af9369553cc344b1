"""Adding documents works from any Python entry point (issue 15, first bullet).

``python - < script.py`` reads the main module from standard input: spawned page workers
cannot re-import it. Pages then run in-process, and a worker that cannot start is never
reported as a damaged file. These tests run real Python subprocesses on a real PDF.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
from docgraph import Workspace
ws = Workspace({ws!r}, overrides={{"ingest": {{"workers": 2}}}})
report = ws.ingest([{pdf!r}])
for failure in report.failures:
    print("FAILED", failure)
for note in report.notes:
    print("NOTE", note)
print("PAGES", sum(d.page_count for d in report.added))
ws.close()
"""


@pytest.fixture()
def pdf(shared_data: Path) -> str:
    return str(shared_data / "documents" / "openstax_world_history_v1_excerpt.pdf")


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_script_read_from_stdin_adds_a_real_pdf(tmp_path, pdf):
    out = _run(["-"], tmp_path, SCRIPT.format(ws=str(tmp_path / "ws"), pdf=pdf))
    assert "FAILED" not in out and "PAGES 5" in out, out
    assert "NOTE pages are processed on one core" in out and "<stdin>" in out


def test_workers_that_cannot_start_fall_back_to_in_process_pages(tmp_path, pdf):
    # The script runs as __main__, but a spawned worker re-importing it (as __mp_main__) fails:
    # the pool breaks before any page is given to it, and pages run in-process instead.
    script = tmp_path / "script.py"
    script.write_text(
        'if __name__ == "__mp_main__":\n    raise RuntimeError("cannot be re-imported")\n\n'
        'if __name__ == "__main__":\n'
        + "".join("    " + line + "\n" for line in SCRIPT.format(ws=str(tmp_path / "ws"), pdf=pdf).strip().splitlines())
    )
    out = _run([str(script)], tmp_path)
    assert "FAILED" not in out and "PAGES 5" in out, out
    assert "page workers could not start" in out
