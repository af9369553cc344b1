"""``docgraph graph stats / export / reset``: a method's graph (KG4VD by default).

Which methods each subcommand serves is what the methods declare (``methods.capabilities``:
``GraphStats``, ``GraphExport``, ``GraphReset``), so a method from another package that
declares them is served the same way.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import InputError
from ..methods.base import get_method
from ..methods.capabilities import GraphExport, GraphReset, GraphStats, label_of, methods_with


def register(subparsers: argparse._SubParsersAction) -> None:
    graph = subparsers.add_parser("graph", help="inspect, export or reset a method's knowledge graph (KG4VD's default)")
    sub = graph.add_subparsers(dest="graph_command", metavar="SUBCOMMAND")

    stats = sub.add_parser(
        "stats",
        help="entities by type and modality, relations, merges, rounds, strategies, usage "
        "(--method hvm: chunks by strategy, facts, conflicts)",
    )
    stats.add_argument("--json", action="store_true", help="print the numbers as JSON")
    stats.add_argument("--method", "-m", default="kg4vd", help="whose graph (default kg4vd)")
    stats.set_defaults(handler=cmd_stats)

    export = sub.add_parser("export", help="write the graph to a file")
    export.add_argument("--format", "-f", default="graphml", help="graphml or json for kg4vd (default graphml)")
    export.add_argument("--out", "-o", required=True, help="output file")
    export.add_argument("--method", "-m", default="kg4vd", help="whose graph (default kg4vd)")
    export.set_defaults(handler=cmd_export)

    reset = sub.add_parser(
        "reset",
        help="delete the graph and vectors so the next build starts over (cached model replies are kept)",
    )
    reset.add_argument("--method", "-m", default="kg4vd", help="whose graph (default kg4vd)")
    reset.set_defaults(handler=cmd_reset)

    graph.set_defaults(handler=lambda args, ws: graph.print_help() or 2)


def capable(name: str, capability: type, what: str):
    """The method ``name`` when it has ``capability``, else an InputError naming those that do."""
    method = get_method(name)
    if not isinstance(method, capability):
        having = methods_with(capability)
        raise InputError(f"{name} has no {what}; methods with one: {', '.join(having) or 'none'}")
    return method


def cmd_stats(args: argparse.Namespace, ws) -> int:
    method = capable(args.method, GraphStats, "graph statistics")
    stats = method.graph_stats(ws.context())
    print(json.dumps(stats, indent=2) if args.json else method.format_stats(stats))
    return 0


def cmd_export(args: argparse.Namespace, ws) -> int:
    method = capable(args.method, GraphExport, "graph export")
    if args.format not in method.export_formats:
        raise InputError(f"{args.method} exports {', '.join(method.export_formats)}, not {args.format!r}")
    out = Path(args.out)
    if not out.parent.is_dir():
        raise InputError(f"folder {out.parent} does not exist; create it or choose another --out")
    counts = method.export_graph(ws.context(), args.format, out)
    print(f"wrote {out} ({', '.join(f'{v} {k}' for k, v in counts.items())})")
    return 0


def cmd_reset(args: argparse.Namespace, ws) -> int:
    method = capable(args.method, GraphReset, "graph to reset")
    removed = method.reset_graph(ws.context())
    label = label_of(args.method)
    unit = getattr(method, "reset_unit", "parts")  # what the method's graph is kept by: page graphs, documents
    print(f"removed the {label} graph ({removed} {unit}); `docgraph build --method {args.method}` rebuilds it")
    return 0
