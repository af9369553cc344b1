"""``docgraph graph stats / export / reset``: the KG4VD graph of a workspace (``stats --method hvm``:
the HVM index)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import InputError

FORMATS = ("graphml", "json")
STATS_METHODS = ("kg4vd", "hvm")


def register(subparsers: argparse._SubParsersAction) -> None:
    graph = subparsers.add_parser("graph", help="inspect, export or reset the KG4VD knowledge graph")
    sub = graph.add_subparsers(dest="graph_command", metavar="SUBCOMMAND")

    stats = sub.add_parser(
        "stats",
        help="entities by type and modality, relations, merges, rounds, "
        "strategies, usage (--method hvm: chunks by strategy, facts, conflicts)",
    )
    stats.add_argument("--json", action="store_true", help="print the numbers as JSON")
    stats.add_argument("--method", "-m", choices=STATS_METHODS, default="kg4vd", help="whose index (default kg4vd)")
    stats.set_defaults(handler=cmd_stats)

    export = sub.add_parser("export", help="write the graph to a file")
    export.add_argument("--format", "-f", choices=FORMATS, default="graphml")
    export.add_argument("--out", "-o", required=True, help="output file")
    export.set_defaults(handler=cmd_export)

    reset = sub.add_parser(
        "reset", help="delete the KG4VD graph and vectors so the next build starts over (cached model replies are kept)"
    )
    reset.set_defaults(handler=cmd_reset)

    graph.set_defaults(handler=lambda args, ws: graph.print_help() or 2)


def cmd_stats(args: argparse.Namespace, ws) -> int:
    if args.method == "hvm":
        from ..methods.hvm.stats import format_stats, graph_stats
    else:
        from ..methods.kg4vd.export import format_stats, graph_stats

    stats = graph_stats(ws.store)
    print(json.dumps(stats, indent=2) if args.json else format_stats(stats))
    return 0


def cmd_export(args: argparse.Namespace, ws) -> int:
    from ..methods.kg4vd.export import export_graphml, export_json

    out = Path(args.out)
    if not out.parent.is_dir():
        raise InputError(f"folder {out.parent} does not exist; create it or choose another --out")
    counts = (export_graphml if args.format == "graphml" else export_json)(ws.store, out)
    print(f"wrote {out} ({', '.join(f'{v} {k}' for k, v in counts.items())})")
    return 0


def cmd_reset(args: argparse.Namespace, ws) -> int:
    from ..methods.kg4vd.lifecycle import reset_graph

    removed = reset_graph(ws.context())
    print(f"removed the KG4VD graph ({removed} page graphs); `docgraph build --method kg4vd` rebuilds it")
    return 0
