"""``benchmarks/ray_overhead.py`` end to end on the one-page shared document: both runners
add and build it, the table holds measured seconds for every phase, and the two
workspaces are compared (and agree)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ray_overhead.py"
ONE_PAGE = "acciona_sustainability_report_2020_p1.pdf"


def test_the_ray_overhead_benchmark_times_both_runners_and_compares_their_workspaces(tmp_path, shared_data):
    data = tmp_path / "data"
    (data / "documents").mkdir(parents=True)
    (data / "documents" / ONE_PAGE).symlink_to(shared_data / "documents" / ONE_PAGE)
    env = {**os.environ, "DOCGRAPH_SHARED_DATA": str(data)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--docs", "0", "--methods", "dense", "--work", str(tmp_path / "work")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    rows = {
        m.group(1): (float(m.group(2)), float(m.group(3)), float(m.group(4)))
        for m in re.finditer(r"^\| (add|build dense|total) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", done.stdout, re.M)
    }
    assert set(rows) == {"add", "build dense", "total"}, done.stdout
    for pool, ray, ratio in rows.values():
        assert pool > 0 and ray > 0 and ratio > 0
    for column in (0, 1):
        assert rows["total"][column] == pytest.approx(rows["add"][column] + rows["build dense"][column], abs=0.15)
    assert "1 documents: " + ONE_PAGE in done.stdout
    assert "results identical" in done.stdout, done.stdout
    assert (tmp_path / "work" / "local" / "docgraph.sqlite").exists()
    assert (tmp_path / "work" / "ray" / "docgraph.sqlite").exists()
