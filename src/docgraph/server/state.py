"""What every route needs: the open workspace, the job queue, the server's settings, and
lookups that turn "no such document/page" into 404s."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import HTTPException, Request

from ..api import Workspace
from ..errors import InputError
from ..types import Document, Page
from .jobs import JobManager


@dataclass
class ServerState:
    """Shared by the routes through ``request.app.state.docgraph``."""

    ws: Workspace
    jobs: JobManager
    token: str | None
    max_upload_bytes: int
    owns_workspace: bool = True


def server_state(request: Request) -> ServerState:
    """FastAPI dependency: the app's ``ServerState``."""
    return request.app.state.docgraph


def find_document(ws: Workspace, ref: str, with_pages: bool = False) -> Document:
    """The document with this id (or unique id prefix / file name / title); 404 otherwise."""
    try:
        return ws.document(ref, with_pages=with_pages)
    except InputError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


def find_page(ws: Workspace, ref: str, number: int) -> Page:
    """Page ``number`` of a document; 404 when the document or the page does not exist."""
    try:
        return ws.page(ref, number)
    except InputError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
