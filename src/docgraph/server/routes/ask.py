"""``/api/ask``: a question answered by a method, with numbered citations to page regions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, Field

from ..state import ServerState, server_state
from .build import method_modes, require_method

router = APIRouter(prefix="/api", tags=["ask"])


class AskRequest(BaseModel):
    question: str = Field(..., min_length=1, max_length=4000)
    method: str = Field("kg4vd", description="a registered method name (see /api/methods)")
    mode: str | None = Field(None, description="KG4VD: auto, local, multi_hop or document")
    documents: list[str] | None = Field(
        None,
        description="ids of the documents to answer from (a method that restricts retrieval, "
        "see /api/methods' scoped); all documents when absent or empty",
    )


@router.post("/ask", summary="Answer a question; the Answer cites page regions (doc, page, components, bboxes)")
def ask(body: AskRequest, state: ServerState = Depends(server_state)) -> dict[str, Any]:
    """Returns the method's ``Answer`` as JSON: ``text``, numbered ``citations`` and the
    ``evidence`` (scored pages, entities, relations, chunks). 409 when the method has not
    been built yet, 400 for an unknown method, mode or document, or chosen documents with a
    method that ranks the whole workspace."""
    method = require_method(body.method)
    question = body.question.strip()
    if not question:
        raise HTTPException(status_code=400, detail="the question is empty")
    options: dict[str, Any] = {}
    if body.mode:
        modes = method_modes(method)
        if body.mode not in modes:
            raise HTTPException(
                status_code=400,
                detail=f"method {method} has no mode {body.mode!r}"
                + (f"; use one of {', '.join(modes)}" if modes else ""),
            )
        options["mode"] = body.mode
    answer = state.ws.ask(question, method=method, documents=body.documents or None, **options)
    return answer.model_dump(mode="json")
