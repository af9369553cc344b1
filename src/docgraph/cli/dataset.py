"""``docgraph dataset dlvqa DOCS… --out set.jsonl``: build a document-level QA set (KG4VD App. A.3)."""

from __future__ import annotations

import argparse
import json

from ..progress import TerminalProgress


def register(subparsers: argparse._SubParsersAction) -> None:
    dataset = subparsers.add_parser("dataset", help="build evaluation sets from documents")
    kinds = dataset.add_subparsers(dest="dataset_kind", metavar="KIND")
    dl = kinds.add_parser(
        "dlvqa",
        help="document-level questions with reference summaries and gold facts (KG4VD App. A.3)",
        description="With the build model: page summaries, a document summary, grounded textual and visual "
        "atomic facts per page, HDBSCAN clusters of the fact embeddings across pages, and one "
        "question per cluster whose facts lie on at least [dlvqa] min_page_span pages. Writes the "
        "set in the format `docgraph eval dlvqa` reads. Cached: rerunning costs nothing for finished "
        "calls.",
    )
    dl.add_argument("documents", nargs="+", metavar="DOC", help="files or folders (added to the workspace)")
    dl.add_argument("--out", required=True, help="the JSONL file to write (e.g. set.jsonl)")
    dl.add_argument(
        "--review",
        default=None,
        metavar="DIR",
        help="write summaries, facts and clusters to DIR as editable JSONL; a rerun uses your edits",
    )
    dl.add_argument("--subset", default=None, help="the questions' subset name (default: the document title)")
    dl.add_argument(
        "--min-page-span",
        type=int,
        default=None,
        metavar="N",
        help="drop questions whose facts lie on fewer than N pages (default: [dlvqa] min_page_span)",
    )
    dl.add_argument("--json", action="store_true", help="print the report as JSON")
    dl.set_defaults(handler=cmd_dlvqa, workspace_use="create")
    dataset.set_defaults(handler=lambda args, ws: dataset.print_help() or 2, workspace_use="none")


def cmd_dlvqa(args: argparse.Namespace, ws) -> int:
    from ..eval.dlvqa_builder import build_dlvqa
    from .build import format_usage

    settings = ws.settings.dlvqa
    if args.min_page_span is not None:
        settings = settings.model_copy(update={"min_page_span": args.min_page_span})
    progress = TerminalProgress()
    try:
        report = build_dlvqa(
            ws, args.documents, args.out, review=args.review, subset=args.subset, settings=settings, progress=progress
        )
    finally:
        progress.close()
    if args.json:
        print(
            json.dumps(
                {
                    "out": str(report.out),
                    "questions": len(report.rows),
                    "seconds": report.seconds,
                    "documents": [vars(d) for d in report.documents],
                    "usage": {k: v.model_dump() for k, v in report.usage.items()},
                },
                indent=2,
            )
        )
        return 0
    for d in report.documents:
        dropped = ", ".join(f"c{c}: {why}" for c, why in sorted(d.dropped.items()))
        print(
            f"{d.doc_id}: {d.pages} pages, {sum(d.facts.values())} facts ({d.facts.get('text', 0)} text, "
            f"{d.facts.get('visual', 0)} visual"
            + (f", {d.ungrounded} ungrounded visual dropped" if d.ungrounded else "")
            + f"), {d.clusters} clusters + {d.noise} noise facts; "
            f"{len(d.kept)} question(s) kept, {len(d.dropped)} dropped"
            + (f" ({dropped})" if dropped else "")
            + (f"; from review: {', '.join(d.edited)}" if d.edited else "")
        )
    print(format_usage(report.usage) if report.usage else "no model calls or embeddings")
    print(
        f"wrote {len(report.rows)} question(s) to {report.out} in {report.seconds:.1f}s"
        + (f"; review files in {args.review}" if args.review else "")
    )
    return 0
