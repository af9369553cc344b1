"""The offline retrieval table of issue 7: every method, no model, on the shared sets.

    .venv/bin/python benchmarks/retrieval.py [--data ../shared/data] [--out results/retrieval]
        [--workspace-root results/eval-corpora] [--methods bm25,dense,pages,hipporag,kg4vd,hvm]
        [--sets mmlongbench,mmlongbench-packed,mmlongbench-library,financebench,financebench-library,hotpotqa,musique]
        [--limit N] [--answers] [--report-only]
        [--store postgres [--pg-url postgresql://…]] [--embedding-cache FILE]

For each set it runs ``docgraph eval <set> --retrieval-only`` through the same runner
(so corpora and indexes are cached under the workspace root, and an interrupted run
resumes), then writes ``<out>/retrieval.md``: recall@1/5/10 and MRR of gold pages on the
321 MMLongBench-Doc development questions (per-document corpora, the packed corpus, and the
library: every document in one workspace, with document recall@1/@5), the 38 FinanceBench
development questions (per filing and library: 19 filings in one workspace),
and passage recall@2/@5 on the 100 + 100 HotpotQA / MuSiQue questions. Methods that are
not installed in this build are skipped and named. With ``--answers`` the methods also
answer (offline: their extractive answers) and ``<out>/answers.md`` adds EM / token F1 /
containment and, on MMLongBench-Doc, the benchmark's own Acc / F1.

``--store postgres`` keeps every corpus workspace's rows in PostgreSQL + pgvector (one schema
per corpus) on ``--pg-url``, else on a server the ``pgserver`` wheel starts in
``<workspace-root>/pgdata``. With ``--embedding-cache`` pointing at a SQLite run's
``embeddings.sqlite`` both runs rank with the same vectors, and ``benchmarks/compare_runs.py``
compares their rankings question by question (issue 14: the same table from either store).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ABLATIONS = {  # name -> [retrieval] settings (issue 12, item 7); builds are shared with the default run
    "flat-only": {"flat_weight": 1.0},
    "graph-only": {"flat_weight": 0.0},
    "no-structure": {"structure": False},
    "dense-seeds": {"seeds": "dense"},
    "no-graph-seeds": {"graph_seed_share": 0.0},
    "no-second-hop": {"bridge_every": 0},
    "no-name-links": {"name_links": 0.0},
    "no-residual-hop": {"bridge_residual": 0.0},
    "no-element-intent": {"element_intent": 0.0},
    "no-measures": {"measures": False},
    "no-line-items": {"line_items": False},
    "no-front-matter": {"front_matter": False},
    "no-routing": {"route_floor": 1.0},
    "no-content-routing": {"route_by_content": False},
    "fixed-fusion-weight": {"confidence_k": 0},
    **{
        f"no-{edge}": {"edges": {edge: 0.0}}
        for edge in ("contains", "next_chunk", "next_page", "section", "caption", "similar", "refers", "entity")
    },
}
ABLATED_METHODS = ("kg4vd", "hvm")

SETS = {  # name -> (benchmark, data folder, corpus setting)
    "mmlongbench": ("mmlongbench", "mmlongbench_doc", "per-document"),
    "mmlongbench-packed": ("mmlongbench", "mmlongbench_doc", "packed"),
    "mmlongbench-library": ("mmlongbench", "mmlongbench_doc", "library"),
    "financebench": ("financebench", "financebench", "per-document"),
    "financebench-library": ("financebench", "financebench", "library"),
    "hotpotqa": ("hotpotqa", "multihop", "per-document"),
    "musique": ("musique", "multihop", "per-document"),
}
DEFAULT_SETS = ("mmlongbench", "mmlongbench-packed", "mmlongbench-library", "hotpotqa", "musique")


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo / "src"))

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(repo.parent / "shared" / "data"))
    parser.add_argument("--out", default="results/retrieval")
    parser.add_argument("--workspace-root", default="results/eval-corpora")
    parser.add_argument("--methods", default="bm25,dense,hybrid,pages,hipporag,kg4vd,hvm")
    parser.add_argument(
        "--ablations",
        default="",
        help=f"comma-separated ablations of kg4vd and hvm to add as rows ({', '.join(ABLATIONS)}, "
        "or 'all'); each runs with its [retrieval] settings into <out>/ablations/<name>",
    )
    parser.add_argument(
        "--sets",
        default=",".join(DEFAULT_SETS),
        help=f"comma-separated sets (default: %(default)s; all: {', '.join(SETS)})",
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--max-doc-pages",
        type=int,
        default=None,
        help="leave out questions about documents longer than this (a quicker development subset)",
    )
    parser.add_argument(
        "--answers",
        action="store_true",
        help="answer too (offline extractive unless a model is configured): adds EM/F1 and, on "
        "MMLongBench-Doc, the benchmark's own Acc/F1; writes <out>/answers.md",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="build and ask nothing: the tables from the records already in --out"
    )
    parser.add_argument(
        "--store",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="where the corpus workspaces keep their rows (postgres: one schema per corpus)",
    )
    parser.add_argument(
        "--pg-url",
        default=None,
        help="PostgreSQL server with pgvector for --store postgres (default: a pgserver "
        "server started in <workspace-root>/pgdata)",
    )
    parser.add_argument(
        "--embedding-cache",
        default=None,
        help="the shared embedding cache file (default <workspace-root>/embeddings.sqlite)",
    )
    args = parser.parse_args(argv)
    with store_overrides(args) as overrides:
        return run_sets(args, argv, overrides)


@contextmanager
def store_overrides(args: argparse.Namespace) -> Iterator[dict]:
    """The settings overrides every corpus workspace of this run gets: the store and the
    embedding cache. A pgserver PostgreSQL started here is stopped on exit."""
    overrides: dict = {}
    if args.embedding_cache:
        overrides["models"] = {"embedding": {"shared_cache": str(Path(args.embedding_cache).resolve())}}
    if args.store == "sqlite":
        yield overrides
        return
    from docgraph.testing.postgres import start_postgres

    root = Path(args.workspace_root)
    root.mkdir(parents=True, exist_ok=True)
    server, url = (None, args.pg_url) if args.pg_url else start_postgres(root / "pgdata")
    overrides["store"] = {"backend": "postgres", "url": url, "pg_schema": "eval"}
    try:
        yield overrides
    finally:
        if server is not None:
            server.cleanup()


def run_sets(args: argparse.Namespace, argv: list[str] | None, overrides: dict) -> int:
    from docgraph.config import load_settings
    from docgraph.eval.loaders import load_benchmark
    from docgraph.eval.runner import EvalOptions, run_eval
    from docgraph.methods.base import available_methods
    from docgraph.progress import TerminalProgress

    wanted = [m for m in args.methods.split(",") if m]
    methods = [m for m in wanted if m in available_methods()]
    missing = [m for m in wanted if m not in methods]
    out = Path(args.out)
    title = "Offline answers and retrieval" if args.answers else "Offline retrieval (no model)"
    sections = [
        f"# {title}, {time.strftime('%Y-%m-%d')}",
        "",
        f"Command: `.venv/bin/python benchmarks/retrieval.py {' '.join(argv or sys.argv[1:])}`",
        "",
    ]
    if missing:
        sections += [f"Not in this build (skipped): {', '.join(missing)}", ""]
    for name in [s for s in args.sets.split(",") if s]:
        benchmark, folder, setting = SETS[name]
        started = time.perf_counter()
        loaded = load_benchmark(benchmark, Path(args.data) / folder).without_long_documents(args.max_doc_pages)
        result = run_eval(
            EvalOptions(
                benchmark=benchmark,
                path=Path(args.data) / folder,
                methods=methods,
                out=out,
                loaded=loaded,
                workspace_root=Path(args.workspace_root),
                limit=args.limit,
                retrieval_only=not args.answers,
                setting=setting,
                settings=load_settings(None, overrides=overrides),
                progress=TerminalProgress,
                report_only=args.report_only,
            )
        )
        sections += [
            result.markdown,
            f"({time.perf_counter() - started:.0f} s this run; "
            f"{result.questions_run} questions run, {result.questions_skipped} resumed)",
            "",
        ]
        print(result.markdown, flush=True)
        ablated = [m for m in methods if m in ABLATED_METHODS]
        names = list(ABLATIONS) if args.ablations == "all" else [a for a in args.ablations.split(",") if a]
        if ablated and names:
            rows = ablation_rows(
                result.summary,
                ablated,
                names,
                functools.partial(
                    run_ablation,
                    EvalOptions(
                        benchmark=benchmark,
                        path=Path(args.data) / folder,
                        methods=ablated,
                        out=out,
                        loaded=loaded,
                        workspace_root=Path(args.workspace_root),
                        limit=args.limit,
                        retrieval_only=True,
                        setting=setting,
                        progress=TerminalProgress,
                        report_only=args.report_only,
                    ),
                    overrides,
                ),
            )
            sections += [f"#### {name}: ablations (`--ablations {','.join(names)}`)", "", *rows, ""]
            print("\n".join(rows), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    report = out / ("answers.md" if args.answers else "retrieval.md")
    report.write_text("\n".join(sections) + "\n", encoding="utf-8")
    print(f"wrote {report}")
    return 0


def run_ablation(options, overrides: dict, ablation: dict, sub: str):
    """``options`` run again with the ``ablation``'s [retrieval] settings into ``<out>/ablations/<sub>``."""
    from dataclasses import replace

    from docgraph.config import load_settings
    from docgraph.eval.runner import run_eval

    settings = load_settings(None, overrides={**overrides, "retrieval": ablation})
    return run_eval(replace(options, out=options.out / "ablations" / sub, settings=settings))


def ablation_rows(summary: dict, methods: list[str], names: list[str], run) -> list[str]:
    """A Markdown table: each ablated method's default row, then one row per ablation
    (``run(overrides, subfolder)`` evaluates it), with the same recall columns."""
    ks = summary.get("ks") or [1, 5, 10]
    head = ["ablation", "method", *[f"recall@{k}" for k in ks], "mrr"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def row(label: str, method: str, values: dict) -> str:
        cells = [f"{100 * values.get(f'recall@{k}', float('nan')):.1f}" for k in ks]
        return f"| {label} | {method} | " + " | ".join(cells) + f" | {100 * values.get('mrr', float('nan')):.1f} |"

    for method in methods:
        lines.append(row("(default)", method, summary["methods"].get(method, {})))
    for name in names:
        result = run(ABLATIONS[name], name)
        for method in methods:
            lines.append(row(name, method, result.summary["methods"].get(method, {})))
    return lines


if __name__ == "__main__":
    sys.exit(main())
