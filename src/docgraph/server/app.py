"""The web app: ``create_app`` builds the FastAPI application over one workspace.

The page is at ``/`` (static HTML/JS/CSS under ``/static/``, no build step), the JSON API
under ``/api/``, documented by ``/openapi.json``. Security
defaults: an optional token on every route (see ``auth``), uploads limited in size and
type, files served only from the workspace, no CORS unless origins are given, writes from
other origins refused.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..api import Workspace
from ..errors import ConfigError, DocgraphError, InputError, ModelError, NotBuiltError, StoreError, WorkspaceBusyError
from .auth import OriginGuard, TokenAuth, login_router
from .jobs import JobManager
from .routes import ROUTERS
from .state import ServerState
from .uploads import MULTIPART_SLACK, BodyLimit

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parent / "static"
DEFAULT_MAX_UPLOAD_MB = 200

# DocgraphError subclasses → HTTP status (first match wins; order: most specific first)
ERROR_STATUS: tuple[tuple[type[DocgraphError], int], ...] = (
    (NotBuiltError, 409),
    (WorkspaceBusyError, 409),
    (InputError, 400),
    (ConfigError, 400),
    (ModelError, 502),
    (StoreError, 500),
    (DocgraphError, 400),
)


def error_status(exc: DocgraphError) -> int:
    for kind, status in ERROR_STATUS:
        if isinstance(exc, kind):
            return status
    return 500


async def docgraph_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """A DocgraphError's message (it says what to do) with a status that fits its kind."""
    assert isinstance(exc, DocgraphError)
    status = error_status(exc)
    if status >= 500:
        log.error("%s %s: %s", request.method, request.url.path, exc)
    return JSONResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=status)


def create_app(
    workspace: str | Path | Workspace,
    token: str | None = None,
    max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB,
    cors_origins: Iterable[str] = (),
    allowed_hosts: Iterable[str] | None = None,
) -> FastAPI:
    """The web app over ``workspace`` (a folder, opened here and closed on shutdown, or an open
    ``Workspace``, left open).

    ``token``: required on every route when set. ``max_upload_mb``: the most one upload
    request may carry. ``cors_origins``: origins allowed to call the API from their pages
    (none by default: no CORS middleware at all). ``allowed_hosts``: Host header values to
    accept (guards a loopback server against DNS rebinding); None accepts any.
    """
    owns = not isinstance(workspace, Workspace)
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    if max_upload_mb <= 0:
        raise ValueError("max_upload_mb must be positive")
    max_bytes = int(max_upload_mb * (1 << 20))
    state = ServerState(
        ws=ws, jobs=JobManager(ws.usage), token=token or None, max_upload_bytes=max_bytes, owns_workspace=owns
    )
    origins = tuple(cors_origins)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        stopped = state.jobs.shutdown(timeout=2.0)
        if state.owns_workspace and stopped:
            ws.close()

    # no /docs or /redoc: their pages load scripts from a CDN; the schema is at /openapi.json
    app = FastAPI(
        title="docgraph",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description="Questions over long, visually rich documents, answered with citations to page "
        "regions. With a token set, send `Authorization: Bearer <token>` (or a `token` "
        "query parameter, or sign in at /login for a cookie) on every request.",
    )
    app.state.docgraph = state
    app.add_exception_handler(DocgraphError, docgraph_error_handler)
    app.include_router(login_router())
    for router in ROUTERS:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers={"Cache-Control": "no-cache"})

    # middleware: the last added runs first
    app.add_middleware(BodyLimit, max_bytes=max_bytes + MULTIPART_SLACK)
    app.add_middleware(OriginGuard, allowed_origins=origins)
    if state.token:
        app.add_middleware(TokenAuth, token=state.token)
    if origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_credentials=True,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    if allowed_hosts is not None:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    return app
