"""MuSiQue in its native format, with the HippoRAG release's passage corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Benchmark, QAItem
from .passages import PassageMatcher, load_corpus, question_and_corpus_paths, question_records, supporting_paragraphs

MUSIQUE_FILE = "musique_train.json"


def load_musique(path: Path | str, corpus_path: Path | str | None = None) -> Benchmark:
    """MuSiQue (``id, question, answer, answer_aliases, answerable, paragraphs[{idx, title,
    paragraph_text, is_supporting}], question_decomposition``); the answer becomes the list
    [answer, *aliases]. ``question_type`` is the hop pattern of the id ("2hop", "3hop1" …)."""
    questions, corpus_file = question_and_corpus_paths(path, MUSIQUE_FILE, corpus_path)
    corpus = load_corpus(corpus_file, "musique")
    matcher = PassageMatcher(corpus)
    items = []
    for index, row in enumerate(question_records(questions)):
        qid = str(row.get("id", f"musique-{index}"))
        gold, unmatched = matcher.match_all(supporting_paragraphs(row.get("paragraphs", []), "paragraph_text"))
        answers = list(dict.fromkeys([str(row.get("answer", ""))] + [str(a) for a in row.get("answer_aliases", [])]))
        answerable = bool(row.get("answerable", True))
        extra: dict[str, Any] = {
            "answerable": answerable,
            "decomposition": row.get("question_decomposition", []),
            "context_passages": [str(p.get("title", "")) for p in row.get("paragraphs", [])],
        }
        if unmatched:
            extra["unmatched_gold"] = unmatched
        items.append(
            QAItem(
                id=qid,
                question=str(row["question"]),
                answer=answers,
                gold_passages=gold,
                question_type=qid.split("__")[0] if "__" in qid else "",
                unanswerable=not answerable,
                extra=extra,
            )
        )
    return Benchmark(name="musique", items=items, corpus=corpus)
