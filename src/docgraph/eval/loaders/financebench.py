"""FinanceBench-style JSONL: one question per line with ``financebench_id``, ``doc_name``,
``question``, ``answer``, ``question_type``, ``evidence[{evidence_text, doc_name,
evidence_page_num}]`` and optional ``justification``, ``doc_type``, ``doc_period``,
``company``.

FinanceBench counts ``evidence_page_num`` from 0; gold pages here are 1-based
(``evidence_page_num + 1``). Documents are ``<doc_name>.pdf`` in ``pdf_dir``; without one,
the repository's own layout is read: ``path`` may be the repository folder (holding
``data/financebench_open_source.jsonl`` and ``pdfs/``), its ``data/`` folder, or the JSONL
file, and the filings are looked for in ``pdfs/`` beside ``data/`` (or beside the file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from .base import Benchmark, PageCounts, QAItem, page_count_lookup, parse_pages, read_jsonl, require, split_valid_pages

QUESTIONS_FILE = "financebench_open_source.jsonl"


def repository_layout(path: Path) -> tuple[Path, Path | None]:
    """``(questions file, pdf folder or None)`` from a path into FinanceBench's repository
    layout; an ``InputError`` names what was looked for when no questions file is there."""
    if path.is_dir():
        for candidate in (path / "data" / QUESTIONS_FILE, path / QUESTIONS_FILE):
            if candidate.is_file():
                path = candidate
                break
        else:
            raise InputError(
                f"no {QUESTIONS_FILE} here or in its data/ folder; give the FinanceBench "
                "repository folder or the JSONL file",
                path=str(path),
            )
    for folder in (path.parent.parent / "pdfs", path.parent / "pdfs"):
        if folder.is_dir():
            return path, folder
    return path, None


def load_financebench(
    path: Path | str, pdf_dir: Path | str | None = None, page_counts: PageCounts | None = None
) -> Benchmark:
    """Questions from a FinanceBench-style JSONL file (or the repository folder holding it);
    pages past a document's known length (``page_counts``) are dropped into
    ``extra['dropped_pages']``, the question is kept."""
    path, found_pdfs = repository_layout(require(Path(path), "FinanceBench JSONL file or repository folder"))
    pdf_dir = pdf_dir if pdf_dir is not None else found_pdfs
    rows = read_jsonl(path)
    count_of = page_count_lookup(page_counts)
    documents: dict[str, Path] = {}
    items = []
    for number, row in enumerate(rows, start=1):
        if "question" not in row or "doc_name" not in row:
            raise InputError(f"line {number} lacks 'question' or 'doc_name'", path=str(path))
        doc = str(row["doc_name"])
        gold: list[tuple[str, int]] = []
        dropped: list[tuple[str, int]] = []
        texts = []
        for ev in row.get("evidence") or []:
            ev_doc = str(ev.get("doc_name") or doc)
            pages = [p + 1 for p in parse_pages(ev.get("evidence_page_num"))]
            kept, gone = split_valid_pages(ev_doc, pages, count_of)
            gold.extend((ev_doc, p) for p in kept if (ev_doc, p) not in gold)
            dropped.extend((ev_doc, p) for p in gone)
            if ev.get("evidence_text"):
                texts.append(str(ev["evidence_text"]))
        doc_ids = list(dict.fromkeys([doc] + [d for d, _ in gold]))
        if pdf_dir is not None:
            for d in doc_ids:
                candidate = Path(pdf_dir) / f"{d}.pdf"
                if candidate.exists():
                    documents[d] = candidate
        extra: dict[str, Any] = {
            k: row[k]
            for k in (
                "company",
                "doc_period",
                "justification",
                "question_reasoning",
                "gics_sector",
                "dataset_subset_label",
            )
            if k in row
        }
        extra["evidence_texts"] = texts
        if dropped:
            extra["dropped_pages"] = dropped
        items.append(
            QAItem(
                id=str(row.get("financebench_id", f"financebench-{number}")),
                question=str(row["question"]),
                answer=str(row.get("answer", "")),
                doc_ids=doc_ids,
                gold_pages=gold,
                doc_type=str(row.get("doc_type", "")),
                question_type=str(row.get("question_type", "")),
                extra=extra,
            )
        )
    return Benchmark(name="financebench", items=items, documents=documents)
