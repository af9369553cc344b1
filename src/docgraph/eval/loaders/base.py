"""Shared types and helpers of the benchmark loaders.

Every loader returns a :class:`Benchmark`: typed :class:`QAItem` questions and, where the
set has one, a passage :class:`Corpus` and/or the paths of its documents. Page numbers are
1-based everywhere (loaders convert sets that count from 0 and say so).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...errors import InputError

PageCounts = Mapping[str, int] | Callable[[str], int | None]


class QAItem(BaseModel):
    """One benchmark question.

    ``answer`` is the gold answer; a list means acceptable alternatives (aliases, several
    annotators), never a multi-part answer (those stay one string, e.g. MMLongBench's
    "['Circle', 'Rectangle']", parsed into ``extra['answer_list']``). ``gold_pages`` are
    ``(doc_id, page)`` pairs, 1-based, already cleared of pages past a document's end;
    ``gold_passages`` are ids of the benchmark's :class:`Corpus`. ``evidence_sources`` use
    short names where the set has them (text, table, chart, figure, layout, visual).
    """

    id: str
    question: str
    answer: str | list[str]
    answer_format: str = ""
    doc_ids: list[str] = Field(default_factory=list)
    gold_pages: list[tuple[str, int]] = Field(default_factory=list)
    gold_passages: list[str] = Field(default_factory=list)
    evidence_sources: list[str] = Field(default_factory=list)
    doc_type: str = ""
    question_type: str = ""
    unanswerable: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def answers(self) -> list[str]:
        """The gold alternatives as a list."""
        return [self.answer] if isinstance(self.answer, str) else list(self.answer)

    def categories(self) -> dict[str, list[str]]:
        """Category fields for per-category means: doc_type, question_type, evidence_source."""
        return {
            "doc_type": [self.doc_type] if self.doc_type else [],
            "question_type": [self.question_type] if self.question_type else [],
            "evidence_source": list(self.evidence_sources),
        }


class Passage(BaseModel):
    id: str
    title: str = ""
    text: str
    doc_id: str = ""


class Corpus(BaseModel):
    """Retrievable passages with unique ids, in file order."""

    name: str
    passages: list[Passage]

    def ids(self) -> set[str]:
        return {p.id for p in self.passages}

    def by_id(self) -> dict[str, Passage]:
        return {p.id: p for p in self.passages}

    def __len__(self) -> int:
        return len(self.passages)


class Benchmark(BaseModel):
    """A loaded benchmark: questions, and the corpus or documents they are asked over."""

    name: str
    items: list[QAItem]
    corpus: Corpus | None = None
    documents: dict[str, Path] = Field(default_factory=dict, description="doc_id → file path")
    page_counts: dict[str, int] = Field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)

    def with_documents(self, folder: Path | str) -> Benchmark:
        """A copy whose documents are read from ``folder``: each document id's file there (by
        the id, the id plus ``.pdf``, or its current file's name), and every other PDF of the
        folder as a further document (keyed as the set keys its own: with or without
        ``.pdf``). An ``InputError`` names the folder when it is missing or holds none."""
        root = Path(folder)
        if not root.is_dir():
            raise InputError(
                "the documents folder does not exist; give the folder holding the benchmark's files", path=str(root)
            )
        wanted = dict.fromkeys([*self.documents, *(d for item in self.items for d in item.doc_ids)])
        found: dict[str, Path] = {}
        for doc_id in wanted:
            names = [doc_id, f"{doc_id}.pdf"] + ([self.documents[doc_id].name] if doc_id in self.documents else [])
            match = next((root / n for n in names if (root / n).is_file()), None)
            if match is not None:
                found[doc_id] = match
        if not found:
            raise InputError("none of the benchmark's documents is in this folder; check --documents", path=str(root))
        with_suffix = all(d.lower().endswith(".pdf") for d in found)
        taken = {p.resolve() for p in found.values()}
        for pdf in sorted(root.glob("*.pdf")):
            if pdf.resolve() not in taken:
                found.setdefault(pdf.name if with_suffix else pdf.stem, pdf)
        return self.model_copy(update={"documents": found})

    def without_long_documents(self, max_pages: int | None) -> Benchmark:
        """A copy without the questions about documents longer than ``max_pages`` pages
        (None, or no page counts: all kept) — the quicker development subsets."""
        if max_pages is None or not self.page_counts:
            return self
        return self.model_copy(
            update={"items": [i for i in self.items if all(self.page_counts.get(d, 0) <= max_pages for d in i.doc_ids)]}
        )


def read_json(path: Path) -> Any:
    """Parsed JSON; ``InputError`` naming the file when it is missing or malformed."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise InputError("file not found; check the benchmark path", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc})", path=str(path)) from exc


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """One JSON object per non-empty line; ``InputError`` naming file and line otherwise."""
    rows: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"line {number} is not valid JSON ({exc})", path=str(path)) from exc
                if not isinstance(row, dict):
                    raise InputError(f"line {number} is not a JSON object", path=str(path))
                rows.append(row)
    except FileNotFoundError:
        raise InputError("file not found; check the benchmark path", path=str(path)) from None
    return rows


def parse_literal_list(value: Any) -> list[Any]:
    """A list from a value that may be a list, a scalar, or a Python/JSON literal string
    such as "[5, 6]" or "['Chart']". Unparseable strings fall back to their integers
    (for page lists) or to the stripped string itself; empty / None gives []."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return list(value)
    if not isinstance(value, str):
        return [value]
    text = value.strip()
    if not text:
        return []
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        numbers = re.findall(r"-?\d+", text)
        return [int(n) for n in numbers] if numbers and re.fullmatch(r"[\s\[\](),\d\-]*", text) else [text]
    if isinstance(parsed, (list, tuple, set)):
        return list(parsed)
    return [parsed]


def parse_pages(value: Any) -> list[int]:
    """Page numbers from a defensive parse: ints and digit strings kept, the rest skipped,
    duplicates removed, order kept."""
    pages: list[int] = []
    for item in parse_literal_list(value):
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            page = item
        elif isinstance(item, float) and item.is_integer():
            page = int(item)
        elif isinstance(item, str) and item.strip().lstrip("-").isdigit():
            page = int(item.strip())
        else:
            continue
        if page not in pages:
            pages.append(page)
    return pages


def page_count_lookup(page_counts: PageCounts | None) -> Callable[[str], int | None]:
    """A callable doc_id → page count (or None when unknown) from a mapping or callable."""
    if page_counts is None:
        return lambda doc_id: None
    if callable(page_counts):
        return page_counts
    return lambda doc_id: page_counts.get(doc_id)


def split_valid_pages(
    doc_id: str, pages: Iterable[int], count_of: Callable[[str], int | None]
) -> tuple[list[int], list[int]]:
    """``(kept, dropped)``: pages below 1 or past the document's known page count are dropped."""
    count = count_of(doc_id)
    kept: list[int] = []
    dropped: list[int] = []
    for page in pages:
        (kept if page >= 1 and (count is None or page <= count) else dropped).append(page)
    return kept, dropped


def pdf_page_counts(paths: Iterable[Path | str]) -> dict[str, int]:
    """Page counts of PDF files with PyMuPDF, keyed by file name. ``InputError`` naming a
    file that cannot be opened."""
    import pymupdf

    counts: dict[str, int] = {}
    for path in paths:
        path = Path(path)
        try:
            with pymupdf.open(path) as doc:
                counts[path.name] = doc.page_count
        except Exception as exc:  # pymupdf raises several types for unreadable files
            raise InputError(f"cannot read the PDF to count its pages ({exc})", path=str(path)) from exc
    return counts


def unique_title_ids(titles: Iterable[str]) -> list[str]:
    """Passage ids from titles: the title itself, and for the 2nd, 3rd … passage with the
    same title ``"<title>#2"``, ``"<title>#3"`` …"""
    seen: dict[str, int] = {}
    ids = []
    for title in titles:
        seen[title] = seen.get(title, 0) + 1
        ids.append(title if seen[title] == 1 else f"{title}#{seen[title]}")
    return ids


def require(path: Path, what: str) -> Path:
    """``path`` if it exists, else an ``InputError`` saying what was expected there."""
    if not path.exists():
        raise InputError(f"{what} not found; check the benchmark path", path=str(path))
    return path
