"""``benchmarks/compare_runs.py``: question-by-question counts of two runs and the sign test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "compare_runs.py"


def _record(qid: str, gold: list[str], retrieved: list[str]) -> dict:
    return {
        "kind": "question",
        "setting": "per-document",
        "method": "m",
        "corpus": "c",
        "qid": qid,
        "question": qid,
        "gold": gold,
        "retrieved": retrieved,
    }


def test_sign_test_matches_the_binomial_tails(benchmark_script):
    sign_test = benchmark_script("compare_runs").sign_test
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 5) == 1.0
    assert abs(sign_test(0, 5) - 2 / 32) < 1e-12  # all five one way
    assert abs(sign_test(13, 23) - sign_test(23, 13)) < 1e-12
    assert 0.10 < sign_test(13, 23) < 0.14  # session 8's engine comparison, p ≈ 0.13


def test_runs_compared_count_the_questions_each_answers_better(tmp_path):
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir(), b_dir.mkdir()
    a = [
        _record("q1", ["p1"], ["p1", "p2"]),
        _record("q2", ["p3"], ["p9"] * 6 + ["p3"]),
        _record("q3", ["p4", "p5"], ["p4", "p5"]),
    ]
    b = [
        _record("q1", ["p1"], ["p1", "p2"]),
        _record("q2", ["p3"], ["p3"]),
        _record("q3", ["p4", "p5"], ["p4"] + ["p9"] * 5 + ["p5"]),
    ]
    for folder, records in ((a_dir, a), (b_dir, b)):
        (folder / "set-retrieval-records.jsonl").write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(a_dir), str(b_dir)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    row = next(line for line in done.stdout.splitlines() if line.startswith("| set-retrieval |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:6] == ["3", "1", "1"]  # questions, identical lists, same top-5 set
    assert cells[6:8] == ["66.7", "83.3"]  # recall@5 A, B
    assert cells[9:] == ["1 / 1", "1.00"]  # q2 better in B, q3 worse
