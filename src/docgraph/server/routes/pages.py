"""``/api/documents/{doc}/pages/{n}…``: a page's components, its image, its Set-of-Marks
image, a highlighted image for cited regions, component crops, and the entities grounded on it.

Every image comes from the workspace folder through ``workspace_file`` (no path leaves it).
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import FileResponse, Response

from ...errors import InputError
from ...highlight import highlight_page
from ...types import BBox, Citation, Page
from ..files import workspace_file
from ..graph_data import entities_on_page, graph_method
from ..state import ServerState, find_page, server_state

router = APIRouter(prefix="/api/documents/{doc_id}/pages/{number}", tags=["pages"])
IMAGE_CACHE = "private, max-age=3600"
MARKS_DIR = "marks"
_marks_lock = threading.Lock()
MAX_BOXES = 64


def page_json(page: Page) -> dict[str, Any]:
    """The page with its components (modality added) and the URLs of its images."""
    data = page.model_dump(mode="json", exclude={"components"})
    base = f"/api/documents/{page.doc_id}/pages/{page.number}"
    data["scale"] = page.dpi / 72.0
    data["image_url"] = f"{base}/image"
    data["marks_url"] = f"{base}/marks"
    data["components"] = [
        {
            **c.model_dump(mode="json"),
            "modality": c.modality,
            "kind_name": c.kind.name.lower(),
            "crop_url": f"{base}/components/{c.id}/crop" if c.crop_path else None,
        }
        for c in sorted(page.components, key=lambda c: c.order)
    ]
    return data


def image_response(path: Path) -> FileResponse:
    media = "image/jpeg" if path.suffix.lower() in (".jpg", ".jpeg") else "image/png"
    return FileResponse(path, media_type=media, headers={"Cache-Control": IMAGE_CACHE})


def split_ids(raw: str | None) -> list[str]:
    """``"P1, T2"`` → ``["P1", "T2"]`` (order kept, duplicates dropped)."""
    return list(dict.fromkeys(p.strip() for p in (raw or "").split(",") if p.strip()))


def parse_bbox(raw: str) -> BBox:
    """``"x0,y0,x1,y1"`` in PDF points → BBox; 400 when malformed."""
    try:
        x0, y0, x1, y1 = (float(v) for v in raw.split(","))
    except ValueError:
        raise HTTPException(status_code=400, detail=f"bbox {raw!r} must be four numbers x0,y0,x1,y1") from None
    if not (x1 >= x0 and y1 >= y0):
        raise HTTPException(status_code=400, detail=f"bbox {raw!r} has x1 < x0 or y1 < y0")
    return BBox(x0=x0, y0=y0, x1=x1, y1=y1)


@router.get("", summary="A page: size, dpi, image URLs and its components (id, kind, bbox in points, text)")
def get_page(doc_id: str, number: int, state: ServerState = Depends(server_state)) -> dict[str, Any]:
    return page_json(find_page(state.ws, doc_id, number))


@router.get(
    "/image",
    response_class=FileResponse,
    summary="The rendered page image (JPEG, or PNG with ingest.image_format = png, at the page's dpi)",
)
def page_image(doc_id: str, number: int, state: ServerState = Depends(server_state)) -> FileResponse:
    page = find_page(state.ws, doc_id, number)
    return image_response(workspace_file(state.ws.root, page.image_path))


@router.get(
    "/marks",
    response_class=FileResponse,
    summary="The Set-of-Marks image: components boxed and tagged with their ids, 'mask' ones greyed",
)
def page_marks(
    doc_id: str,
    number: int,
    mask: str | None = Query(None, description="comma-separated component ids to grey out"),
    state: ServerState = Depends(server_state),
) -> FileResponse:
    page = find_page(state.ws, doc_id, number)
    masked = sorted(split_ids(mask))
    tag = hashlib.sha256(",".join(masked).encode()).hexdigest()[:10] if masked else "all"
    relative = f"{MARKS_DIR}/{page.doc_id}/p{page.number:04d}-{tag}.png"
    with _marks_lock:
        if not (state.ws.root / relative).is_file():
            try:
                state.ws.marks(page.doc_id, page.number, state.ws.root / relative, mask=masked)
            except InputError as exc:
                raise HTTPException(status_code=400, detail=str(exc)) from None
    return image_response(workspace_file(state.ws.root, relative))


@router.get(
    "/highlight",
    summary="The page image with cited regions outlined and numbered",
    responses={200: {"content": {"image/png": {}}}},
)
def page_highlight(
    doc_id: str,
    number: int,
    components: str | None = Query(None, description="comma-separated component ids"),
    bbox: list[str] = Query([], description="extra boxes 'x0,y0,x1,y1' in PDF points (repeatable)"),
    n: int = Query(1, ge=0, description="the citation number written beside the boxes"),
    state: ServerState = Depends(server_state),
) -> Response:
    """A citation's view: give its ``components`` and/or its ``bbox`` list."""
    page = find_page(state.ws, doc_id, number)
    ids = split_ids(components)
    unknown = [c for c in ids if page.component(c) is None]
    if unknown:
        raise HTTPException(
            status_code=400, detail=f"page {page.number} of {page.doc_id} has no component(s) {', '.join(unknown)}"
        )
    if len(bbox) > MAX_BOXES:
        raise HTTPException(status_code=400, detail=f"at most {MAX_BOXES} boxes")
    boxes = [page.component(c).bbox for c in ids] + [parse_bbox(b) for b in bbox]  # type: ignore[union-attr]  # unknown ids were refused above
    if not boxes:
        raise HTTPException(status_code=400, detail="give component ids or boxes to highlight")
    boxes = [b.clip(page.width, page.height) for b in boxes]
    workspace_file(state.ws.root, page.image_path)  # the source image must be inside the workspace
    citation = Citation(number=n, doc_id=page.doc_id, page=page.number, component_ids=ids, bboxes=boxes)
    with tempfile.TemporaryDirectory(prefix="docgraph-hl-") as tmp:
        out = highlight_page(state.ws.store, state.ws.root, [citation], Path(tmp) / "page.png")
        data = out.read_bytes()
    return Response(data, media_type="image/png", headers={"Cache-Control": "no-store"})


@router.get(
    "/components/{component_id}/crop",
    response_class=FileResponse,
    summary="The crop image of a visual component (table, image, equation)",
)
def component_crop(
    doc_id: str, number: int, component_id: str, state: ServerState = Depends(server_state)
) -> FileResponse:
    page = find_page(state.ws, doc_id, number)
    component = page.component(component_id)
    if component is None or not component.crop_path:
        raise HTTPException(
            status_code=404, detail=f"page {page.number} of {page.doc_id} has no crop for {component_id!r}"
        )
    return image_response(workspace_file(state.ws.root, component.crop_path))


@router.get("/entities", summary="A method's entities grounded on this page, with the components that mention them")
def page_entities(
    doc_id: str,
    number: int,
    method: str | None = Query(None, description="a method with an entity graph (default: the first one)"),
    state: ServerState = Depends(server_state),
) -> dict[str, Any]:
    """Empty ``entities`` (with a ``note``) when the method's graph has not been built."""
    page = find_page(state.ws, doc_id, number)
    name = graph_method(method)
    try:
        return {"entities": entities_on_page(state.ws.context(), name, page.doc_id, page.number)}
    except HTTPException as exc:
        if exc.status_code != 404:
            raise
        return {"entities": [], "note": exc.detail}
