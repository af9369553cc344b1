"""``ingest``: files and folders → documents with rendered pages and grounded components.

Contract:
- Document id = first 12 hex digits of the sha256 of the file's bytes. Re-adding content
  already ``ready`` is a no-op (reported as skipped).
- Every file is checked (type, size, open/password, page count, render size of every page,
  Office/image conversion) before anything of it is written. A refused file is one
  ``InputError`` line naming the file (and page); the other files are still ingested.
- Pages are processed in parallel and stored as they finish, with the document in status
  ``ingesting``; at the end the title, heading levels and section paths are set on all
  pages, the printed page numbers recorded (``page_numbers``) and the document becomes
  ``ready``, in one transaction.
- Interrupted (Ctrl-C, crash): the document stays ``ingesting``; adding the same file again
  resumes and processes only the pages not stored yet.
- A page that fails while processing: a document this run created is removed entirely
  (rows in one transaction, then its files), so the workspace is as before; a document
  this run was resuming is left as it was, still resumable.
- A page whose fonts are damaged or missing is stored as it renders; one note per document
  and problem names the file and its pages (``fonts.font_notes``).
- The disk fills up: ``DiskFullError`` stops the whole add; the pages stored so far stay
  (the document ``ingesting``, resumable like an interrupted add once space is freed) and
  the images of pages without a row are removed.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from ..config import IngestSettings
from ..errors import DiskFullError, InputError
from ..progress import NullProgress, Progress
from ..store.base import Store
from ..store.diskspace import disk_full_error, is_disk_full
from ..types import Document
from .cover_text import display_line
from .fonts import FontProblem, font_notes
from .formats import Kind, check_pdf, classify, collect_inputs, sha256_file, to_pdf
from .metadata_store import store_guess
from .page_numbers import store_printed_numbers
from .pages import PageJob
from .parser import parser_target
from .parts import store_parts
from .render import remove_document_files, remove_partial_files, remove_unstored_page_files
from .runner import PageRunner, PagesRunner, RunnerFactory
from .sections import assign_sections, choose_title, meaningful_title

HEADINGS_NAMESPACE = "documents.heading_sizes"  # per-page heading sizes until the document is ready


@dataclass
class IngestReport:
    added: list[Document] = field(default_factory=list)
    skipped: list[Document] = field(default_factory=list)  # same content already ready
    failures: list[InputError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pages: int = 0
    ocr_pages: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass
class _Prepared:
    path: Path
    kind: Kind
    sha256: str
    pdf_path: Path
    page_count: int
    metadata_title: str | None
    todo: list[int]
    resumed: bool

    @property
    def doc_id(self) -> str:
        return self.sha256[:12]


def display_text(path: Path | str) -> str:
    """``path`` as text any database, terminal or JSON takes: the bytes of a file name that is
    not UTF-8 (``os.fsdecode`` keeps them as lone surrogates) written as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _prepare(
    store: Store, path: Path, settings: IngestSettings, password: str | None, workdir: Path
) -> _Prepared | Document:
    """Check one file and convert it to PDF if needed; the stored Document when already ready."""
    kind = classify(path, settings.max_file_mb)
    sha = sha256_file(path)
    existing = store.find_document_by_sha(sha)
    if existing is not None and existing.status == "ready":
        return existing
    pdf = to_pdf(path, kind, workdir / sha[:12], settings)
    if pdf == path and display_text(path) != str(path):
        # a name that is not UTF-8 (from an old archive or another system): PyMuPDF cannot take
        # it, so the pages are read through a link with a plain name
        pdf = workdir / sha[:12] / "input.pdf"
        pdf.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.abspath(path), pdf)
    checked = check_pdf(pdf, settings, password=password if kind == "pdf" else None, display_name=display_text(path))
    done = store.page_numbers(sha[:12]) if existing is not None else set()
    todo = [n for n in range(1, checked.page_count + 1) if n not in done]
    return _Prepared(path, kind, sha, pdf, checked.page_count, checked.metadata_title, todo, existing is not None)


def _finalize(store: Store, item: _Prepared) -> Document:
    """Title, heading levels, section paths, printed page numbers, parts and the shelf label
    (``metadata``) over all pages; status ``ready``; one transaction."""
    with store.transaction():
        pages = list(store.iter_pages(item.doc_id))
        sizes = {
            (int(key.rsplit("/", 1)[1]), comp_id): size
            for key, value in store.iter_records(HEADINGS_NAMESPACE, doc_id=item.doc_id)
            for comp_id, size in value.items()
        }
        title = choose_title(item.metadata_title, pages, sizes, display_text(item.path.stem))
        assign_sections(pages, sizes, title)
        for page in pages:
            store.put_page(page)
        store_parts(store, item.doc_id, pages, store_printed_numbers(store, item.doc_id, pages))
        doc = store.get_document(item.doc_id)
        assert doc is not None
        doc = doc.model_copy(update={"title": title, "status": "ready"})
        store.put_document(doc)
        store_guess(store, doc, item.metadata_title or "", display_line(item.pdf_path) or "", pages)
        store.delete_records(HEADINGS_NAMESPACE, doc_id=item.doc_id)
    return doc


def _ingest_one(
    store: Store,
    root: Path,
    settings: IngestSettings,
    item: _Prepared,
    password: str | None,
    runner: PagesRunner,
    progress: Progress,
    report: IngestReport,
) -> Document:
    if item.resumed:  # an interrupted add: a page being written then left a temporary file
        remove_partial_files(root, item.doc_id)
    else:
        stem = display_text(item.path.stem)
        title = item.metadata_title if meaningful_title(item.metadata_title, stem) else stem
        store.put_document(
            Document(
                id=item.doc_id,
                title=title or stem,
                path=display_text(item.path.resolve()),
                sha256=item.sha256,
                kind=item.kind,
                page_count=item.page_count,
                status="ingesting",
            )
        )
    jobs = [
        PageJob(
            item.doc_id,
            n,
            str(item.pdf_path),
            password if item.kind == "pdf" else None,
            str(root),
            settings,
            parser_target(settings.parser),
        )
        for n in item.todo
    ]
    results = runner.run(jobs)
    fonts: dict[int, list[FontProblem]] = {}
    try:
        try:
            for job, result in results:
                if isinstance(result, Exception):
                    if is_disk_full(result):
                        raise disk_full_error(root) from result
                    detail = (
                        str(result)
                        if isinstance(result, InputError)
                        else "a page worker stopped abruptly - out of memory or a crash - on this page or one "
                        "processed alongside it"
                        if isinstance(result, BrokenProcessPool)
                        else f"{type(result).__name__}: {result}"
                    )
                    raise InputError(
                        f"page could not be processed ({detail}); the file may be damaged - re-export "
                        "it, or report the page if it opens fine elsewhere",
                        path=display_text(item.path),
                        page=job.number,
                    )
                with store.transaction():
                    store.put_page(result.page)
                    store.put_record(
                        HEADINGS_NAMESPACE, f"{item.doc_id}/{job.number}", result.heading_sizes, doc_id=item.doc_id
                    )
                report.pages += 1
                report.ocr_pages += result.page.source == "ocr"
                if result.font_problems:
                    fonts[job.number] = result.font_problems
                progress.advance(1, doc=display_text(item.path.name)[:30], ocr=report.ocr_pages)
        finally:
            results.close()  # waits for the pages still being written; replaces a broken worker pool
    except InputError:
        if not item.resumed:
            store.delete_document(item.doc_id)
            remove_document_files(root, item.doc_id)
        raise
    except DiskFullError:  # the pages stored so far stay (the same add resumes); files of the others go
        remove_unstored_page_files(root, item.doc_id, store.page_numbers(item.doc_id))
        raise
    for line in font_notes(display_text(item.path.name), fonts):
        report.notes.append(line)
        progress.note(line)
    return _finalize(store, item)


def local_runner(settings: IngestSettings) -> RunnerFactory:
    """Pages on this machine's worker processes (``settings.workers``, default every core)."""
    return lambda note: PageRunner(settings.workers or os.cpu_count() or 1, note, recycle_after=settings.worker_pages)


def ingest(
    store: Store,
    root: Path,
    settings: IngestSettings,
    paths: Iterable[Path],
    *,
    password: str | None = None,
    progress: Progress = NullProgress(),
    runner: RunnerFactory | None = None,
) -> IngestReport:
    """Ingest files and folders into the workspace at ``root`` (see the module docstring).
    ``runner`` makes what runs the pages, given the note callback: local worker processes by
    default (``local_runner``); the caller may pass another with the same contract (the
    Workspace passes Ray tasks, ``scale.ray_pages``, when Ray is enabled)."""
    started = time.perf_counter()
    parser_target(settings.parser)  # an unknown backend is a ConfigError before any work
    report = IngestReport()

    def note(message: str) -> None:
        report.notes.append(message)
        progress.note(message)

    files, report.failures, skipped = collect_inputs(paths)
    for message in skipped:
        note(message)
    pages_runner = (runner or local_runner(settings))(note)
    with tempfile.TemporaryDirectory(prefix="docgraph-ingest-") as tmp:
        prepared: list[_Prepared] = []
        seen: set[str] = set()
        for path in files:
            try:
                item = _prepare(store, path, settings, password, Path(tmp))
            except InputError as exc:
                report.failures.append(exc)
                continue
            if isinstance(item, Document):
                report.skipped.append(item)
            elif item.sha256 in seen:
                note(f"{path}: same content as another input of this run; added once")
            else:
                seen.add(item.sha256)
                prepared.append(item)
        total = sum(len(item.todo) for item in prepared)
        pages_runner.plan(total)
        progress.start(total, "pages")
        try:
            for item in prepared:
                try:
                    report.added.append(
                        _ingest_one(store, root, settings, item, password, pages_runner, progress, report)
                    )
                except InputError as exc:
                    report.failures.append(exc)
        finally:
            pages_runner.close()
            progress.close()
    report.seconds = time.perf_counter() - started
    return report
