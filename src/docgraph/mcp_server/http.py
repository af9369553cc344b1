"""Streamable HTTP for the MCP server, behind the same token rule as ``docgraph serve``.

With a token, every request must carry ``Authorization: Bearer <token>`` (MCP clients send
headers, not cookies); without one the server is open, which ``docgraph mcp`` allows on
loopback only with a warning elsewhere. On loopback, Host headers other than loopback names
are refused (a web page cannot rebind its name to the server).
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ..server.auth import token_matches

MCP_PATH = "/mcp"


class BearerTokenGate:
    """ASGI middleware: 401 for any HTTP request without the right bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            scheme, _, value = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not token_matches(self.token, value.strip()):
                body = json.dumps({"error": "a token is required: send 'Authorization: Bearer TOKEN'"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="docgraph"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer, *, token: str | None, host: str, port: int, loopback: bool) -> ASGIApp:
    """The streamable-HTTP ASGI app at ``/mcp``, gated by ``token`` when one is set."""
    security = None
    if loopback:
        names = ["127.0.0.1", "localhost", "[::1]", host]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{n}:{port}" for n in names] + names,
            allowed_origins=[f"http://{n}:{port}" for n in names],
        )
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=host)
    return BearerTokenGate(app, token) if token else app
