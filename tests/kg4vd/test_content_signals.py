"""``benchmarks/content_signals.py`` on the offline-built World History excerpt: it reads
KG4VD's own ranking (the trace keeps the prior), reports every signal, and reorders only
the pool a system would have — never a gold page from below it."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = "world_history_p10-15.pdf"
GOLD = {"test_q003": 1, "test_q004": 2, "test_q005": 2, "test_q006": 5}


def load_tool():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("content_signals", ROOT / "benchmarks" / "content_signals.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def study(wh_built, shared_data: Path, tmp_path_factory):
    ws, _ = wh_built
    questions = {}
    for line in (shared_data / "kg4vd_test" / "questions.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["qid"] in GOLD:
            questions[row["qid"]] = row["question"]
    records = tmp_path_factory.mktemp("signals") / "records.jsonl"
    rows = []
    for i, (qid, question) in enumerate(sorted(questions.items())):
        gold = [f"{DOCUMENT}|{GOLD[qid]}"]
        retrieved = gold if i % 2 == 0 else [f"{DOCUMENT}|{GOLD[qid] % 5 + 1}"]  # hybrid finds half
        rows.append(
            {
                "kind": "question",
                "method": "hybrid",
                "qid": qid,
                "question": question,
                "gold": gold,
                "retrieved": retrieved,
            }
        )
    records.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return ws, questions, records


def run(tool, capsys, *args: str) -> str:
    assert tool.main(list(args)) == 0
    return capsys.readouterr().out


def cell(out: str, row: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith(f"| {row} |"))
    return [c.strip() for c in line.strip("|").split("|")[1:]]


def test_every_signal_is_reported_against_hybrid_and_kg4vd(study, capsys):
    ws, questions, records = study
    tool = load_tool()
    out = run(tool, capsys, "--workspaces", str(ws.root), "--records", str(records), "--kinds", "label,lexicon,content")
    assert re.search(rf"^{len(questions)} questions", out, re.M)
    assert cell(out, "hybrid")[0] == "50.0"
    found = [
        any(p.page == GOLD[qid] for p in ws.retrieve(question, method="kg4vd").pages[:5])
        for qid, question in questions.items()
    ]
    assert cell(out, "kg4vd (final list)")[0] == f"{100 * sum(found) / len(found):.1f}"
    for name in tool.SIGNALS:
        values = cell(out, name)
        assert len(values) == 1 + len(tool.WEIGHTS) and all(re.fullmatch(r"\d+\.\d", v) for v in values), name


def test_a_pool_of_one_page_leaves_nothing_to_reorder(study, capsys):
    """With ``--depth 1`` the pool is the prior's best page alone: every signal, blend and the
    learned ranker give the prior's recall — a gold page below the pool is never brought in."""
    ws, _, records = study
    tool = load_tool()
    out = run(
        tool,
        capsys,
        "--workspaces",
        str(ws.root),
        "--records",
        str(records),
        "--kinds",
        "label,lexicon,content",
        "--depth",
        "1",
        "-k",
        "5",
    )
    prior = cell(out, "prior")[0]
    for name in tool.SIGNALS:
        assert set(cell(out, name)) == {prior}, name
    assert cell(out, "pairwise logistic ranker over all, 5 folds by document (held out)")[0] == prior


def test_the_trace_keeps_the_prior_it_ranked_with(study):
    from docgraph.methods.kg4vd.query import run_retrieval

    ws, questions, _ = study
    _, trace, _ = run_retrieval(ws.context(), questions["test_q003"])
    assert trace.ranking is not None and len(trace.ranking.final) == len(trace.ranking.pages)
    assert len(trace.chunk_seeds) == len(trace.ranking.chunk_scores) and trace.chunk_seeds.sum() > 0
    best = trace.ranking.top(1)[0][0]
    assert best in {(p.doc_id, p.page) for p in trace.pages}  # the prior's best page is a candidate
