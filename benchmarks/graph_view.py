"""KG4VD's query-time graph view: build time and memory, against another checkout in the same run.

    .venv/bin/python benchmarks/graph_view.py --workspace W [--compare-src ../old/src]
    .venv/bin/python benchmarks/graph_view.py --workspace W --replicate 16

Loads the graph view of a built KG4VD workspace (``methods.kg4vd.graph_view``) the way the
first query after a build does — every entity and relation record read once — then its
entity BM25 index (the hybrid seeds build it on first use), and prints one row per code
version: seconds for each, the memory the view holds afterwards and the peak while
building it (``tracemalloc``: Python allocations, numpy included), and the process's max
RSS. ``--compare-src`` names the ``src`` folder of another checkout (e.g. a
``git worktree`` of an older commit); its row is measured in a subprocess that imports
that code, on the same workspace.

``--replicate N`` instead times KG4VD's entity stage (seed signal, bounded subgraph and PPR
in multi-hop mode) on N disjoint copies of the workspace's graph — 16 copies of a 638-page
graph is about a 10,000-page corpus — for the questions' anchor pages: the local signals
retrieval uses (cosines and fusion over the entities a step reads) against the same stage
scoring every entity (one cosine scan and one fusion over the whole graph, as before).
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
        return {
            "nodes": len(view),
            "edges": int(view.endpoints.shape[0]),
            "build_s": built - start,
            "bm25_s": indexed - built,
            "held_mb": held / 1e6,
            "peak_mb": peak / 1e6,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }


QUESTIONS = [
    "What was the total revenue in 2020?",
    "Which countries are mentioned in the report?",
    "How many employees does the company have?",
    "What is the net income of the company?",
    "Who is the author of the picture book?",
    "What risks does the filing describe?",
    "Which students are eligible for the scholarship?",
    "What does figure 3 show?",
]


def entity_stage(workspace: Path, copies: int, rounds: int = 3) -> dict[str, list[float]]:
    """Milliseconds per question of the entity stage on ``copies`` copies of the graph, for
    the local signals ("local") and for whole-graph scoring ("whole graph")."""
    import numpy as np

    from docgraph import Workspace
    from docgraph.graph import ppr_on_subgraph
    from docgraph.methods.kg4vd.graph_view import build_view
    from docgraph.methods.kg4vd.retrieval import expansion_priority, load_layer, seed_entities, seed_signal
    from docgraph.methods.retrieval.evidence_layer import retrieval_settings
    from docgraph.methods.retrieval.hybrid import fuse_scores
    from docgraph.methods.retrieval.vector_index import VectorIndex, load_index

    def copy(record: dict, c: int, keys: tuple[str, ...]) -> dict:
        out = {**record, **{k: f"{record[k]}#{c}" for k in keys}}
        out["mentions"] = [{**m, "doc_id": f"{m['doc_id']}#{c}"} for m in record.get("mentions") or ()]
        return out

    with Workspace(workspace) as ws:
        ctx = ws.context()
        settings, mode = retrieval_settings(ctx), ctx.settings.kg4vd.mode("multi_hop")
        entities = [v for _, v in ws.store.iter_records("kg4vd.entity")]
        relations = [v for _, v in ws.store.iter_records("kg4vd.relation")]
        view = build_view(
            [copy(e, c, ("id",)) for c in range(copies) for e in entities],
            [copy(r, c, ("id", "source", "target")) for c in range(copies) for r in relations],
        )
        base = load_index(ws.store, "kg4vd.entity")
        keys = [f"{k}#{c}" for c in range(copies) for k in base.keys]
        index = VectorIndex(
            keys=keys, matrix=np.vstack([base.matrix] * copies), position={k: i for i, k in enumerate(keys)}
        )
        layer = load_layer(ctx, load_index(ws.store, "kg4vd.page"))
        view.lexical("warm")
        out: dict[str, list[float]] = {"whole graph": [], "local": []}
        for question in QUESTIONS * rounds:
            qvec = ctx.models.image_embedder.embed_queries([question])[0]
            flat = layer.flat(question, qvec, settings, None)
            anchors = [(f"{d}#0", p) for (d, p), _ in flat.top(ctx.settings.kg4vd.page_anchors)]
            for name in out:
                start = time.perf_counter()
                if name == "local":
                    signal_of = seed_signal(view, index, qvec, question, settings)
                    affinity = lambda nodes, qvec=qvec: view.affinity_of(index, qvec, nodes)  # noqa: E731
                else:
                    cosine = view.affinity(index, qvec)
                    signal_of = fuse_scores(view.lexical(question), cosine, settings).__getitem__
                    affinity = cosine.__getitem__
                seeds, weights = seed_entities(view, signal_of, anchors, anchored=True, k_direct=mode.k_entities)
                ppr_on_subgraph(
                    view.adjacency,
                    seeds,
                    weights,
                    affinity,
                    alpha=mode.alpha,
                    beta=mode.beta,
                    h_max=mode.h_max,
                    n_max=mode.n_max,
                    priority=expansion_priority(view, affinity),
                )
                out[name].append(1000 * (time.perf_counter() - start))
        print(
            f"{copies} copies: {len(view):,} entities, {len(view.relation_ids):,} relations, "
            f"{len(QUESTIONS) * rounds} questions\n"
        )
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, required=True, help="a workspace with a KG4VD build")
    parser.add_argument("--compare-src", type=Path, help="src folder of another checkout, measured beside this one")
    parser.add_argument("--replicate", type=int, default=0, help="time the entity stage on N copies of the graph")
    parser.add_argument("--json-row", action="store_true", help=argparse.SUPPRESS)  # the subprocess's output
    args = parser.parse_args()
    if args.replicate:
        sys.path.insert(0, str(ROOT / "src"))
        times = entity_stage(args.workspace, args.replicate)
        print(f"{'entity stage':20s} {'p50 ms':>7s} {'p95 ms':>7s}")
        for name, values in times.items():
            values = sorted(values)
            print(f"{name:20s} {values[len(values) // 2]:7.1f} {values[max(0, int(0.95 * len(values)) - 1)]:7.1f}")
        return
    if args.json_row:
        print(json.dumps(measure(args.workspace)))
        return
    rows = []
    if args.compare_src:
        env = {**os.environ, "PYTHONPATH": str(args.compare_src.resolve())}
        out = subprocess.run(
            [sys.executable, __file__, "--workspace", str(args.workspace), "--json-row"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows.append((f"{args.compare_src} (compared)", json.loads(out.strip().splitlines()[-1])))
    sys.path.insert(0, str(ROOT / "src"))
    rows.append(("this checkout", measure(args.workspace)))
    print(f"graph of {rows[-1][1]['nodes']:,} entities, {rows[-1][1]['edges']:,} relations ({args.workspace})\n")
    print(f"{'code':40s} {'view s':>7s} {'bm25 s':>7s} {'held MB':>8s} {'peak MB':>8s} {'max RSS MB':>10s}")
    for name, row in rows:
        print(
            f"{name[:40]:40s} {row['build_s']:7.2f} {row['bm25_s']:7.2f} {row['held_mb']:8.1f} "
            f"{row['peak_mb']:8.1f} {row['max_rss_mb']:10.0f}"
        )


if __name__ == "__main__":
    main()
