"""The registered ``kg4vd`` method: building here, querying in ``query.py``.

``build`` is this package's build side (``build.py``), ``remove_document`` and ``status``
its upkeep (``lifecycle.py``);
``retrieve`` and ``answer`` delegate to ``query.retrieve`` / ``query.answer``, imported on
first use so the build side works on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...config import KG4VDSettings
from ...types import Answer, Evidence
from ..base import BuildReport, MethodContext, register
from ..entity_graph import EntityGraph
from . import build as _build
from . import export, lifecycle
from .analyzer import MODES


@register("kg4vd")
class KG4VDMethod:
    """KG4VD: page-grounded multimodal knowledge graph + query-adaptive PPR."""

    name = "kg4vd"
    label = "KG4VD"
    scoped_retrieval = True  # documents= restricts the ranking (methods.retrieval.scope)
    order = 0
    modes = ("auto", *MODES)
    settings_section = "kg4vd"
    settings_model = KG4VDSettings
    reset_unit = "page graphs"  # what ``reset_graph`` counts
    export_formats = ("graphml", "json")

    def build(self, ctx: MethodContext) -> BuildReport:
        return _build.build_graph(ctx)

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        from .query import retrieve

        return retrieve(ctx, query, **options)

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        from .query import answer

        return answer(ctx, query, **options)

    def remove_document(self, ctx: MethodContext, doc_id: str) -> None:
        lifecycle.remove_document(ctx, doc_id)

    def status(self, ctx: MethodContext) -> dict[str, Any]:
        return lifecycle.status(ctx)

    def graph_stats(self, ctx: MethodContext) -> dict[str, Any]:
        return export.graph_stats(ctx.store)

    def format_stats(self, stats: dict[str, Any]) -> str:
        return export.format_stats(stats)

    def export_graph(self, ctx: MethodContext, fmt: str, out: Path) -> dict[str, int]:
        write = {"graphml": export.export_graphml, "json": export.export_json}[fmt]
        return write(ctx.store, out)

    def reset_graph(self, ctx: MethodContext) -> int:
        return lifecycle.reset_graph(ctx)

    def graph_view(self, ctx: MethodContext, stale: EntityGraph | None = None) -> EntityGraph:
        """The query-time view retrieval walks (``graph_view``), so the page shows that graph."""
        from .graph_view import GraphView, load_view

        return load_view(ctx.store, stale if isinstance(stale, GraphView) else None)
