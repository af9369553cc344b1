"""Fixtures of the core tests: a small library of real filings, built offline, and a runner of
the benchmark scripts that read a library run's records."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

FILINGS = {"3M_2018_10K.pdf": (1, 60), "3M_2022_10K.pdf": (1, 52), "BOEING_2018_10K.pdf": (1, 53)}


@pytest.fixture(scope="session")
def filings_library(tmp_path_factory, shared_data: Path) -> Path:
    """Three real filings' covers and cash flow statements in one workspace, kg4vd and hvm
    built offline (FinanceBench development filings)."""
    from docgraph.testing.files import built_library

    source = shared_data / "financebench" / "pdfs"
    if not source.is_dir():
        pytest.skip("the FinanceBench filings are not in the shared data")
    return built_library({source / name: pages for name, pages in FILINGS.items()}, tmp_path_factory.mktemp("filings"))


@pytest.fixture
def library_benchmark(tmp_path: Path) -> Callable[..., str]:
    """``run(script, workspace, asked, *args)``: the stdout of ``benchmarks/<script>`` run over
    ``workspace`` with a records file of one kg4vd question record per ``(question, fields)``
    of ``asked`` (``fields``: the record's gold pages or documents)."""

    def run(script: str, workspace: Path, asked: Sequence[tuple[str, dict]], *args: str) -> str:
        records = tmp_path / "records.jsonl"
        rows = [
            json.dumps({"kind": "question", "method": "kg4vd", "qid": f"q{i}", "question": question, **fields})
            for i, (question, fields) in enumerate(asked)
        ]
        records.write_text("\n".join(rows), encoding="utf-8")
        command = [sys.executable, str(BENCHMARKS / script), "--workspace", str(workspace), "--records", str(records)]
        return subprocess.run([*command, *args], capture_output=True, text=True, check=True).stdout

    return run
