"""Sweep the ``[retrieval]`` settings over built eval corpora: how the defaults were chosen.

    .venv/bin/python benchmarks/sweep.py --set mmlongbench --limit 100 --methods hybrid,kg4vd,hvm \
        --grid flat_weight=0.3,0.5,0.7 --grid restart=0.3,0.5 [--workspace-root results/eval-corpora]

Reads the corpus workspaces that ``benchmarks/retrieval.py`` (or ``docgraph eval``) built
under ``--workspace-root``; builds nothing (a corpus or method not built is skipped and
named). For every combination of the ``--grid`` values (any ``RetrievalSettings`` field;
``edges.<type>`` for an edge weight) it retrieves every question with every method and
prints recall@1/5/10 and MRR (passage recall@2/5 for multi-hop sets). ``METHOD:OPTION``
grid names are per-call options of one method (e.g. ``kg4vd:rerank_weight=0,0.5``). Development data
only: the shared sets are what the defaults may be tuned on.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

SETS = {
    "mmlongbench": ("mmlongbench", "mmlongbench_doc", False),
    "mmlongbench-packed": ("mmlongbench", "mmlongbench_doc", True),
    "hotpotqa": ("hotpotqa", "multihop", False),
    "musique": ("musique", "multihop", False),
}


def parse_grid(items: list[str]) -> list[dict[str, float | str | bool]]:
    axes = []
    for item in items:
        name, _, values = item.partition("=")
        parsed = []
        for raw in values.split(","):
            low = raw.strip().lower()
            if low in ("true", "false"):
                parsed.append(low == "true")
            else:
                try:
                    parsed.append(int(raw) if raw.strip().lstrip("-").isdigit() else float(raw))
                except ValueError:
                    parsed.append(raw.strip())
        axes.append([(name.strip(), v) for v in parsed])
    return [dict(combo) for combo in itertools.product(*axes)] if axes else [{}]


def apply(base, overrides: dict):
    data = base.model_dump()
    for name, value in overrides.items():
        node = data
        parts = name.split(".")
        for part in parts[:-1]:
            node = node[part]
        node[parts[-1]] = value
    return type(base).model_validate(data)


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo / "src"))
    from docgraph.api import Workspace
    from docgraph.eval.corpora import corpus_specs, eval_settings
    from docgraph.eval.loaders import load_benchmark
    from docgraph.eval.metrics import recall_at_k, reciprocal_rank
    from docgraph.eval.records import evidence_keys, ranked_pages
    from docgraph.eval.runner import EvalOptions
    from docgraph.store.sqlite import SQLiteStore

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(repo.parent / "shared" / "data"))
    parser.add_argument("--set", default="mmlongbench", choices=sorted(SETS))
    parser.add_argument("--workspace-root", default="results/eval-corpora")
    parser.add_argument("--methods", default="hybrid,kg4vd,hvm")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--max-doc-pages", type=int, default=None, help="leave out questions about documents longer than this"
    )
    parser.add_argument("--grid", action="append", default=[], help="FIELD=v1,v2 (repeatable)")
    args = parser.parse_args(argv)

    benchmark, folder, packed = SETS[args.set]
    bench = load_benchmark(benchmark, Path(args.data) / folder).without_long_documents(args.max_doc_pages)
    items = bench.items[: args.limit] if args.limit else list(bench.items)
    options = EvalOptions(
        benchmark=benchmark,
        path=Path(args.data) / folder,
        methods=[],
        out=Path("."),
        workspace_root=Path(args.workspace_root),
        packed=packed,
        retrieval_only=True,
    )
    specs = corpus_specs(bench, items, options)
    settings = eval_settings(None, True, Path(args.workspace_root))
    methods = [m for m in args.methods.split(",") if m]
    variants = parse_grid(args.grid)
    results: dict[tuple[int, str], list[tuple[list[str], list[str]]]] = {}
    skipped = []
    for spec in specs:
        if not (spec.folder / SQLiteStore.DB_NAME).is_file():
            skipped.append(spec.name)
            continue
        with Workspace(spec.folder, settings=settings.model_copy(deep=True)) as ws:
            doc_names = {
                d.id: spec.doc_names[Path(d.path).name] for d in ws.documents() if Path(d.path).name in spec.doc_names
            }
            base = ws.settings.retrieval
            for v, variant in enumerate(variants):
                overrides = {k: val for k, val in variant.items() if ":" not in k}
                ws.settings.retrieval = apply(base, overrides)
                for method in methods:
                    if not ws.status().get(method, {}).get("built_pages"):
                        skipped.append(f"{spec.name}:{method}")
                        continue
                    for item in spec.items:
                        gold = (
                            list(item.gold_passages)
                            if spec.level == "passage"
                            else [f"{d}|{p}" for d, p in item.gold_pages]
                        )
                        if not gold:
                            continue
                        options = {k.split(":", 1)[1]: val for k, val in variant.items() if k.startswith(f"{method}:")}
                        evidence = ws.retrieve(item.question, method=method, **options)
                        keys, _ = evidence_keys(ranked_pages(evidence), doc_names, spec.level, spec.page_passages)
                        results.setdefault((v, method), []).append((keys, gold))
    ks = (2, 5) if specs and specs[0].level == "passage" else (1, 5, 10)
    print("| variant | method | n | " + " | ".join(f"R@{k}" for k in ks) + " | MRR |")
    print("|---|---|---|" + "---|" * (len(ks) + 1))
    for (v, method), rows in sorted(results.items()):
        label = ", ".join(f"{k}={val}" for k, val in variants[v].items()) or "defaults"
        recalls = [100 * sum(recall_at_k(r, g, k) for r, g in rows) / len(rows) for k in ks]
        mrr = 100 * sum(reciprocal_rank(r, g) for r, g in rows) / len(rows)
        print(f"| {label} | {method} | {len(rows)} | " + " | ".join(f"{x:.1f}" for x in recalls) + f" | {mrr:.1f} |")
    if skipped:
        print(f"not built (skipped): {', '.join(sorted(set(skipped))[:20])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
