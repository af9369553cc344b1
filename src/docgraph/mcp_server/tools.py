"""What each MCP tool does, over one open ``Workspace``, with no MCP types in sight.

Every function returns a pydantic model (the tool's structured result) or raises a
``DocgraphError`` whose message is the one the CLI prints; ``server`` turns that into an
MCP tool error. Writes (``add``, ``build``) take the workspace's writer lock inside the
``Workspace`` calls, like the CLI.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..api import Workspace
from ..documents.metadata import shown_title
from ..errors import InputError
from ..progress import Progress
from ..results import AskResult, SearchResult, ask_result, region_result
from .views import AddSummary, BuildSummary, DocumentEntry, DocumentList, PageView, RegionView

PAGE_IMAGE_URI = "docgraph://documents/{document}/pages/{page}/image"
MARKS_IMAGE_URI = "docgraph://documents/{document}/pages/{page}/marks"
KG4VD_MODES = ("auto", "local", "multi_hop", "document")


def built_methods(ws: Workspace) -> list[str]:
    return sorted(name for name, status in ws.status().items() if status.get("built_pages"))


def list_documents(ws: Workspace) -> DocumentList:
    labels = ws.metadata()
    entries = []
    for doc in ws.documents():
        label = labels[doc.id]  # ensured: guessed now where there was none
        entries.append(
            DocumentEntry(
                document_id=doc.id,
                title=shown_title(doc, label),
                organisation=label.organisation,
                period=label.period,
                kind=label.kind,
                ticker=label.ticker,
                pages=doc.page_count,
                file=Path(doc.path).name,
            )
        )
    return DocumentList(documents=entries, methods_built=built_methods(ws))


def search(
    ws: Workspace, query: str, method: str, top_pages: int, documents: Iterable[str] | None, regions: int
) -> SearchResult:
    if not query.strip():
        raise InputError("the query is empty")
    return ws.search(
        query, method=method, top_pages=top_pages, documents=list(documents or []) or None, regions=regions
    )


def ask(
    ws: Workspace,
    question: str,
    method: str,
    mode: str | None,
    top_pages: int | None,
    documents: Iterable[str] | None = None,
) -> AskResult:
    if not question.strip():
        raise InputError("the question is empty")
    options: dict[str, Any] = {}
    if mode and mode != "auto":
        if method != "kg4vd":
            raise InputError(f"mode applies to kg4vd only; {method} has no modes")
        options["mode"] = mode
    if top_pages is not None:
        options["top_pages"] = top_pages
    return ask_result(ws.ask(question.strip(), method=method, documents=list(documents or []) or None, **options))


def page_view(ws: Workspace, document: str, page: int) -> tuple[PageView, Path]:
    """The page's regions in reading order, and the path of its rendered image."""
    found = ws.page(document, page)
    doc = ws.document(found.doc_id, with_pages=False)
    image = (ws.root / found.image_path).resolve()
    uri = {"document": found.doc_id, "page": found.number}
    view = PageView(
        document_id=found.doc_id,
        document_title=shown_title(doc, ws.metadata(found.doc_id).get(found.doc_id)),
        page=found.number,
        width=found.width,
        height=found.height,
        image=str(image),
        image_uri=PAGE_IMAGE_URI.format(**uri),
        marks_uri=MARKS_IMAGE_URI.format(**uri),
        regions=[region_result(c) for c in sorted(found.components, key=lambda c: c.order)],
    )
    return view, image


def region_view(ws: Workspace, document: str, page: int, component: str) -> RegionView:
    found = ws.page(document, page)
    by_id = {c.id: c for c in found.components}
    if component not in by_id:
        raise InputError(
            f"page {page} of {found.doc_id} has no region {component!r}; it has "
            + ", ".join(c.id for c in sorted(found.components, key=lambda c: c.order))
        )
    region = by_id[component]
    crop = str((ws.root / region.crop_path).resolve()) if region.crop_path else None
    return RegionView(
        document_id=found.doc_id,
        page=found.number,
        region=region_result(region),
        section=list(region.section_path),
        crop_image=crop,
    )


def page_image(ws: Workspace, document: str, page: int) -> bytes:
    found = ws.page(document, page)
    return (ws.root / found.image_path).read_bytes()


def marks_image(ws: Workspace, document: str, page: int) -> bytes:
    """The Set-of-Marks PNG, drawn into a temporary file (reading never writes the workspace)."""
    with tempfile.TemporaryDirectory(prefix="docgraph-marks-") as folder:
        return ws.marks(document, page, Path(folder) / "marks.png").read_bytes()


def add(ws: Workspace, paths: list[str], progress: Progress) -> AddSummary:
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise InputError(
            "no such file or folder: " + ", ".join(missing) + " (paths are read on the machine the server runs on)"
        )
    report = ws.ingest(paths, progress=progress)
    return AddSummary(
        added=[d.id for d in report.added + report.skipped],
        pages=report.pages,
        failed=[str(f) for f in report.failures],
    )


def build(ws: Workspace, method: str, progress: Progress) -> BuildSummary:
    report = ws.build(method, progress=progress)
    stats = {k: v for k, v in report.stats.items() if isinstance(v, (int, float, str))}
    return BuildSummary(
        method=report.method, pages_built=report.pages_built, pages_skipped=report.pages_skipped, stats=stats
    )
