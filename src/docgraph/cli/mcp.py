"""``docgraph mcp``: the workspace as an MCP server for assistants and agents (``mcp_server``).

stdio by default (a desktop assistant starts the command and talks over its stdin/stdout);
``--http`` serves streamable HTTP at ``http://HOST:PORT/mcp`` with the same token rule as
``docgraph serve``. Read-only unless ``--allow-write``.
"""

from __future__ import annotations

import argparse
import os
import sys

from .serve import is_loopback


def register(subparsers: argparse._SubParsersAction) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="serve the workspace to assistants and agents over the Model Context Protocol",
        description="Tools: search, ask, list_documents, get_page, get_region (and add_documents, build with "
        "--allow-write); resources: page images and Set-of-Marks images. stdio by default; "
        "--http serves http://HOST:PORT/mcp, where a token (--token or DOCGRAPH_TOKEN) is required "
        "as 'Authorization: Bearer TOKEN' when set.",
    )
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --http: address to listen on (default: 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="with --http: port (default: 8765)")
    mcp.add_argument(
        "--token",
        default=os.environ.get("DOCGRAPH_TOKEN"),
        help="with --http: bearer token required on every request (default: env DOCGRAPH_TOKEN)",
    )
    mcp.add_argument(
        "--allow-write",
        action="store_true",
        help="add the add_documents and build tools (they take the workspace's writer lock)",
    )
    mcp.set_defaults(handler=cmd_mcp, workspace_use="read")


def cmd_mcp(args: argparse.Namespace, ws) -> int:
    try:
        from ..mcp_server.server import create_server
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("mcp", "mcp_types"):
            print(
                f"error: docgraph mcp needs the MCP SDK ({exc.name} is missing); reinstall docgraph: "
                "pip install -e . (or pip install 'mcp>=2.3,<3')",
                file=sys.stderr,
            )
            return 1
        raise
    server = create_server(ws, allow_write=args.allow_write)
    if not args.http:
        server.run("stdio")
        return 0
    import uvicorn

    from ..mcp_server.http import MCP_PATH, http_app

    loopback = is_loopback(args.host)
    if not loopback and not args.token:
        print(
            f"warning: serving MCP on {args.host} without a token: anyone who can reach this port can read "
            "the workspace" + (" and change it" if args.allow_write else "") + "; set --token or DOCGRAPH_TOKEN",
            file=sys.stderr,
        )
    app = http_app(server, token=args.token, host=args.host, port=args.port, loopback=loopback)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"docgraph: MCP over HTTP for {ws.root} at http://{shown}:{args.port}{MCP_PATH}"
        + (" (token required)" if args.token else "")
        + (", writes allowed" if args.allow_write else ""),
        file=sys.stderr,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
