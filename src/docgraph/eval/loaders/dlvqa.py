"""KG4VD's DLVQA JSONL: ``qa_id, doc_id, query, gt_answer, gt_facts, answer_guidelines,
page_span, answer_format`` (and ``subset``, ``gt_topics``, ``extra`` when present).

``gt_facts`` are ``{id, text, page, type}`` records (plain strings are accepted too); the
gold pages are the facts' pages, or ``page_span`` when no fact has one. Pages are taken as
1-based, as the dataset's README gives them. ``evidence_sources`` are the fact types
(e.g. text, visual). The reference summary is the answer; facts, guidelines, topics and
the page span are in ``extra``.

The documents are the PDFs of ``pdf_dir`` (a folder's ``pdfs/``), keyed by file name; a
row's ``doc_path`` (what ``docgraph dataset dlvqa`` writes: relative to the JSONL file's
folder, or absolute) names the file of a document not found there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from .base import Benchmark, QAItem, parse_pages, read_jsonl, require


def _facts(raw: Any) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    for index, fact in enumerate(raw or []):
        if isinstance(fact, str):
            facts.append({"id": str(index), "text": fact, "pages": [], "type": ""})
        elif isinstance(fact, dict):
            pages = parse_pages(fact.get("page", fact.get("pages")))
            facts.append(
                {
                    "id": str(fact.get("id", index)),
                    "text": str(fact.get("text", fact.get("fact", ""))),
                    "pages": pages,
                    "type": str(fact.get("type", "") or ""),
                }
            )
    return facts


def load_dlvqa(path: Path | str, pdf_dir: Path | str | None = None) -> Benchmark:
    """DLVQA questions from a JSONL file (or a folder with ``queries.jsonl`` and ``pdfs/``)."""
    path = Path(path)
    if path.is_dir():
        pdf_dir = pdf_dir if pdf_dir is not None else path / "pdfs"
        path = path / "queries.jsonl"
    rows = read_jsonl(require(path, "DLVQA JSONL file"))
    items = []
    for number, row in enumerate(rows, start=1):
        if "query" not in row or "doc_id" not in row:
            raise InputError(f"line {number} lacks 'query' or 'doc_id'", path=str(path))
        doc_id = str(row["doc_id"])
        facts = _facts(row.get("gt_facts"))
        pages = list(dict.fromkeys(p for f in facts for p in f["pages"] if p >= 1))
        span = parse_pages(row.get("page_span"))
        if not pages:
            pages = [p for p in span if p >= 1]
        items.append(
            QAItem(
                id=str(row.get("qa_id", f"dlvqa-{number}")),
                question=str(row["query"]),
                answer=str(row.get("gt_answer") or ""),
                answer_format=str(row.get("answer_format", "")),
                doc_ids=[doc_id],
                gold_pages=[(doc_id, p) for p in sorted(pages)],
                evidence_sources=list(dict.fromkeys(f["type"] for f in facts if f["type"])),
                doc_type=str(row.get("subset", "")),
                extra={
                    "gt_facts": facts,
                    "answer_guidelines": row.get("answer_guidelines", ""),
                    "page_span": span,
                    "gt_topics": row.get("gt_topics", []),
                    "source_extra": row.get("extra", {}),
                },
            )
        )
    documents = {}
    if pdf_dir is not None and Path(pdf_dir).is_dir():
        documents = {p.name: p for p in sorted(Path(pdf_dir).glob("*.pdf"))}
    for row in rows:
        doc_id, named = str(row["doc_id"]), row.get("doc_path")
        if named and doc_id not in documents:
            file = path.parent / Path(str(named)).expanduser()  # an absolute doc_path stays as it is
            if file.is_file():
                documents[doc_id] = file
    return Benchmark(name="dlvqa", items=items, documents=documents)
