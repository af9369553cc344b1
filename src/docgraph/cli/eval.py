"""``docgraph eval BENCHMARK PATH``: compare methods on a benchmark in one run (see ``eval.runner``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..progress import TerminalProgress

BENCHMARKS = ("mmlongbench", "hotpotqa", "musique", "hipporag", "qasper", "kg4vd_test", "financebench", "dlvqa")


def register(subparsers: argparse._SubParsersAction) -> None:
    ev = subparsers.add_parser(
        "eval",
        help="run methods over a benchmark and print a comparison table",
        description="Build each method's index once per corpus (cached under --workspace-root), answer or "
        "retrieve every question, and write a Markdown table, a JSON summary and per-question "
        "records to --out. Re-running the same command resumes where it stopped.",
    )
    ev.add_argument("benchmark", choices=BENCHMARKS, help="benchmark format")
    ev.add_argument("path", help="benchmark folder or file (e.g. ../shared/data/mmlongbench_doc)")
    ev.add_argument(
        "--methods", default="kg4vd,hvm,dense,bm25,pages", help="comma-separated method names (default: %(default)s)"
    )
    ev.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ev.add_argument("--out", default="results", help="output folder (default: %(default)s)")
    ev.add_argument(
        "--retrieval-only", action="store_true", help="retrieve only, with every model role off: recall@k and MRR"
    )
    ev.add_argument(
        "--setting",
        choices=("per-document", "packed", "library"),
        default="per-document",
        help="document sets: one workspace per document (default), the documents concatenated "
        "into one long PDF (packed, KG4VD's setting), or every document added to one "
        "workspace and every question asked over all of them (library)",
    )
    ev.add_argument("--packed", action="store_true", help="the same as --setting packed")
    ev.add_argument(
        "--documents",
        default=None,
        metavar="DIR",
        help="the folder holding the benchmark's documents, where they are not where its "
        "loader looks (its other PDFs join a library as further documents)",
    )
    ev.add_argument(
        "--workspace-root",
        default=None,
        help="where corpus workspaces are cached (default: <workspace>/eval-corpora when "
        "the workspace exists, else <out>/eval-corpora)",
    )
    ev.add_argument(
        "--judges",
        default="",
        help="comma-separated judge model names on the judge endpoint (default: models.judge.model)",
    )
    ev.add_argument(
        "--pairwise-against",
        default=None,
        metavar="METHOD",
        help="also judge every method's answers against METHOD's, in both orders",
    )
    ev.add_argument(
        "--report-only",
        action="store_true",
        help="build nothing and ask nothing: print the table from the records already in --out",
    )
    ev.add_argument("--json", action="store_true", help="print the summary as JSON instead of the table")
    ev.set_defaults(handler=cmd_eval, workspace_use="none")


def cmd_eval(args: argparse.Namespace, ws: None) -> int:
    """Runs without opening the workspace: its settings are read when it exists, and corpora
    are cached inside it only then (a run outside a workspace creates none)."""
    from ..config import load_settings
    from ..eval.runner import EvalOptions, run_eval

    workspace = Path(args.workspace)
    exists = workspace.is_dir()
    default_root = (workspace if exists else Path(args.out)) / "eval-corpora"
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    options = EvalOptions(
        benchmark=args.benchmark,
        path=Path(args.path),
        methods=methods,
        out=Path(args.out),
        workspace_root=Path(args.workspace_root) if args.workspace_root else default_root.resolve(),
        limit=args.limit,
        retrieval_only=args.retrieval_only,
        packed=args.packed,
        setting=args.setting,
        documents=Path(args.documents) if args.documents else None,
        judges=[j.strip() for j in args.judges.split(",") if j.strip()],
        pairwise_against=args.pairwise_against,
        settings=load_settings(workspace if exists else None),
        progress=TerminalProgress,
        report_only=args.report_only,
    )
    result = run_eval(options)
    if args.json:
        print(json.dumps(json.loads(result.json_path.read_text(encoding="utf-8")), indent=2))
    else:
        print(result.markdown)
        print(
            f"\n{result.questions_run} question run(s), {result.questions_skipped} already done; "
            f"table {result.table_path}, records {result.records_path}"
        )
    return 0
