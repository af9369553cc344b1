"""``docgraph add / ls / meta / show / rm``: documents in a workspace."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ..documents.metadata import FIELDS, label_matches, shown_title
from ..progress import TerminalProgress
from ..types import Document
from .options import add_ray_option


def register(subparsers: argparse._SubParsersAction) -> None:
    add = subparsers.add_parser("add", help="add PDFs, page images, Office files or folders (resumable)")
    add.add_argument("paths", nargs="+", help="files or folders (folders are read recursively)")
    add.add_argument("--password", help="password for encrypted PDFs")
    add_ray_option(add, "the pages (render, layout, OCR)")
    add.set_defaults(handler=cmd_add, workspace_use="create")

    ls = subparsers.add_parser("ls", help="list documents, pages and components by kind")
    ls.add_argument("--json", action="store_true", help="print documents as JSON")
    ls.add_argument(
        "words",
        nargs="*",
        help="only the documents whose title, organisation, period, kind, trading symbol or file name "
        "hold every word (e.g. `docgraph ls acme 2021`)",
    )
    ls.set_defaults(handler=cmd_ls)

    meta = subparsers.add_parser(
        "meta",
        help="show or correct a document's title, organisation, period, kind",
        description="Each document carries what a person picks it by, guessed at ingest "
        "(cover page, PDF metadata, file name); questions over a library "
        "are routed by it. Without options, print it; with options, set "
        'those fields ("" clears one) — a field you set is never guessed '
        "over again.",
    )
    meta.add_argument("doc", help="document id (or prefix, file name, title)")
    meta.add_argument("--title")
    meta.add_argument("--org", dest="organisation", help="organisation: company, publisher, author's body")
    meta.add_argument("--period", help="fiscal year, quarter or date, e.g. FY2018, Q2 2023, 2016-06")
    meta.add_argument("--kind", help="10-K, 10-Q, annual report, sustainability report, slides, paper …")
    meta.add_argument("--ticker", help="a listed company's trading symbol (questions naming it in capitals route here)")
    meta.add_argument("--json", action="store_true", help="print the label as JSON")
    meta.set_defaults(handler=cmd_meta)

    show = subparsers.add_parser("show", help="show a page's components; write its Set-of-Marks image")
    show.add_argument("doc", help="document id (or prefix, file name, title)")
    show.add_argument("page", type=int, help="page number (1-based)")
    show.add_argument("--marks", metavar="PNG", help="write the Set-of-Marks image here")
    show.add_argument("--mask", default="", help="comma-separated component ids to grey out, e.g. P1,T2")
    show.add_argument("--json", action="store_true", help="print the page as JSON")
    show.set_defaults(handler=cmd_show)

    rm = subparsers.add_parser("rm", help="remove a document and everything derived from it")
    rm.add_argument("doc", help="document id (or prefix, file name, title)")
    rm.set_defaults(handler=cmd_rm)


def cmd_add(args: argparse.Namespace, ws) -> int:
    progress = TerminalProgress()
    try:
        report = ws.ingest(args.paths, password=args.password, progress=progress)
    finally:
        progress.close()
    labels = ws.metadata() if report.added or report.skipped else {}  # titles as `docgraph ls` shows them
    for doc in report.added:
        print(f"added    {doc.id}  {doc.page_count:>4} pages  {shown_title(doc, labels.get(doc.id))}")
    for doc in report.skipped:
        title = shown_title(doc, labels.get(doc.id))
        print(f"present  {doc.id}  {doc.page_count:>4} pages  {title}  (same content already in the workspace)")
    for failure in report.failures:
        print(f"failed   {failure}", file=sys.stderr)
    if report.failures:
        print(f"{len(report.failures)} input(s) failed; the others were added.", file=sys.stderr)
        return 1
    return 0


def _kind_counts(doc: Document) -> Counter:
    return Counter(c.kind.value for page in doc.pages for c in page.components)


def cmd_ls(args: argparse.Namespace, ws) -> int:
    docs = ws.documents(with_pages=True)
    labels = ws.metadata() if docs else {}
    every = len(docs)
    if args.words:
        docs = [
            d
            for d in docs
            if label_matches(args.words, shown_title(d, labels.get(d.id)), labels.get(d.id), Path(d.path).name)
        ]
    if args.json:
        print(json.dumps([_doc_summary(d, labels.get(d.id)) for d in docs], indent=2, ensure_ascii=False))
        return 0
    if not every:
        print(f"no documents in {ws.root}; add some with `docgraph add FILE...`")
        return 0
    if not docs:
        print(f"no document of the {every} matches {' '.join(args.words)!r}; `docgraph ls` lists them all")
        return 0
    print(f"{'id':<12}  {'pages':>5}  {'status':<9}  {'kind':<14} {'period':<9} {'organisation':<28} title")
    for doc in docs:
        label = labels.get(doc.id)
        status = doc.status if len(doc.pages) == doc.page_count else f"{len(doc.pages)}/{doc.page_count}"
        kind, period, org = (label.kind, label.period, label.organisation) if label else ("", "", "")
        print(
            f"{doc.id:<12}  {doc.page_count:>5}  {status:<9}  {kind[:14]:<14} {period[:9]:<9} {org[:28]:<28} "
            f"{shown_title(doc, label)}"
        )
    if args.words:
        print(f"{len(docs)} of {every} documents")
    return 0


def cmd_meta(args: argparse.Namespace, ws) -> int:
    values = {f: getattr(args, f) for f in FIELDS if getattr(args, f) is not None}
    doc_id = ws.resolve(args.doc)
    label = ws.set_metadata(doc_id, **values) if values else ws.metadata(doc_id)[doc_id]
    if args.json:
        print(label.model_dump_json(indent=2))
        return 0
    for field in FIELDS:
        source = label.sources.get(field, "")
        print(f"{field:<13} {getattr(label, field) or '—'}" + (f"  ({source})" if source else ""))
    parts = ws.parts(doc_id)
    if len(parts) > 1:  # a binder or a packed file: routing reads each piece as a document
        shown = ", ".join(f"{first}–{last}" if last > first else str(first) for first, last in parts)
        print(f"{'parts':<13} {len(parts)}: pages {shown}")
    return 0


def _doc_summary(doc: Document, label=None) -> dict:
    out = {
        "id": doc.id,
        "title": doc.title,
        "path": doc.path,
        "sha256": doc.sha256,
        "kind": doc.kind,
        "page_count": doc.page_count,
        "pages_stored": len(doc.pages),
        "status": doc.status,
        "added_at": doc.added_at,
        "components": dict(sorted(_kind_counts(doc).items())),
    }
    if label is not None:
        out["metadata"] = label.model_dump(exclude={"file_name"})
    return out


def cmd_show(args: argparse.Namespace, ws) -> int:
    page = ws.page(args.doc, args.page)
    if args.json:
        print(page.model_dump_json(indent=2))
    else:
        print(
            f"{page.doc_id} page {page.number}: {page.width:.0f}×{page.height:.0f} pt, "
            f"{len(page.components)} components, {page.source} text, image {page.image_path}"
        )
        for comp in sorted(page.components, key=lambda c: c.order):
            b = comp.bbox
            flag = " (furniture)" if comp.furniture else ""
            snippet = " ".join(comp.content.split())[:70]
            print(
                f"  {comp.id:<5} {comp.kind.name.lower():<9} [{b.x0:6.1f} {b.y0:6.1f} {b.x1:6.1f} {b.y1:6.1f}]"
                f"{flag}  {snippet}"
            )
            if comp.section_path:
                print(f"        section: {' > '.join(comp.section_path)}")
    if args.marks:
        mask = [m.strip() for m in args.mask.split(",") if m.strip()]
        out = ws.marks(args.doc, args.page, args.marks, mask=mask)
        print(f"wrote Set-of-Marks image {out}", file=sys.stderr)
    return 0


def cmd_rm(args: argparse.Namespace, ws) -> int:
    doc = ws.remove(args.doc)
    print(f"removed {doc.id} ({doc.title}) and everything derived from it")
    return 0
