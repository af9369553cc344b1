"""Access control: the optional bearer token on every route, its login form, and a guard
against cross-site writes.

With a token set, every request — the page, static files, images, the API, the OpenAPI
schema — must carry it, in one of three ways:

- ``Authorization: Bearer <token>`` (scripts, the API);
- a ``token`` query parameter (a link you paste: ``/?token=…`` stores it in a cookie and
  redirects to the clean URL, so it does not stay in the address bar);
- the ``docgraph_token`` cookie, set by the login form at ``/login`` (HttpOnly, SameSite=Strict).

Only ``/login`` answers without the token. A request without a valid token gets 401: JSON
for the API, the login form for a browser asking for a page.
"""

from __future__ import annotations

import hmac
import html
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE_NAME = "docgraph_token"
LOGIN_PATH = "/login"
MAX_LOGIN_BODY = 4096
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def token_matches(expected: str, supplied: str | None) -> bool:
    """Constant-time comparison; False for a missing token."""
    if not supplied:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), supplied.encode("utf-8"))


def supplied_token(request: HTTPConnection) -> tuple[str | None, str | None]:
    """The token a request carries and where: ``("…", "header" | "query" | "cookie")``."""
    auth = request.headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip(), "header"
    if request.query_params.get("token"):
        return request.query_params["token"], "query"
    if request.cookies.get(COOKIE_NAME):
        return request.cookies[COOKIE_NAME], "cookie"
    return None, None


def login_page(message: str = "", status_code: int = 401) -> HTMLResponse:
    """The small login form (self-contained: static files need the token too)."""
    note = f'<p class="msg" data-test="login-message">{html.escape(message)}</p>' if message else ""
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>docgraph — sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body {{ font: 15px/1.4 system-ui, sans-serif; background: #f4f5f7; display: grid; place-items: center;
        min-height: 100vh; margin: 0; color: #1d2330; }}
 form {{ background: #fff; padding: 28px 32px; border-radius: 10px; box-shadow: 0 2px 12px #0002; width: 320px; }}
 h1 {{ font-size: 20px; margin: 0 0 6px; }} p {{ color: #555; margin: 0 0 16px; }}
 input {{ width: 100%; box-sizing: border-box; padding: 8px 10px; font: inherit; border: 1px solid #bbc;
         border-radius: 6px; margin-bottom: 14px; }}
 button {{ background: #2f5bd3; color: #fff; border: 0; border-radius: 6px; padding: 8px 16px; font: inherit; }}
 .msg {{ color: #b3261e; }}
</style></head>
<body><form id="login-form" method="post" action="{LOGIN_PATH}">
<h1>docgraph</h1><p>This server needs its access token (<code>--token</code> or <code>DOCGRAPH_TOKEN</code>).</p>
{note}<input id="login-token" data-test="login-token" name="token" type="password" autocomplete="current-password"
 placeholder="token" autofocus required>
<button id="login-submit" data-test="login-submit" type="submit">Sign in</button>
</form></body></html>"""
    return HTMLResponse(body, status_code=status_code)


def _with_cookie(response: Response, token: str, request: Request) -> Response:
    response.set_cookie(
        COOKIE_NAME, token, httponly=True, samesite="strict", path="/", secure=request.url.scheme == "https"
    )
    return response


class TokenAuth:
    """ASGI middleware: 401 for every request without the token, except ``/login``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("TokenAuth needs a non-empty token")
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] == LOGIN_PATH:
            await self.app(scope, receive, send)  # lifespan events, and the login form itself
            return
        token, source = supplied_token(HTTPConnection(scope))
        if scope["type"] == "websocket":
            if token_matches(self.token, token):
                await self.app(scope, receive, send)
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        request = Request(scope)
        if token_matches(self.token, token):
            if source == "query" and request.method == "GET" and scope["path"] == "/":
                # store the token, then show the page without it in the address bar
                response = _with_cookie(RedirectResponse("/", status_code=303), self.token, request)
                await response(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        await self._refuse(request)(scope, receive, send)

    @staticmethod
    def _refuse(request: Request) -> Response:
        wants_page = (
            not request.url.path.startswith("/api/")
            and request.method == "GET"
            and "text/html" in request.headers.get("accept", "")
        )
        if wants_page:
            response: Response = login_page()
        else:
            response = JSONResponse(
                {
                    "detail": "missing or wrong token: send 'Authorization: Bearer <token>', "
                    "a 'token' query parameter, or sign in at /login"
                },
                status_code=401,
            )
        response.headers["WWW-Authenticate"] = 'Bearer realm="docgraph"'
        return response


class OriginGuard:
    """ASGI middleware: refuse (403) writes sent by a page of another origin.

    Browsers send ``Origin`` with cross-site POSTs; a local server without a token would
    otherwise accept uploads and builds from any web page the user visits. Requests
    without ``Origin`` (scripts, curl) and origins allowed for CORS pass.
    """

    def __init__(self, app: ASGIApp, allowed_origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.allowed = {o.rstrip("/") for o in allowed_origins}

    def allows(self, origin: str, host: str) -> bool:
        """Same origin as the request's Host, or one of the CORS origins; never ``null``."""
        if origin == "null":
            return False
        return urlsplit(origin).netloc == host or origin.rstrip("/") in self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            request = Request(scope)
            origin = request.headers.get("origin")
            if origin and not self.allows(origin, request.headers.get("host", "")):
                response = JSONResponse({"detail": f"cross-origin write from {origin} refused"}, status_code=403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def login_router() -> APIRouter:
    """``GET /login`` (the form) and ``POST /login`` (check the token, set the cookie)."""
    router = APIRouter(tags=["auth"])

    @router.get(LOGIN_PATH, response_class=HTMLResponse, summary="Login form (the only route without the token)")
    def login_form(request: Request) -> Response:
        if not request.app.state.docgraph.token:
            return RedirectResponse("/", status_code=303)
        return login_page(status_code=200)

    @router.post(
        LOGIN_PATH,
        response_class=HTMLResponse,
        summary="Check the token (form field 'token'), set the session cookie and go to the page",
    )
    async def login_submit(request: Request) -> Response:
        expected = request.app.state.docgraph.token
        if not expected:
            return RedirectResponse("/", status_code=303)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_LOGIN_BODY:
                return login_page("request too large", status_code=413)
        supplied = parse_qs(body.decode("utf-8", "replace")).get("token", [""])[0]
        if not token_matches(expected, supplied):
            return login_page("That token is not right.")
        return _with_cookie(RedirectResponse("/", status_code=303), expected, request)

    return router
