"""HotpotQA in its native format, with the HippoRAG release's passage corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Benchmark, QAItem
from .passages import PassageMatcher, load_corpus, question_and_corpus_paths, question_records

HOTPOTQA_FILE = "hotpotqa_train.json"


def load_hotpotqa(path: Path | str, corpus_path: Path | str | None = None) -> Benchmark:
    """HotpotQA (``_id, question, answer, supporting_facts, context, type, level``) from a
    file or a folder holding ``hotpotqa_train.json``; corpus from ``<file>_corpus.json``."""
    questions, corpus_file = question_and_corpus_paths(path, HOTPOTQA_FILE, corpus_path)
    corpus = load_corpus(corpus_file, "hotpotqa")
    matcher = PassageMatcher(corpus)
    items = []
    for index, row in enumerate(question_records(questions)):
        titles = list(dict.fromkeys(str(fact[0]) for fact in row.get("supporting_facts", []) if fact))
        gold, unmatched = matcher.match_all((t, None) for t in titles)
        context = [str(c[0]) for c in row.get("context", []) if c]
        extra: dict[str, Any] = {
            "level": row.get("level", ""),
            "supporting_facts": row.get("supporting_facts", []),
            "context_titles": context,
        }
        if unmatched:
            extra["unmatched_gold"] = unmatched
        items.append(
            QAItem(
                id=str(row.get("_id", row.get("id", f"hotpotqa-{index}"))),
                question=str(row["question"]),
                answer=str(row.get("answer", "")),
                gold_passages=gold,
                question_type=str(row.get("type", "")),
                extra=extra,
            )
        )
    return Benchmark(name="hotpotqa", items=items, corpus=corpus)
