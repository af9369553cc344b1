"""``docgraph check [--repair]``: the integrity of a workspace (rows, vectors, files)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..store.integrity import check_workspace


def register(subparsers: argparse._SubParsersAction) -> None:
    check = subparsers.add_parser(
        "check", help="check a workspace: SQLite integrity, orphan rows, vector dimensions, files vs rows"
    )
    check.add_argument(
        "--repair",
        action="store_true",
        help="remove what can safely be removed (orphan rows, dangling files) and say what was done",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    # the database is read directly, so a workspace too damaged to open is still checked
    check.set_defaults(handler=cmd_check, workspace_use="none")


def cmd_check(args: argparse.Namespace, ws) -> int:
    root = Path(args.workspace).resolve()
    report = check_workspace(root, repair=args.repair)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0 if report.ok else 1
    for line in report.repaired:
        print(f"repaired  {line}")
    for finding in report.findings:
        label = finding.severity if not finding.repairable or args.repair else f"{finding.severity}*"
        print(f"{label:<9} {finding.kind}: {finding.message}")
    counts = ", ".join(f"{n} {t}" for t, n in report.stats.items())
    if report.ok:
        print(f"ok: {root}" + (f" ({counts})" if counts else ""))
    else:
        repairable = any(f.repairable for f in report.errors)
        print(
            f"{len(report.errors)} problem(s) in {root}"
            + ("; * = `docgraph check --repair` removes it" if repairable and not args.repair else "")
        )
    return 0 if report.ok else 1
