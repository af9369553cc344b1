"""Per-question records of an eval run, the JSONL file that keeps them, and resume.

Every result the tables show is computed from these records (``report.summarize``), so a
record holds everything needed to score it again: gold and retrieved evidence as keys of
the same kind, the raw answer, the extracted short answer, judge verdicts, time and
model usage. Kinds:

- ``question``: one method on one question; ``run`` is ``retrieval`` or ``answer``;
- ``build``: one method's build of one corpus (cost totals for that corpus so far);
- ``pairwise``: one judge's verdicts on two methods' answers, in both orders.

Evidence keys: page level ``"<benchmark doc id>|<page>"``; passage level the corpus's
passage ids. A run appends records as they finish (one JSON object a line, flushed);
a later run with the same ``--out`` skips every question whose record is there, so an
interrupted run resumes. Records with an ``error`` are retried; the last record for a
key wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..models.usage import model_stages
from ..types import Evidence, ScoredPage, Usage

USAGE_FIELDS = tuple(Usage.model_fields)


def page_key(doc: str, page: int) -> str:
    return f"{doc}|{page}"


def question_key(record: dict[str, Any]) -> tuple:
    return (
        "question",
        record.get("setting"),
        record.get("corpus"),
        record.get("method"),
        record.get("qid"),
        record.get("run"),
        record.get("answer_model"),
    )


def build_key(record: dict[str, Any]) -> tuple:
    return ("build", record.get("setting"), record.get("corpus"), record.get("method"))


def pairwise_key(record: dict[str, Any]) -> tuple:
    return (
        "pairwise",
        record.get("setting"),
        record.get("method"),
        record.get("opponent"),
        record.get("qid"),
        record.get("judge"),
    )


def record_key(record: dict[str, Any]) -> tuple:
    kind = record.get("kind")
    if kind == "build":
        return build_key(record)
    if kind == "pairwise":
        return pairwise_key(record)
    return question_key(record)


class RecordLog:
    """The records JSONL of one benchmark run (read on open, appended to as work finishes)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._latest: dict[tuple, dict[str, Any]] = {}
        self.skipped_lines = 0
        self._cut_short = False  # the file ends inside a line (an interrupted write): append on a new line
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, 2)
                self._cut_short = fh.read(1) != b"\n"
        if self.path.exists():
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:  # a line cut short by an interruption
                        self.skipped_lines += 1
                        continue
                    if isinstance(record, dict):
                        self._latest[record_key(record)] = record

    def get(self, key: tuple) -> dict[str, Any] | None:
        return self._latest.get(key)

    def done(self, key: tuple) -> bool:
        record = self._latest.get(key)
        return record is not None and not record.get("error")

    def append(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(("\n" if self._cut_short else "") + json.dumps(record, ensure_ascii=False, default=str) + "\n")
            self._cut_short = False
            fh.flush()
        self._latest[record_key(record)] = record

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The latest record per key, in file order of their keys' first appearance."""
        return [r for r in self._latest.values() if kind is None or r.get("kind") == kind]


def read_records(path: Path) -> list[dict[str, Any]]:
    """The latest record per key of a records file."""
    return RecordLog(path).records()


def ranked_pages(evidence: Evidence) -> list[ScoredPage]:
    """The pages a method ranked: ``Evidence.pages``, else the pages of its chunks, else of
    its entities' mentions, in rank order without repeats."""
    if evidence.pages:
        return list(evidence.pages)
    out: list[ScoredPage] = []
    seen: set[tuple[str, int]] = set()

    def add(doc_id: str, page: int, score: float) -> None:
        if (doc_id, page) not in seen:
            seen.add((doc_id, page))
            out.append(ScoredPage(doc_id=doc_id, page=page, score=score))

    for chunk in evidence.chunks:
        add(chunk.chunk.doc_id, chunk.chunk.page, chunk.score)
    if not out:
        for entity in evidence.entities:
            for mention in entity.entity.mentions:
                add(mention.doc_id, mention.page, entity.score)
    return out


def evidence_keys(
    pages: Iterable[ScoredPage], doc_names: dict[str, str], level: str, page_passages: dict[int, str] | None = None
) -> tuple[list[str], list[float]]:
    """Benchmark keys (and scores) of ranked workspace pages, repeats dropped.

    ``doc_names`` maps workspace doc id → benchmark doc id; pages of other documents are
    skipped. Passage level maps each page through ``page_passages``.
    """
    keys: list[str] = []
    scores: list[float] = []
    for page in pages:
        doc = doc_names.get(page.doc_id)
        if doc is None:
            continue
        if level == "passage":
            key = (page_passages or {}).get(page.page)
            if key is None:
                continue
        else:
            key = page_key(doc, page.page)
        if key not in keys:
            keys.append(key)
            scores.append(round(float(page.score), 6))
    return keys, scores


def usage_dict(usages: dict[str, Usage] | None) -> dict[str, float]:
    """Summed model usage over stages as a plain dict (``{}`` for none); embedding stages
    (``embed.*``: texts embedded, not model calls) are left out."""
    total = Usage()
    for usage in model_stages(usages or {}).values():
        total = total.add(usage)
    return {k: getattr(total, k) for k in USAGE_FIELDS if getattr(total, k)}
