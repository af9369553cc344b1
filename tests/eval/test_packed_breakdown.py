"""``benchmarks/packed_breakdown.py``: the split of packed recall by whether the best page lies
in the question's own source document, on hand-made records and on the real layout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "packed_breakdown.py"


def _record(qid: str, gold: list[int], retrieved: list[int], kind: str, method: str = "m") -> dict:
    return {
        "kind": "question",
        "method": method,
        "qid": qid,
        "gold": [f"packed|{p}" for p in gold],
        "retrieved": [f"packed|{p}" for p in retrieved],
        "categories": {"question_type": [kind]},
    }


def test_breakdown_splits_by_the_best_pages_document_and_strikes_out_other_documents(benchmark_script):
    module = benchmark_script("packed_breakdown")
    document_of = lambda page: "a" if page <= 10 else "b"  # noqa: E731 — pages 1-10 are a, 11-20 b
    packed = {
        "q1": _record("q1", [2, 3], [2, 15, 16, 17, 18, 3], "cross-page"),  # best page right
        "q2": _record("q2", [4], [12, 13, 14, 15, 16, 4], "single-page"),
    }  # best page wrong
    per_document = {"q1": _record("q1", [2, 3], [3, 2], "cross-page")}
    groups, other, gold_at, right = module.breakdown(packed, per_document, document_of, {"q1": "a", "q2": "a"}, 5)
    assert groups["cross-page, best page in its document"] == [(0.5, 1.0, 1.0)]
    assert groups["single-page, best page outside its document"] == [(0.0, 1.0, None)]
    assert len(groups["all"]) == 2
    assert right == 1
    assert other == [0, 1, 1, 1, 1, 0] and gold_at == [1, 0, 0, 0, 0, 1]


def test_the_script_rebuilds_the_packed_layout_of_the_shared_benchmark(tmp_path, shared_data):
    data = shared_data / "mmlongbench_doc"
    if not (data / "samples.json").exists():
        pytest.skip("no MMLongBench-Doc samples in the shared data")
    from docgraph.eval.loaders.mmlongbench import load_mmlongbench, pack_documents

    items = load_mmlongbench(data).items[:3]
    layout, packed_items = pack_documents(items, load_mmlongbench(data).page_counts)
    records = []
    for item in packed_items:
        gold = [p for _, p in item.gold_pages] or [1]
        first = layout.offsets[item.extra["source_doc_ids"][0]] + 1  # its document's first page
        records.append(_record(item.id, gold, [first] + gold, "single-page", method="x"))
        records.append(_record(item.id, gold, gold, "single-page", method="y") | {"question": item.question})
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--packed", str(path), "--data", str(data), "--baseline", "x", "-k", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    n = len(packed_items)
    assert f"| x | all | {n} |" in done.stdout
    assert "Recall@1 margin over x" in done.stdout
    # y ranks the gold pages first; x puts its document's first page (never gold here) before them
    expected = 100 * sum(1 / len(item.gold_pages) for item in packed_items) / n
    assert f"| y | all | {n} | {expected:+.1f} | — |" in done.stdout  # no per-document records given
    assert "best page outside its document" not in done.stdout  # every best page is its own document's first


def test_margins_split_the_questions_that_name_a_label_from_those_that_do_not(benchmark_script):
    module = benchmark_script("packed_breakdown")

    def record(qid, question, gold, retrieved):
        out = _record(qid, gold, retrieved, "single-page")
        out["question"] = question
        return out

    method = {
        "q1": record("q1", "In figure 3, how many icons are used?", [4], [4, 9]),
        "q2": record("q2", "Which group is larger in 2018?", [7], [8, 9]),
    }
    baseline = {
        "q1": record("q1", "In figure 3, how many icons are used?", [4], [9, 8]),
        "q2": record("q2", "Which group is larger in 2018?", [7], [7, 9]),
    }
    per_doc = {"q1": record("q1", "", [4], [4])}
    table = module.margins(method, baseline, per_doc, per_doc, 1)
    assert table["names a label"] == (1, 100.0, 0.0)
    assert table["names no label"] == (1, -100.0, None)  # q2 has no per-document records
    assert table["all"] == (2, 0.0, None)
    assert module.label_group("What is on slide 14?") == "names a label"
    assert module.label_group("the second table") == "names a label"
