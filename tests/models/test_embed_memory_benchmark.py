"""``benchmarks/embed_memory.py`` end to end on real page text: each batch budget in a fresh
process, the same vectors from every budget; on a local Ray cluster, one embedding worker
at ``ray.embed_threads = 2`` against two at 1, and the same vectors."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openvino")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "embed_memory.py"
NUMBER = r"([\d.]+)"


def test_budgets_and_ray_widths_give_the_same_vectors_and_a_memory_row_each(shared_data):
    widths = "1,2" if importlib.util.find_spec("ray") else ""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--texts", "12", "--budgets", "2048,256", "--ray-widths", widths],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DOCGRAPH_SHARED_DATA": str(shared_data)},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    row = r"^\| (\d+) \| " + r" \| ".join([NUMBER] * 4) + r" \| (\w+) \|$"
    rows = re.findall(row, done.stdout, re.M)
    budgets, ray_rows = rows[:2], rows[2:]
    assert [r[0] for r in budgets] == ["2048", "256"], done.stdout
    for _, compiled, after, peak, cpu, vectors in budgets:
        assert vectors == "same"
        assert 0 < float(compiled) <= float(peak) and 0 < float(after) <= float(peak) and float(cpu) > 0
    if not widths:
        return
    assert [(r[0], r[1]) for r in ray_rows] == [("1", "2"), ("2", "1")], done.stdout  # width, workers
    (_, _, rss_narrow, pss_narrow, _, _), (_, _, rss_wide, pss_wide, _, vectors) = ray_rows
    assert vectors == "same"
    assert 0 < float(pss_wide) <= float(rss_wide) and 0 < float(pss_narrow) <= float(rss_narrow)
    assert float(rss_wide) < float(rss_narrow), "one worker holds one model, two hold two"
