"""MMLongBench-Doc: ``samples.json`` + ``documents.tsv`` + ``documents/*.pdf``.

Sample keys: doc_id, doc_type, question, answer, evidence_pages, evidence_sources,
answer_format. ``evidence_pages`` / ``evidence_sources`` are Python-literal strings ("[5]",
"['Chart', 'Pure-text (Plain-text)']") and are parsed defensively; the answer
"Not answerable" marks unanswerable questions; ``question_type`` is the benchmark's own split
(single-page / cross-page / unanswerable). Evidence pages past a document's end are
dropped (the question is kept, the pages listed in ``extra['dropped_pages']``).

Two corpus settings: per document (each question over its own PDF, :func:`by_document`)
and packed (many documents concatenated into one long document, :func:`pack_documents`,
as KG4VD's 2,000-page experiment).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from .base import (
    Benchmark,
    PageCounts,
    QAItem,
    page_count_lookup,
    parse_literal_list,
    parse_pages,
    pdf_page_counts,
    read_json,
    require,
    split_valid_pages,
)

UNANSWERABLE = "Not answerable"
PACKED_DOC_ID = "packed"

SOURCE_NAMES = {
    "pure-text (plain-text)": "text",
    "pure-text": "text",
    "plain-text": "text",
    "text": "text",
    "table": "table",
    "chart": "chart",
    "figure": "figure",
    "image": "figure",
    "generalized-text (layout)": "layout",
    "layout": "layout",
}


def source_name(raw: str) -> str:
    """Short evidence-source name (text, table, chart, figure, layout); unknown names are lowercased."""
    key = " ".join(str(raw).strip().lower().split())
    return SOURCE_NAMES.get(key, key)


def question_type(answer: str, evidence_pages: Sequence[int]) -> str:
    """The benchmark's own split: "unanswerable" (gold "Not answerable"), "cross-page" (more
    than one evidence page) or "single-page"."""
    if answer.strip().lower() == UNANSWERABLE.lower():
        return "unanswerable"
    return "cross-page" if len(set(evidence_pages)) > 1 else "single-page"


def read_documents_tsv(path: Path) -> dict[str, dict[str, str]]:
    """Rows of ``documents.tsv`` (doc_id, pages, bytes, n_questions, doc_type) by doc_id."""
    with open(require(path, "documents.tsv"), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if rows and "doc_id" not in rows[0]:
        raise InputError("documents.tsv has no 'doc_id' column", path=str(path))
    return {row["doc_id"]: row for row in rows}


def _root_and_samples(path: Path) -> tuple[Path, Path]:
    path = Path(path)
    if path.is_dir():
        return path, require(path / "samples.json", "MMLongBench-Doc samples.json")
    return path.parent, require(path, "MMLongBench-Doc samples file")


def load_mmlongbench(
    path: Path | str, page_counts: PageCounts | None = None, count_pdf_pages: bool = False
) -> Benchmark:
    """Questions of MMLongBench-Doc from a folder (or its ``samples.json``).

    Page counts used to drop past-the-end evidence pages come from, in order: the
    ``page_counts`` mapping/callback, PyMuPDF when ``count_pdf_pages`` is true, else
    ``documents.tsv`` when present; with none, pages are only checked to be ≥ 1.
    """
    root, samples_path = _root_and_samples(Path(path))
    samples = read_json(samples_path)
    if not isinstance(samples, list):
        raise InputError("expected a JSON list of samples", path=str(samples_path))
    tsv = read_documents_tsv(root / "documents.tsv") if (root / "documents.tsv").exists() else {}
    doc_dir = root / "documents"
    documents = {p.name: p for p in sorted(doc_dir.glob("*.pdf"))} if doc_dir.is_dir() else {}
    counts: dict[str, int] = {}
    if count_pdf_pages:
        counts = pdf_page_counts(documents.values())
    elif tsv:
        counts = {doc: int(row["pages"]) for doc, row in tsv.items() if str(row.get("pages", "")).isdigit()}
    count_of = page_count_lookup(page_counts if page_counts is not None else counts)

    items = []
    for index, sample in enumerate(samples):
        try:
            doc_id, question = str(sample["doc_id"]), str(sample["question"])
        except (KeyError, TypeError):
            raise InputError(f"sample {index} lacks doc_id or question", path=str(samples_path)) from None
        answer = str(sample.get("answer", ""))
        pages = parse_pages(sample.get("evidence_pages"))
        kept, dropped = split_valid_pages(doc_id, pages, count_of)
        raw_sources = [str(s) for s in parse_literal_list(sample.get("evidence_sources"))]
        extra: dict = {"index": index, "evidence_sources_raw": raw_sources}
        if dropped:
            extra["dropped_pages"] = dropped
        if sample.get("answer_format") == "List":
            parsed = parse_literal_list(answer)
            if len(parsed) > 1 or (parsed and parsed[0] != answer):
                extra["answer_list"] = [str(x) for x in parsed]
        items.append(
            QAItem(
                id=f"mmlongbench-{index:04d}",
                question=question,
                answer=answer,
                answer_format=str(sample.get("answer_format", "")),
                doc_ids=[doc_id],
                gold_pages=[(doc_id, p) for p in kept],
                evidence_sources=list(dict.fromkeys(source_name(s) for s in raw_sources)),
                doc_type=str(sample.get("doc_type", "") or tsv.get(doc_id, {}).get("doc_type", "")),
                question_type=question_type(answer, pages),
                unanswerable=answer.strip().lower() == UNANSWERABLE.lower(),
                extra=extra,
            )
        )
    all_counts = {
        doc: c for doc in sorted({i.doc_ids[0] for i in items} | set(documents)) if (c := count_of(doc)) is not None
    }
    return Benchmark(name="mmlongbench", items=items, documents=documents, page_counts=all_counts)


def by_document(items: Iterable[QAItem]) -> dict[str, list[QAItem]]:
    """Per-document setting: questions grouped by their document, documents in first-seen order."""
    groups: dict[str, list[QAItem]] = {}
    for item in items:
        groups.setdefault(item.doc_ids[0] if item.doc_ids else "", []).append(item)
    return groups


@dataclass(frozen=True)
class PackedLayout:
    """Where each document's pages sit in the packed document: page ``p`` of ``doc`` is
    packed page ``offsets[doc] + p``."""

    order: tuple[str, ...]
    offsets: dict[str, int]
    counts: dict[str, int]

    @property
    def total_pages(self) -> int:
        return sum(self.counts.values())

    def to_packed(self, doc_id: str, page: int) -> int:
        if not 1 <= page <= self.counts[doc_id]:
            raise ValueError(f"{doc_id} has no page {page}")
        return self.offsets[doc_id] + page

    def from_packed(self, page: int) -> tuple[str, int]:
        """The ``(doc_id, page)`` of a packed page number."""
        for doc_id in self.order:
            if self.offsets[doc_id] < page <= self.offsets[doc_id] + self.counts[doc_id]:
                return doc_id, page - self.offsets[doc_id]
        raise ValueError(f"packed page {page} is outside 1..{self.total_pages}")


def pack_documents(
    items: Sequence[QAItem], page_counts: PageCounts, order: Sequence[str] | None = None
) -> tuple[PackedLayout, list[QAItem]]:
    """The packed setting: documents concatenated (default order: sorted doc ids) into one
    document ``"packed"``; returns the layout and copies of the items whose ``doc_ids`` and
    ``gold_pages`` point into it (original pages kept in ``extra['source_gold_pages']``)."""
    count_of = page_count_lookup(page_counts)
    docs = list(order) if order is not None else sorted({d for item in items for d in item.doc_ids})
    offsets: dict[str, int] = {}
    counts: dict[str, int] = {}
    running = 0
    for doc_id in docs:
        count = count_of(doc_id)
        if count is None:
            raise InputError(f"no page count for {doc_id}; the packed setting needs every document's length")
        offsets[doc_id], counts[doc_id] = running, int(count)
        running += int(count)
    layout = PackedLayout(order=tuple(docs), offsets=offsets, counts=counts)
    packed = []
    for item in items:
        missing = [d for d in item.doc_ids if d not in offsets]
        if missing:
            raise InputError(f"question {item.id} is about {missing[0]}, which is not in the packed order")
        pages = [(PACKED_DOC_ID, layout.to_packed(d, p)) for d, p in item.gold_pages if 1 <= p <= counts[d]]
        extra = dict(item.extra, source_gold_pages=list(item.gold_pages), source_doc_ids=list(item.doc_ids))
        packed.append(item.model_copy(update={"doc_ids": [PACKED_DOC_ID], "gold_pages": pages, "extra": extra}))
    return layout, packed
