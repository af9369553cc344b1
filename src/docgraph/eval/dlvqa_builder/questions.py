"""One question per retained cluster (stage ``dlvqa.question``) and the dataset row it becomes.

The model writes the question, a STORM-style reference summary and topic labels from the
cluster's facts and the document summary. The answer guidelines are not the model's: they
fix only style, organisation and length (``prompts/answer_guidelines.md``, the paper's
wording), with the word range set from the reference summary's length ± ``tolerance``, so
they reveal nothing of the answer and are the same kind of text for every question.

``dataset_row`` writes exactly the fields the ``dlvqa`` loader reads (``eval.loaders.dlvqa``):
``qa_id, doc_id, query, gt_answer, gt_facts ({id, text, page, type} + components and boxes),
answer_guidelines, page_span, answer_format, subset, gt_topics, extra`` and ``doc_path``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...errors import ModelOutputError
from ...models.base import ChatModel, user
from ...prompts import material, render_prompt
from ...types import Document
from .schemas import Cluster, Fact, QuestionReply

_PACKAGE = __package__
_WORD = re.compile(r"\w+(?:['’-]\w+)*", re.UNICODE)


def fact_listing(facts: Sequence[Fact]) -> str:
    return "\n".join(f"{n}. [page {f.page}, {f.type}] {f.text}" for n, f in enumerate(facts, start=1))


def draft_question(chat: ChatModel, title: str, pages: int, doc_summary: str, facts: Sequence[Fact]) -> QuestionReply:
    """The question, reference summary and topics for one cluster (one call)."""
    prompt = render_prompt(
        _PACKAGE,
        "question.md",
        title=material(title),
        pages=str(pages),
        doc_summary=material(doc_summary or "(none)"),
        facts=material(fact_listing(facts)),
    )
    result = chat.complete([user(prompt)], stage="dlvqa.question", schema=QuestionReply)
    if not isinstance(result.parsed, QuestionReply):
        raise ModelOutputError("dlvqa.question: the reply is not a question draft", raw=result.text)
    return result.parsed


def word_count(text: str) -> int:
    """Words of a reference summary (Markdown heading marks are not words)."""
    return len(_WORD.findall(text))


def word_range(reference: str, tolerance: float) -> tuple[int, int]:
    """The guidelines' range: the reference length ± ``tolerance``, rounded to tens (at least 10..20)."""
    n = word_count(reference)
    low = max(10, int(round(n * (1 - tolerance) / 10.0)) * 10)
    high = max(low + 10, int(round(n * (1 + tolerance) / 10.0)) * 10)
    return low, high


def answer_guidelines(reference: str, tolerance: float) -> str:
    low, high = word_range(reference, tolerance)
    return render_prompt(_PACKAGE, "answer_guidelines.md", low=str(low), high=str(high)).strip()


def dataset_row(
    *,
    qa_id: str,
    doc_name: str,
    doc_path: str,
    doc: Document,
    subset: str,
    cluster: Cluster,
    facts: Sequence[Fact],
    reply: QuestionReply,
    answer_format: str,
    tolerance: float,
    boxes: dict[tuple[int, str], list[float]],
    model: str,
) -> dict[str, Any]:
    """The JSONL row of one question (see the module doc); ``boxes``: (page, component) → bbox."""
    pages = sorted({f.page for f in facts})
    gold = [
        {
            "id": f.id,
            "text": f.text,
            "page": f.page,
            "type": f.type,
            "components": list(f.components),
            "boxes": {c: boxes[(f.page, c)] for c in f.components if (f.page, c) in boxes},
        }
        for f in facts
    ]
    return {
        "qa_id": qa_id,
        "benchmark": "dlvqa",
        "subset": subset,
        "doc_id": doc_name,
        "doc_path": doc_path,
        "query": reply.question.strip(),
        "gt_answer": reply.reference_summary.strip(),
        "gt_facts": gold,
        "gt_topics": [t.strip() for t in reply.topics if t.strip()],
        "answer_guidelines": answer_guidelines(reply.reference_summary, tolerance),
        "page_span": pages,
        "answer_format": answer_format,
        "extra": {
            "cluster": cluster.cluster,
            "title": reply.title.strip(),
            "doc_title": doc.title,
            "doc_pages": doc.page_count,
            "doc_sha256": doc.sha256,
            "facts_by_type": {k: sum(f.type == k for f in facts) for k in ("text", "visual")},
            "first_page": pages[0] if pages else None,
            "last_page": pages[-1] if pages else None,
            "builder_model": model,
        },
    }
