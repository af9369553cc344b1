"""Statistics of a workspace's HVM-GraphRAG index (``docgraph graph stats --method hvm``).

``graph_stats(store)`` summarises how the index was built: documents (complete or not),
chunks stored and extracted, extractions by strategy (``model:<name>``, ``offline``, and
``offline-fallback`` for chunks whose model replies stayed unusable and were extracted
offline under ``hvm.on_model_error = "offline"``, each listed by document, page and chunk),
facts, entities and concepts of the complete documents, the conflict log (and how many of
its entries the offline rules settled after an unusable model reply), and the model usage
of the ``hvm.*`` stages. ``format_stats`` renders it as text.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...store.base import Store
from ..building.build_stats import OFFLINE_FALLBACK, stage_usage, table, usage_lines
from .state import NS_CHUNK, NS_CONFLICT, NS_EXTRACT, NS_STATE

CONFLICT_FALLBACK_NOTE = "model reply invalid"  # how fold_chunk's conflict-log note starts after a fallback


def graph_stats(store: Store) -> dict[str, Any]:
    """Counts that describe the HVM index and how it was built (JSON-able)."""
    states = dict(store.iter_records(NS_STATE))
    complete = [s for s in states.values() if s.get("complete")]
    where = {key: value["chunk"] for key, value in store.iter_records(NS_CHUNK)}
    extractions = dict(store.iter_records(NS_EXTRACT))
    conflicts = [value for _, value in store.iter_records(NS_CONFLICT)]
    stages, total = stage_usage(store, "hvm.")

    def place(chunk_id: str) -> str:
        chunk = where.get(chunk_id) or {}
        return f"{chunk.get('doc_id', '?')} page {chunk.get('page', '?')} chunk {chunk_id}"

    return {
        "documents": len(states),
        "complete_documents": len(complete),
        "chunks": len(where),
        "extracted_chunks": len(extractions),
        "chunks_by_strategy": dict(Counter(e.get("strategy") or "unknown" for e in extractions.values()).most_common()),
        "offline_fallback_chunks": sorted(
            place(key) for key, e in extractions.items() if e.get("strategy") == OFFLINE_FALLBACK
        ),
        "facts": sum(int(s.get("facts", 0)) for s in complete),
        "entities": sum(int(s.get("entities", 0)) for s in complete),
        "concepts": sum(int(s.get("concepts", 0)) for s in complete),
        "conflicts_logged": len(conflicts),
        "conflicts_offline_fallback": sum(str(c.get("note", "")).startswith(CONFLICT_FALLBACK_NOTE) for c in conflicts),
        "usage": {stage: u.model_dump() for stage, u in stages.items()},
        "usage_total": total.model_dump(),
    }


def format_stats(stats: dict[str, Any]) -> str:
    """A readable multi-line report of ``graph_stats``."""
    lines = [
        f"documents {stats['documents']} ({stats['complete_documents']} complete)   chunks {stats['chunks']} "
        f"({stats['extracted_chunks']} extracted)   facts {stats['facts']}   entities {stats['entities']}   "
        f"concepts {stats['concepts']}   conflicts logged {stats['conflicts_logged']} "
        f"({stats['conflicts_offline_fallback']} settled by the offline rules after unusable replies)"
    ]
    lines += table("chunks by strategy", stats["chunks_by_strategy"])
    if stats["offline_fallback_chunks"]:
        lines.append(
            f'extracted offline after the model\'s replies failed (hvm.on_model_error = "offline"): '
            f"{', '.join(stats['offline_fallback_chunks'])}"
        )
    lines += usage_lines(stats["usage"])
    return "\n".join(lines)
