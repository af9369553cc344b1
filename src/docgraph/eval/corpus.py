"""Benchmarks as workspaces: which files a corpus is made of, and how retrieved pages map
back to the benchmark's gold evidence.

Three kinds of corpus, each one cached workspace under ``<workspace root>/<benchmark>/``:

- **per document** (``doc-<name>-<hash>``): one workspace per benchmark document; gold
  and retrieved evidence are ``(benchmark doc id, page)``.
- **packed** (``packed-<n>docs-<hash>``): the documents concatenated, in the loader's
  ``PackedLayout`` order, into one PDF (``packed.pdf``, written with PyMuPDF) ingested
  as one long document — KG4VD's 2,000-page setting; evidence is ``("packed", page)``.
- **library** (``library-<n>docs-<hash>``): every benchmark document added as its own
  document to one workspace, every question asked over all of them — how a user keeps a
  shelf of filings or reports; evidence is ``(benchmark doc id, page)`` as per document,
  so a page of the wrong document is a miss.
- **passages** (``passages-<hash>``): a text-passage benchmark (HotpotQA, MuSiQue, the
  HippoRAG sample) rendered to a PDF with **one passage per page** (its title as a
  heading, its text below; the font shrinks until it fits), so every method runs
  through the same ingestion as real documents. ``pages.json`` beside the PDF maps page
  numbers to passage ids, so a retrieved page *is* a retrieved passage and passage
  recall is computed from the pages a method ranks.

The hash in a folder name covers what defines the corpus (file names and sizes, or
passage ids and texts), so a changed corpus never reuses a stale workspace.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import InputError
from .loaders.base import Passage, QAItem
from .loaders.mmlongbench import PACKED_DOC_ID, PackedLayout

PAGE_WIDTH, PAGE_HEIGHT, MARGIN = 360.0, 504.0, 24.0
TITLE_SIZE = 13.0
BODY_SIZES = (10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0)
PAGE_MAP = "pages.json"


@dataclass
class CorpusSpec:
    """One corpus to build and query: its workspace folder, the files it is made of, its
    questions, and how a workspace document maps to benchmark evidence."""

    name: str
    setting: Literal["per-document", "packed", "library", "passages"]
    folder: Path
    files: list[Path]
    items: list[QAItem]
    level: Literal["page", "passage"] = "page"
    doc_names: dict[str, str] = field(default_factory=dict)  # file name → benchmark doc id
    page_passages: dict[int, str] = field(default_factory=dict)  # passage corpora: page → passage id


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:10]


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:limit].strip("_") or "doc"


def per_document_specs(
    root: Path, benchmark: str, groups: dict[str, list[QAItem]], documents: dict[str, Path]
) -> list[CorpusSpec]:
    """One corpus per document (``groups``: doc id → its questions, from ``by_document``)."""
    specs = []
    for doc_id, items in groups.items():
        path = documents.get(doc_id)
        if path is None:
            raise InputError(f"the benchmark has no file for document {doc_id!r}; check the documents folder")
        folder = root / benchmark / f"doc-{_slug(Path(doc_id).stem)}-{_digest(doc_id, path.stat().st_size)}"
        specs.append(
            CorpusSpec(
                name=doc_id,
                setting="per-document",
                folder=folder,
                files=[path],
                items=items,
                doc_names={path.name: doc_id},
            )
        )
    return specs


def library_spec(root: Path, benchmark: str, items: list[QAItem], documents: dict[str, Path]) -> CorpusSpec:
    """One workspace holding every document of the benchmark (not only those the questions
    name, so a limited run asks over the same shelf), each its own document."""
    order = sorted(documents)
    key = _digest(*[f"{d}:{documents[d].stat().st_size}" for d in order])
    folder = root / benchmark / f"library-{len(order)}docs-{key}"
    return CorpusSpec(
        name="library",
        setting="library",
        folder=folder,
        files=[documents[d] for d in order],
        items=items,
        doc_names={documents[d].name: d for d in order},
    )


def write_packed_pdf(layout: PackedLayout, documents: dict[str, Path], out: Path) -> Path:
    """Concatenate the layout's documents, in order, into ``out`` (kept when already complete)."""
    import pymupdf

    if out.exists():
        with pymupdf.open(out) as done:
            if done.page_count == layout.total_pages:
                return out
    out.parent.mkdir(parents=True, exist_ok=True)
    packed = pymupdf.open()
    for doc_id in layout.order:
        with pymupdf.open(documents[doc_id]) as part:
            if part.page_count != layout.counts[doc_id]:
                raise InputError(
                    f"{doc_id} has {part.page_count} pages, but the benchmark lists {layout.counts[doc_id]}",
                    path=str(documents[doc_id]),
                )
            packed.insert_pdf(part)
    packed.set_metadata({"title": f"packed corpus of {len(layout.order)} documents"})
    tmp = out.with_suffix(".tmp.pdf")
    packed.save(tmp, garbage=1, deflate=True)
    packed.close()
    tmp.replace(out)
    return out


def packed_spec(
    root: Path, benchmark: str, layout: PackedLayout, items: list[QAItem], documents: dict[str, Path]
) -> CorpusSpec:
    """The packed corpus of ``layout`` (items from ``pack_documents``, evidence on "packed")."""
    key = _digest(*[f"{d}:{layout.counts[d]}" for d in layout.order])
    folder = root / benchmark / f"packed-{len(layout.order)}docs-{key}"
    pdf = write_packed_pdf(layout, documents, folder / "corpus" / "packed.pdf")
    return CorpusSpec(
        name=PACKED_DOC_ID,
        setting="packed",
        folder=folder,
        files=[pdf],
        items=items,
        doc_names={pdf.name: PACKED_DOC_ID},
    )


def _fit_body(page, rect, text: str) -> bool:
    for size in BODY_SIZES:
        if page.insert_textbox(rect, text, fontsize=size, fontname="helv") >= 0:
            return True
    return False


def render_passages(passages: Sequence[Passage], out: Path, title: str = "passage corpus") -> dict[int, str]:
    """Write one passage per page to ``out``; returns page number → passage id.

    A passage too long for one page even at the smallest font continues on the next
    page(s), each mapped to the same passage id. ``title`` goes into the PDF metadata, so
    ingestion names the document after the corpus, not after its first passage (the
    document title heads every chunk's section path).
    """
    import pymupdf

    doc = pymupdf.open()
    pages: dict[int, str] = {}
    width = PAGE_WIDTH - 2 * MARGIN
    for passage in passages:
        words = passage.text.split()
        parts = [words]
        while parts:
            chunk = parts.pop(0)
            page = doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
            top = MARGIN
            if passage.title:
                title_rect = pymupdf.Rect(MARGIN, top, MARGIN + width, PAGE_HEIGHT / 3)
                left = page.insert_textbox(title_rect, passage.title, fontsize=TITLE_SIZE, fontname="hebo")
                top = title_rect.y1 - max(left, 0.0) + 8.0
            body = pymupdf.Rect(MARGIN, top, MARGIN + width, PAGE_HEIGHT - MARGIN)
            if len(chunk) > 1 and not _fit_body(page, body, " ".join(chunk)):
                half = len(chunk) // 2
                doc.delete_page(-1)
                parts[:0] = [chunk[:half], chunk[half:]]
                continue
            if len(chunk) == 1:
                _fit_body(page, body, chunk[0])
            pages[doc.page_count] = passage.id
    doc.set_metadata({"title": title})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.pdf")
    doc.save(tmp, garbage=1, deflate=True)
    doc.close()
    tmp.replace(out)
    return pages


def passage_spec(root: Path, benchmark: str, passages: Sequence[Passage], items: list[QAItem]) -> CorpusSpec:
    """The passage corpus as one rendered PDF (rendered once; ``pages.json`` maps pages to ids)."""
    key = _digest(*[f"{p.id}\x01{p.title}\x01{p.text}" for p in passages])
    folder = root / benchmark / f"passages-{key}"
    pdf = folder / "corpus" / f"{benchmark}-passages.pdf"
    map_file = folder / "corpus" / PAGE_MAP
    if pdf.exists() and map_file.exists():
        page_map = {int(k): v for k, v in json.loads(map_file.read_text(encoding="utf-8")).items()}
    else:
        page_map = render_passages(passages, pdf, title=f"{benchmark} passage corpus")
        map_file.write_text(json.dumps({str(k): v for k, v in page_map.items()}, ensure_ascii=False), encoding="utf-8")
    return CorpusSpec(
        name="passages",
        setting="passages",
        folder=folder,
        files=[pdf],
        items=items,
        level="passage",
        doc_names={pdf.name: benchmark},
        page_passages=page_map,
    )
