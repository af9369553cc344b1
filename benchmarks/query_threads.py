"""Query latency with one BLAS thread against the libraries' own thread count, idle and busy.

    .venv/bin/python benchmarks/query_threads.py --workspace WS [--methods kg4vd,hvm,hybrid,dense]
        [--questions 60] [--busy 0,2] [--rounds 2]

On a built workspace, times ``Workspace.retrieve`` per question with ``retrieval.blas_threads
= 1`` (the default, ``docgraph.threads``) and ``= 0`` (OpenBLAS's own count, one thread per
core), the two alternating question by question, once per ``--busy`` level: that many
processes spinning on a core beside the queries, as a build's page workers would. Questions
are the first ``--questions`` of MMLongBench-Doc's ``samples.json`` (``DOCGRAPH_SHARED_DATA``,
else ``../shared/data``); any question serves for latency. Each method is warmed up first
(indexes and graph loaded, query vectors embedded), so the times exclude loading and, with
the query embedding cache warm, model inference.

Prints one row per method, load and setting: p50 and p95 milliseconds.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = q * (len(ordered) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def questions(limit: int) -> list[str]:
    data = Path(os.environ.get("DOCGRAPH_SHARED_DATA", ROOT.parent / "shared" / "data"))
    samples = json.loads((data / "mmlongbench_doc" / "samples.json").read_text())
    return [s["question"] for s in samples][:limit]


def _spin() -> None:  # pragma: no cover - runs in a child until terminated
    while True:
        pass


def timed(workspaces: dict[int, object], method: str, asked: list[str], rounds: int) -> dict[int, list[float]]:
    """Milliseconds per question for each setting, the settings alternating question by question."""
    out: dict[int, list[float]] = {setting: [] for setting in workspaces}
    for _ in range(rounds):
        for question in asked:
            for setting, ws in workspaces.items():
                started = time.perf_counter()
                ws.retrieve(question, method=method)
                out[setting].append((time.perf_counter() - started) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", required=True, help="a built workspace")
    parser.add_argument("--methods", default="kg4vd,hvm,hybrid,dense")
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--busy", default="0,2", help="comma-separated counts of spinning processes beside the queries")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    from docgraph import Workspace

    workspaces = {
        setting: Workspace(args.workspace, create=False, overrides={"retrieval": {"blas_threads": setting}})
        for setting in (1, 0)
    }
    asked = questions(args.questions)
    methods = [m for m in args.methods.split(",") if m]
    for method in methods:  # warm-up: indexes, graph, query vectors
        for question in asked:
            workspaces[1].retrieve(question, method=method)
    print(f"{args.workspace}: {len(asked)} questions × {args.rounds} rounds, {os.cpu_count()} cores")
    print(f"{'method':<10} {'busy':>4} {'blas threads':>13} {'p50 ms':>8} {'p95 ms':>8}")
    for busy in [int(b) for b in args.busy.split(",") if b]:
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
        for proc in spinners:
            proc.start()
        try:
            for method in methods:
                times = timed(workspaces, method, asked, args.rounds)
                for setting, label in ((1, "1"), (0, "own")):
                    values = times[setting]
                    print(
                        f"{method:<10} {busy:>4} {label:>13} {percentile(values, 0.5):>8.1f} "
                        f"{percentile(values, 0.95):>8.1f}"
                    )
        finally:
            for proc in spinners:
                proc.terminate()
                proc.join()
    for ws in workspaces.values():
        ws.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
