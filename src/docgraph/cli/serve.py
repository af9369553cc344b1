"""``docgraph serve``: the web app over the workspace (127.0.0.1 by default)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="web app: upload, build with live progress, ask, check answers on highlighted pages",
        description="Serve the web page at / and the JSON API under /api/ (OpenAPI schema at /openapi.json). "
        "With a token, every request needs it: 'Authorization: Bearer TOKEN', a 'token' query "
        "parameter (open http://HOST:PORT/?token=TOKEN once; it is kept in a cookie), or the "
        "sign-in form at /login.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.add_argument(
        "--token",
        default=os.environ.get("DOCGRAPH_TOKEN"),
        help="access token required on every route (default: env DOCGRAPH_TOKEN; none = open)",
    )
    serve.add_argument("--max-upload-mb", type=float, default=None, help="largest upload request in MB (default: 200)")
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow pages of this origin (e.g. http://localhost:3000) to call the API; repeatable. "
        "Default: no CORS at all",
    )
    serve.set_defaults(handler=cmd_serve, workspace_use="create")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace, ws) -> int:
    import uvicorn

    from ..server import create_app
    from ..server.app import DEFAULT_MAX_UPLOAD_MB
    from ..threads import pin_blas_threads

    loopback = is_loopback(args.host)
    if not loopback and not args.token:
        print(
            f"warning: serving {args.host} without a token: anyone who can reach this port can read and "
            "change the workspace; set --token or DOCGRAPH_TOKEN",
            file=sys.stderr,
        )
    # on loopback, accept only loopback Host headers (a page elsewhere cannot rebind its name to us)
    hosts = ["localhost", "127.0.0.1", "[::1]", args.host] if loopback else None
    app = create_app(
        ws,
        token=args.token,
        max_upload_mb=args.max_upload_mb or DEFAULT_MAX_UPLOAD_MB,
        cors_origins=args.cors_origin,
        allowed_hosts=hosts,
    )
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"docgraph: serving {ws.root} at http://{shown}:{args.port}/" + (" (token required)" if args.token else ""),
        file=sys.stderr,
    )
    pin_blas_threads(ws.settings.retrieval.blas_threads)  # requests run on worker threads: docgraph.threads
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
