"""KG4VD's test questions (``questions.jsonl``: qid, question, answer, answer_format, style,
note) about the PDF beside them. Gold pages come from the note ("TOC, page 1",
"synthesis over preface, pages 3–4"); ``question_type`` is the style (mmlongbench / dlvqa).
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import Benchmark, QAItem, read_jsonl, require

_PAGES = re.compile(r"\bpages?\s+(\d+)(?:\s*[-\u2013\u2014]\s*(\d+))?", re.IGNORECASE)


def pages_from_note(note: str) -> list[int]:
    """Pages named in a note: "page 5" → [5], "pages 3–4" → [3, 4]."""
    pages: list[int] = []
    for start, end in _PAGES.findall(note or ""):
        first, last = int(start), int(end or start)
        pages.extend(p for p in range(first, max(first, last) + 1) if p not in pages)
    return pages


def load_kg4vd_test(path: Path | str) -> Benchmark:
    """From the folder (``questions.jsonl`` and the PDF) or the questions file itself. With
    exactly one PDF beside the questions, it is every question's document."""
    path = Path(path)
    questions = path / "questions.jsonl" if path.is_dir() else path
    rows = read_jsonl(require(questions, "KG4VD test questions.jsonl"))
    pdfs = sorted(questions.parent.glob("*.pdf"))
    documents = {p.name: p for p in pdfs}
    doc_ids = [pdfs[0].name] if len(pdfs) == 1 else []
    items = []
    for row in rows:
        note = str(row.get("note", ""))
        pages = pages_from_note(note) if doc_ids else []
        items.append(
            QAItem(
                id=str(row["qid"]),
                question=str(row["question"]),
                answer=str(row.get("answer", "")),
                answer_format=str(row.get("answer_format", "")),
                doc_ids=list(doc_ids),
                gold_pages=[(doc_ids[0], p) for p in pages],
                question_type=str(row.get("style", "")),
                extra={"note": note},
            )
        )
    return Benchmark(name="kg4vd_test", items=items, documents=documents)
