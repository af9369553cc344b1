"""KG4VD's query entry points, called by the registered ``kg4vd`` method.

``retrieve(ctx, query, **options) -> Evidence`` runs the analyzer and the retrieval of
``retrieval`` (one module per stage); ``answer(ctx, query, **options) -> Answer`` adds the two-stage model
answer (or the offline extractive one, also the fallback when the answer model fails:
``methods.answers.answer_fallback``) of ``answer.py``.

Options (all optional):

- ``mode``: ``"auto"`` (default: ``fixed_mode`` setting, else the analyzer), ``"local"``,
  ``"multi_hop"`` or ``"document"``;
- ``top_pages``: the page budget (default: the mode's ``k_pages``, 10);
- ``max_images``: most page images sent to the final answer stage (default: the answer
  endpoint's ``models.answer.max_images``; None = every kept page);
- ``rerank_weight``: λ of the rerank stage's score fusion (``retrieval.rerank``) (default 0.5).

Timings (seconds) per stage: ``analyzer``, ``query_embedding`` (model inference, kept
apart), ``page_retrieval``, ``graph_load`` (0 unless the graph changed), ``entity_retrieval``,
``subgraph_ppr``, ``rerank``, and for answers ``answer_preliminary``, ``answer_final`` and
``answer`` (the whole answer step, offline included).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...types import Answer, Evidence, Usage
from ..answers.answer_fallback import AnswerCalls, answer_with_fallback
from ..answers.citations import CitationBook
from ..base import check_options
from ..retrieval.evidence_layer import measure_items, retrieval_settings
from ..retrieval.scope import keep_scope, scope_option
from ..timing import Timer
from .analyzer import STAGE as STAGE_ANALYZE
from .analyzer import ModeDecision, choose_mode
from .answer import offline_answer, two_stage_answer
from .retrieval import DEFAULT_RERANK_WEIGHT, RetrievalTrace, retrieve_graph

if TYPE_CHECKING:
    from ..base import MethodContext

METHOD = "kg4vd"
OPTIONS = ("mode", "top_pages", "max_images", "rerank_weight", "documents")


def _check_options(options: dict[str, Any], default_max_images: int | None = None) -> dict[str, Any]:
    check_options(METHOD, options, OPTIONS)
    top_pages = options.get("top_pages")
    if top_pages is not None and (not isinstance(top_pages, int) or top_pages < 1):
        raise InputError(f"top_pages must be a positive integer, got {top_pages!r}")
    max_images = options.get("max_images", default_max_images)
    if max_images is not None and (not isinstance(max_images, int) or max_images < 0):
        raise InputError(f"max_images must be a non-negative integer or None, got {max_images!r}")
    weight = options.get("rerank_weight", DEFAULT_RERANK_WEIGHT)
    if not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        raise InputError(f"rerank_weight must be within [0, 1], got {weight!r}")
    return {
        "mode": options.get("mode"),
        "top_pages": top_pages,
        "max_images": max_images,
        "rerank_weight": float(weight),
        "documents": scope_option(options.get("documents")),
    }


def _clean_query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InputError("the question is empty; ask something about the documents")
    return query.strip()


def run_retrieval(ctx: MethodContext, query: str, **options: Any) -> tuple[Evidence, RetrievalTrace, ModeDecision]:
    """Analyzer + retrieval; the Evidence with the trace and the mode decision behind it."""
    return _run(ctx, _clean_query(query), _check_options(options))


def _run(ctx: MethodContext, query: str, opts: dict[str, Any]) -> tuple[Evidence, RetrievalTrace, ModeDecision]:
    timings: dict[str, float] = {}
    with Timer(timings).stage("analyzer"):
        decision = choose_mode(ctx, query, opts["mode"])
    trace = retrieve_graph(
        ctx,
        query,
        decision.mode,
        k_pages=opts["top_pages"],
        rerank_weight=opts["rerank_weight"],
        timings=timings,
        scope=opts["documents"],
    )
    cfg = ctx.settings.kg4vd
    notes = [
        f"mode {decision.mode} ({decision.source}: {decision.reason})",
        f"{len(trace.anchors)} anchor pages, {len(trace.seeds)} seed entities, subgraph of "
        f"{len(trace.subgraph)} entities (H_max {trace.settings.h_max}, N_max {trace.settings.n_max})",
        "candidates before rerank: " + ", ".join(f"{v} {k}" for k, v in trace.candidates.items()),
    ]
    if not cfg.page_anchoring:
        notes.append("ablation: no page anchoring (seeds from direct entity retrieval)")
    if cfg.fixed_mode is not None and decision.source == "config":
        notes.append(f"ablation: fixed {cfg.fixed_mode}-mode PPR")
    evidence = Evidence(
        query=query,
        method=METHOD,
        mode=decision.mode,
        pages=trace.pages,
        entities=trace.entities,
        relations=trace.relations,
        timings=dict(timings),
        notes=notes + trace.notes,
        routed=trace.ranking.routed if trace.ranking is not None else [],
    )
    return keep_scope(evidence, opts["documents"]), trace, decision


def retrieve(ctx: MethodContext, query: str, **options: Any) -> Evidence:
    """Ranked pages, entities and relations for ``query`` (see the module doc for options)."""
    return run_retrieval(ctx, query, **options)[0]


def answer(ctx: MethodContext, query: str, **options: Any) -> Answer:
    """Retrieve, then answer with the two-stage model answer or, offline (also when the
    answer model fails: ``answer_fallback``), extractively."""
    opts = _check_options(options, ctx.settings.models.answer.max_images)
    evidence, _, decision = _run(ctx, _clean_query(query), opts)
    timings = dict(evidence.timings)
    usage: dict[str, Usage] = {}
    if decision.usage != Usage():
        usage[STAGE_ANALYZE] = decision.usage
    start = time.perf_counter()

    def offline(reason: str) -> Answer:
        book = CitationBook(ctx.store)
        text = offline_answer(
            evidence.query, evidence, book, reason, items=measure_items(evidence.query, retrieval_settings(ctx))
        )
        return Answer(
            question=evidence.query,
            text=text,
            method=METHOD,
            mode=decision.mode,
            citations=book.citations,
            evidence=evidence,
            timings=dict(timings),
            usage=dict(usage),
            model_used=decision.source == "model",
        )

    def model(chat: AnswerCalls) -> Answer:
        book = CitationBook(ctx.store)
        result = two_stage_answer(ctx, chat, evidence.query, evidence, book, max_images=opts["max_images"])
        if result.unknown_markers:
            evidence.notes.append(
                "the model cited unknown evidence numbers "
                + ", ".join(str(n) for n in sorted(set(result.unknown_markers)))
                + "; dropped"
            )
        return Answer(
            question=evidence.query,
            text=result.text,
            method=METHOD,
            mode=decision.mode,
            citations=book.citations,
            evidence=evidence,
            timings={**timings, **result.timings},
            usage={**usage, **result.usage},
            model_used=True,
        )

    out = answer_with_fallback(ctx, ctx.models.chat("answer"), model, offline)
    out.timings["answer"] = time.perf_counter() - start
    return out
