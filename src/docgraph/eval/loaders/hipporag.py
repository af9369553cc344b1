"""HippoRAG's one-file sample format ``{id, question, answer, paragraphs}`` with its corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Benchmark, QAItem
from .passages import PassageMatcher, load_corpus, question_and_corpus_paths, question_records, supporting_paragraphs

HIPPORAG_FILE = "sample.json"


def load_hipporag(path: Path | str, corpus_path: Path | str | None = None) -> Benchmark:
    """HippoRAG's sample format: ``[{id, question, answer: [..], answerable, paragraphs:
    [{title, text, is_supporting, idx}]}]`` with a ``[{title, text, idx}]`` corpus."""
    questions, corpus_file = question_and_corpus_paths(path, HIPPORAG_FILE, corpus_path)
    corpus = load_corpus(corpus_file, "hipporag")
    matcher = PassageMatcher(corpus)
    items = []
    for index, row in enumerate(question_records(questions)):
        gold, unmatched = matcher.match_all(supporting_paragraphs(row.get("paragraphs", []), "text"))
        raw_answer = row.get("answer", "")
        answer: str | list[str] = [str(a) for a in raw_answer] if isinstance(raw_answer, list) else str(raw_answer)
        answerable = bool(row.get("answerable", True))
        extra: dict[str, Any] = {"answerable": answerable}
        if unmatched:
            extra["unmatched_gold"] = unmatched
        items.append(
            QAItem(
                id=str(row.get("id", f"hipporag-{index}")),
                question=str(row["question"]),
                answer=answer,
                gold_passages=gold,
                unanswerable=not answerable,
                extra=extra,
            )
        )
    return Benchmark(name="hipporag", items=items, corpus=corpus)
