"""The ``docgraph`` command. Thin: parses arguments, calls the public API, shows progress.

Each command group lives in its own module exposing ``register(subparsers)``; a
handler takes ``(args, ws)`` and returns an exit status. Only the commands that write to a
workspace (``set_defaults(workspace_use="create")``: add, build, serve) create it; the others
open an existing one and say so when there is none; ``eval`` (``"none"``) gets ``ws=None``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from ..errors import DocgraphError
from .options import settings_overrides

COMMAND_MODULES = ("documents", "build", "ask", "search", "graph", "eval", "dataset", "serve", "mcp", "check")
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docgraph",
        description="Answer questions over long, visually rich documents with page-grounded knowledge graphs.",
    )
    parser.add_argument(
        "--workspace",
        "-w",
        default=os.environ.get("DOCGRAPH_WORKSPACE", ".docgraph"),
        help="workspace folder (default: .docgraph in the current directory)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log details to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a command group not present in this build
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.register(subparsers)
    _accept_workspace_anywhere(subparsers)
    return parser


def _accept_workspace_anywhere(subparsers: argparse._SubParsersAction) -> None:
    """``--workspace DIR`` after the command too (``docgraph add f.pdf --workspace ws/``), as
    the README writes it; given there it wins over one before the command."""
    for sub in set(subparsers.choices.values()):
        if not any("--workspace" in action.option_strings for action in sub._actions):
            sub.add_argument(
                "--workspace",
                "-w",
                default=argparse.SUPPRESS,
                help="workspace folder (also accepted before the command)",
            )
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_workspace_anywhere(action)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    from ..api import Workspace

    ws = None
    use = getattr(args, "workspace_use", "read")  # commands that write set "create"; eval "none"
    try:
        if use != "none":
            ws = Workspace(args.workspace, create=use == "create", overrides=settings_overrides(args) or None)
        return int(args.handler(args, ws) or EXIT_OK)
    except DocgraphError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `docgraph search … | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("interrupted; finished work is kept — run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        if ws is not None:
            ws.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
