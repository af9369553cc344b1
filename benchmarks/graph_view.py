"""KG4VD's query-time graph view: build time and memory, against another checkout in the same run.

    .venv/bin/python benchmarks/graph_view.py --workspace W [--compare-src ../old/src]

Loads the graph view of a built KG4VD workspace (``methods.kg4vd.graph_view``) the way the
first query after a build does — every entity and relation record read once — then its
entity BM25 index (the hybrid seeds build it on first use), and prints one row per code
version: seconds for each, the memory the view holds afterwards and the peak while
building it (``tracemalloc``: Python allocations, numpy included), and the process's max
RSS. ``--compare-src`` names the ``src`` folder of another checkout (e.g. a
``git worktree`` of an older commit); its row is measured in a subprocess that imports
that code, on the same workspace.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(workspace: Path) -> dict[str, float]:
    """Build the view and its BM25 index once; seconds and MB (imports the code on sys.path)."""
    from docgraph import Workspace
    from docgraph.methods.kg4vd.graph_view import load_view_from_store

    with Workspace(workspace) as ws:
        gc.collect()
        tracemalloc.start()
        start = time.perf_counter()
        view = load_view_from_store(ws.store)
        built = time.perf_counter()
        view.lexical("annual revenue")
        indexed = time.perf_counter()
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"nodes": len(view), "edges": int(view.endpoints.shape[0]), "build_s": built - start,
                "bm25_s": indexed - built, "held_mb": held / 1e6, "peak_mb": peak / 1e6,
                "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, required=True, help="a workspace with a KG4VD build")
    parser.add_argument("--compare-src", type=Path, help="src folder of another checkout, measured beside this one")
    parser.add_argument("--json-row", action="store_true", help=argparse.SUPPRESS)  # the subprocess's output
    args = parser.parse_args()
    if args.json_row:
        print(json.dumps(measure(args.workspace)))
        return
    rows = []
    if args.compare_src:
        env = {**os.environ, "PYTHONPATH": str(args.compare_src.resolve())}
        out = subprocess.run([sys.executable, __file__, "--workspace", str(args.workspace), "--json-row"],
                             env=env, check=True, capture_output=True, text=True).stdout
        rows.append((f"{args.compare_src} (compared)", json.loads(out.strip().splitlines()[-1])))
    sys.path.insert(0, str(ROOT / "src"))
    rows.append(("this checkout", measure(args.workspace)))
    print(f"graph of {rows[-1][1]['nodes']:,} entities, {rows[-1][1]['edges']:,} relations ({args.workspace})\n")
    print(f"{'code':40s} {'view s':>7s} {'bm25 s':>7s} {'held MB':>8s} {'peak MB':>8s} {'max RSS MB':>10s}")
    for name, row in rows:
        print(f"{name[:40]:40s} {row['build_s']:7.2f} {row['bm25_s']:7.2f} {row['held_mb']:8.1f} "
              f"{row['peak_mb']:8.1f} {row['max_rss_mb']:10.0f}")


if __name__ == "__main__":
    main()
