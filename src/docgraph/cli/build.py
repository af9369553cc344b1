"""``docgraph build / status / usage``: building methods' indexes and what it cost."""

from __future__ import annotations

import argparse
import json

from ..errors import InputError
from ..methods.base import available_methods
from ..models.usage import is_embedding_stage
from ..progress import TerminalProgress
from ..types import Usage
from .options import add_ray_option


def register(subparsers: argparse._SubParsersAction) -> None:
    build = subparsers.add_parser("build", help="build a method's index (resumable, incremental)")
    build.add_argument(
        "--method",
        "-m",
        default="kg4vd",
        help=f"one of: {', '.join(available_methods())}; all (with --rebuild-vectors): every method that holds vectors",
    )
    build.add_argument(
        "--rebuild-vectors",
        action="store_true",
        help="drop and re-embed this method's vectors (after changing the embedding model or engine)",
    )
    add_ray_option(build, "the embedding batches")
    build.set_defaults(handler=cmd_build, workspace_use="create")

    status = subparsers.add_parser("status", help="build status per method")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_status)

    usage = subparsers.add_parser("usage", help="model usage per stage (calls, cache hits, tokens, images, time)")
    usage.add_argument("--json", action="store_true")
    usage.set_defaults(handler=cmd_usage)


def cmd_build(args: argparse.Namespace, ws) -> int:
    if args.method == "all" and not args.rebuild_vectors:
        raise InputError(
            "--method all goes with --rebuild-vectors (re-embed every method's vectors); "
            "build methods one at a time with --method NAME"
        )
    progress = TerminalProgress()
    try:
        if args.method == "all":
            reports = ws.rebuild_all_vectors(progress=progress)
        else:
            reports = [ws.build(args.method, progress=progress, rebuild_vectors=args.rebuild_vectors)]
    finally:
        progress.close()
    if not reports:
        print("no method holds vectors: nothing to re-embed")
    return max([_print_report(report) for report in reports], default=0)


def _print_report(report) -> int:
    stats = ", ".join(f"{k}={v}" for k, v in report.stats.items() if not isinstance(v, (dict, list)))
    print(
        f"{report.method}: built {report.pages_built} page(s), {report.pages_skipped} already done, "
        f"{report.seconds:.1f}s" + (f" ({stats})" if stats else "")
    )
    failures = report.stats.get("failures") or []
    if failures:
        print(
            f"{report.method}: {len(failures)} part(s) left unbuilt because model calls kept failing "
            f"(each named above; `docgraph usage` counts them); run the same command again to retry them"
        )
    return 0


def cmd_status(args: argparse.Namespace, ws) -> int:
    status = ws.status()
    if args.json:
        print(json.dumps(status, indent=2, default=str))
        return 0
    for name, info in status.items():
        built, total = info.get("built_pages", 0), info.get("total_pages", 0)
        print(f"{name:<10} {built:>6}/{total:<6} pages built")
    return 0


def format_usage(usage: dict[str, Usage]) -> str:
    """A table of usage per stage with a total row of the model stages (embedding stages,
    ``embed.*``, count texts embedded and cache hits; they are listed, not totalled).
    ``fail``: calls that gave up; ``retry``: requests resent after an endpoint fault;
    ``repair``: re-asks after an unusable reply; ``fallbk``: answers given offline because
    the stage's model call failed (``methods.answers.answer_fallback``)."""
    header = (
        f"{'stage':<28} {'calls':>6} {'cached':>6} {'in tok':>9} {'out tok':>8} {'images':>6} {'secs':>8} "
        f"{'fail':>5} {'retry':>5} {'repair':>6} {'fallbk':>6}"
    )

    def row(name: str, u: Usage) -> str:
        return (
            f"{name:<28} {u.calls:>6} {u.cache_hits:>6} {u.input_tokens:>9} {u.output_tokens:>8} "
            f"{u.images:>6} {u.seconds:>8.1f} {u.failures:>5} {u.retries:>5} {u.repairs:>6} {u.fallbacks:>6}"
        )

    lines = [header]
    total = Usage()
    for stage, u in sorted(usage.items()):
        if not is_embedding_stage(stage):
            total = total.add(u)
        lines.append(row(stage, u))
    lines.append(row("total (model calls)", total))
    return "\n".join(lines)


def cmd_usage(args: argparse.Namespace, ws) -> int:
    usage = ws.usage()
    if args.json:
        print(json.dumps({k: v.model_dump() for k, v in usage.items()}, indent=2))
    elif not usage:
        print("no model calls recorded in this workspace (offline strategies make none)")
    else:
        print(format_usage(usage))
    return 0
