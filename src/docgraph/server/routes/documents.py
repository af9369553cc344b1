"""``/api/documents`` and ``/api/upload``: what the workspace holds, adding and removing documents."""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import APIRouter, Depends, File, HTTPException, Query, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from ...documents.metadata import DocumentMeta, shown_title
from ...documents.metadata_store import ensure_metadata
from ...errors import InputError
from ...types import Document
from ..jobs import LiveProgress
from ..state import ServerState, find_document, server_state
from ..uploads import allowed_types, save_upload
from .build import method_status

router = APIRouter(prefix="/api", tags=["documents"])


def document_summary(state: ServerState, doc: Document, label: DocumentMeta | None = None) -> dict[str, Any]:
    """A document row for the workspace view (no pages); ``metadata`` is its shelf label
    (organisation, period, kind; ``documents.metadata``), whose title is the row's title."""
    out = {
        "id": doc.id,
        "title": shown_title(doc, label),
        "file": doc.path.replace("\\", "/").rsplit("/", 1)[-1],
        "kind": doc.kind,
        "page_count": doc.page_count,
        "pages_stored": len(state.ws.store.page_numbers(doc.id)),
        "status": doc.status,
        "added_at": doc.added_at,
    }
    if label is not None:
        out["metadata"] = label.model_dump(exclude={"file_name"})
    return out


@router.get("/documents", summary="Documents with page counts, and build status per method")
def list_documents(state: ServerState = Depends(server_state)) -> dict[str, Any]:
    """``documents``: one row per document; ``methods``: each method's build status
    (``built_pages``/``total_pages`` and whatever else the method reports, e.g. per document)."""
    documents = state.ws.documents()
    labels = ensure_metadata(state.ws.store, documents)
    docs = [document_summary(state, d, labels.get(d.id)) for d in documents]
    return {"documents": docs, "methods": method_status(state)}


@router.get("/documents/{doc_id}", summary="One document with the size and components of each page")
def get_document(doc_id: str, state: ServerState = Depends(server_state)) -> dict[str, Any]:
    doc = find_document(state.ws, doc_id, with_pages=True)
    out = document_summary(state, doc, ensure_metadata(state.ws.store, [doc]).get(doc.id))
    out["pages"] = [
        {"number": p.number, "width": p.width, "height": p.height, "source": p.source, "components": len(p.components)}
        for p in doc.pages
    ]
    return out


class LabelChange(BaseModel):
    """Fields of a document's shelf label to set ("" clears one); the others stay."""

    title: str | None = None
    organisation: str | None = None
    period: str | None = None
    kind: str | None = None
    ticker: str | None = None


@router.patch("/documents/{doc_id}/metadata", summary="Correct a document's title, organisation, period or kind")
def set_document_metadata(
    doc_id: str, change: LabelChange, state: ServerState = Depends(server_state)
) -> dict[str, Any]:
    """The fields sent become the user's (never guessed over again); returns the document row."""
    doc = find_document(state.ws, doc_id)
    values = {k: v for k, v in change.model_dump().items() if v is not None}
    label = state.ws.set_metadata(doc.id, **values) if values else state.ws.metadata(doc.id)[doc.id]
    return document_summary(state, state.ws.document(doc.id, with_pages=False), label)


@router.delete("/documents/{doc_id}", summary="Remove a document and everything derived from it")
def delete_document(doc_id: str, state: ServerState = Depends(server_state)) -> dict[str, Any]:
    """409 while a build or an ingestion runs (they may be reading the document)."""
    doc = find_document(state.ws, doc_id)
    if state.jobs.busy():
        raise HTTPException(
            status_code=409, detail="a build or upload is running; remove the document when it has finished"
        )
    state.ws.remove(doc.id)
    return {"removed": doc.id, "title": doc.title}


def ingest_job(state: ServerState, paths: list) -> Any:
    """The job body: ingest the saved files and report what was added, skipped and why not."""

    def run(progress: LiveProgress) -> dict[str, Any]:
        report = state.ws.ingest(paths, progress=progress)
        failures = [str(f) for f in report.failures]
        result = {
            "added": [d.id for d in report.added],
            "skipped": [d.id for d in report.skipped],
            "failures": failures,
            "notes": [str(n) for n in report.notes],
            "pages": report.pages,
            "seconds": round(report.seconds, 2),
        }
        if failures and not (report.added or report.skipped):
            raise InputError("; ".join(failures))
        return result

    return run


@router.post(
    "/upload",
    status_code=202,
    summary=f"Upload files ({allowed_types()}); they are saved under uploads/ and ingested",
    responses={
        200: {"description": "ingested (with wait=true)"},
        413: {"description": "larger than the upload limit"},
        415: {"description": "a type that is not allowed, or content that does not match the extension"},
    },
)
async def upload(
    files: list[UploadFile] = File(..., description="one or more files"),
    wait: bool = Query(False, description="answer when ingestion has finished"),
    state: ServerState = Depends(server_state),
) -> Any:
    """Saves each file (size and type checked) and queues one ingestion job for them; the
    answer carries the job (poll ``/api/jobs/{id}``). With ``wait=true`` it answers 200 once
    the job has finished. Files already in the workspace (same content) are skipped."""
    if not files:
        raise HTTPException(status_code=400, detail="no file in the upload")
    saved, created, budget = [], [], state.max_upload_bytes
    try:
        for item in files:
            path, size, new = await save_upload(item, state.ws.root, budget)
            saved.append(path)
            if new:
                created.append(path)
            budget -= size
    except BaseException:
        for path in created:  # all or nothing: drop what this refused request saved
            path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                path.parent.rmdir()
        raise
    finally:
        for item in files:
            await item.close()
    names = ", ".join(p.name for p in saved)
    job, _ = state.jobs.submit(
        "ingest", f"ingest:{'|'.join(str(p) for p in saved)}", f"add {names}", ingest_job(state, saved)
    )
    if wait:
        await run_in_threadpool(job.finished.wait)
    body = {**state.jobs.snapshot(job), "files": [p.name for p in saved]}
    return JSONResponse(body, status_code=200 if wait else 202)
