"""``nodocs``: the answer model alone, without any document — the floor every method must beat.

It builds nothing and retrieves nothing. Offline (no answer model) it cannot answer and
says so plainly instead of guessing, as it does when the answer model fails
(``answer_fallback``).
"""

from __future__ import annotations

import time
from typing import Any

from ...models.base import user
from ...prompts import render_prompt
from ...types import Answer, Evidence
from ..answers.answer_fallback import AnswerCalls, answer_with_fallback
from ..answers.extractive import NO_MODEL
from ..base import BuildReport, MethodContext, check_options, register
from .settings import query_options

OFFLINE_TEXT = (
    "The no-documents baseline answers from the answer model alone, and no answer model is "
    "configured (offline mode), so it cannot answer."
)
FAILED_TEXT = (
    "The no-documents baseline answers from the answer model alone, and the answer model failed "
    "(see the answer's warnings), so it cannot answer."
)


@register("nodocs")
class NoDocsBaseline:
    name = "nodocs"
    label = "No documents (baseline)"
    order = 15

    def build(self, ctx: MethodContext) -> BuildReport:
        return BuildReport(method=self.name, stats={"index": "none"})

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        check_options(self.name, options, query_options(self.name))  # taken, as by every baseline; unused
        return Evidence(query=query, method=self.name, notes=["nodocs retrieves nothing by design"])

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        started = time.perf_counter()
        evidence = self.retrieve(ctx, query, **options)

        def offline(reason: str) -> Answer:
            text = OFFLINE_TEXT if reason == NO_MODEL else FAILED_TEXT
            return Answer(question=query, text=text, method=self.name, evidence=evidence)

        def model(chat: AnswerCalls) -> Answer:
            prompt = render_prompt(__package__, "nodocs.md", question=query)
            text = chat.complete([user(prompt)], stage=f"{self.name}.answer").text.strip()
            return Answer(
                question=query, text=text, method=self.name, evidence=evidence, usage=dict(chat.usage), model_used=True
            )

        answer = answer_with_fallback(ctx, ctx.models.chat("answer"), model, offline)
        answer.timings = {"answer": time.perf_counter() - started}
        return answer

    def remove_document(self, ctx: MethodContext, doc_id: str) -> None:
        """Nothing is derived from documents."""

    def status(self, ctx: MethodContext) -> dict[str, Any]:
        total = sum(d.page_count for d in ctx.store.list_documents() if d.status == "ready")
        return {"built_pages": total, "total_pages": total, "index": "none"}
