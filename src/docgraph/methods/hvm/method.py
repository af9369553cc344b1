"""The registered ``hvm`` method (HVM-GraphRAG): build, retrieve, answer, remove, status.

Building lives in ``build.py``, retrieval in ``retrieve.py``, answers in ``answer.py``;
``retrieve``/``answer`` accept per-call overrides of any ``HVMSettings`` field
(``k_c=15``, ``theta=0.5``, ``profile="papers"``, ``modality_aware=False`` …).
"""

from __future__ import annotations

from typing import Any

from ...config import HVMSettings
from ...types import Answer, Evidence
from ..base import BuildReport, MethodContext, register
from ..entity_graph import EntityGraph
from . import build as _build
from . import stats as _stats
from .state import NS_CONCEPT, NS_EDGE, NS_STATE, conflict_counts


@register("hvm")
class HVMMethod:
    """HVM-GraphRAG: holistic-view conflict resolution, concept graph, modality-aware evidence."""

    name = "hvm"
    label = "HVM-GraphRAG"
    scoped_retrieval = True  # documents= restricts the ranking (methods.retrieval.scope)
    order = 1
    settings_section = "hvm"
    settings_model = HVMSettings
    reset_unit = "documents"  # what ``reset_graph`` counts

    def build(self, ctx: MethodContext) -> BuildReport:
        return _build.build(ctx)

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        from .retrieve import retrieve

        return retrieve(ctx, query, **options)

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        from .answer import answer

        return answer(ctx, query, **options)

    def remove_document(self, ctx: MethodContext, doc_id: str) -> None:
        from ..memo import bump_version

        _build.remove(ctx, doc_id)
        bump_version(ctx.store, self.name)

    def reset_graph(self, ctx: MethodContext) -> int:
        """Forget every document's extractions, holistic view and concept-graph part, so the
        next build extracts again (after a change to how tables or pages are read); chunks,
        their vectors and cached model replies stay. Returns the documents reset."""
        from ..memo import bump_version
        from .concepts import graph_documents

        documents = {key for key, _ in ctx.store.iter_records(NS_STATE)} | graph_documents(ctx.store)
        for doc_id in sorted(documents):
            with ctx.store.transaction():
                _build.forget(ctx, doc_id, keep_extraction=False)
        bump_version(ctx.store, self.name)
        return len(documents)

    def status(self, ctx: MethodContext) -> dict[str, Any]:
        """Pages built (all chunks of the page folded into the holistic view), graph size, conflicts."""
        docs = [d for d in ctx.store.list_documents() if d.status == "ready"]
        states = dict(ctx.store.iter_records(NS_STATE))
        built_pages = 0
        for doc in docs:
            state = states.get(doc.id)
            if state is None:
                continue
            if state.get("complete"):
                built_pages += doc.page_count
            else:
                built_pages += int(state.get("pages_built", 0))
        conflicts = [conflict_counts(ctx.store, doc_id, state) for doc_id, state in states.items()]
        return {
            "built_pages": built_pages,
            "total_pages": sum(d.page_count for d in docs),
            "built_documents": sum(1 for d in docs if (states.get(d.id) or {}).get("complete")),
            "total_documents": len(docs),
            "concepts": ctx.store.count_records(NS_CONCEPT),
            "schema_edges": ctx.store.count_records(NS_EDGE),
            "facts": sum(int((states.get(d.id) or {}).get("facts", 0)) for d in docs),
            "conflicts": sum(total for total, _ in conflicts),
            "unresolved_conflicts": sum(unresolved for _, unresolved in conflicts),
        }

    def graph_stats(self, ctx: MethodContext) -> dict[str, Any]:
        return _stats.graph_stats(ctx.store)

    def format_stats(self, stats: dict[str, Any]) -> str:
        return _stats.format_stats(stats)

    def graph_view(self, ctx: MethodContext, stale: EntityGraph | None = None) -> EntityGraph:
        """Entities and facts of the holistic views (``graph_view``); held in memory, never stale."""
        from .graph_view import graph_view

        return graph_view(ctx.store)
