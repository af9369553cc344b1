"""The regions of a retrieved page that best show why it was retrieved.

A method ranks pages; a person (or an agent) wants to see, on each page, the few regions
to read. A region earns its place from two signals, each scaled to [0, 1] on its page:

- **evidence**: the retrieval's own pointers into the page — chunks, entity and relation
  mentions — each adding its score to the components it names;
- **terms**: the share of the query's content words the region's text contains.

Their mean orders the regions; reading order breaks ties. Furniture (running heads, page
numbers) and empty regions are never shown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .text import tokenize
from .types import Component, Evidence, Page


def evidence_weights(evidence: Evidence) -> dict[tuple[str, int], dict[str, float]]:
    """``{(doc_id, page): {component_id: weight}}`` from the evidence's chunks and mentions."""
    weights: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def add(doc_id: str, page: int, component_ids: Iterable[str], score: float) -> None:
        for cid in component_ids:
            weights[(doc_id, page)][cid] += max(score, 0.0)

    for scored in evidence.chunks:
        add(scored.chunk.doc_id, scored.chunk.page, scored.chunk.component_ids, scored.score)
    for scored_entity in evidence.entities:
        for mention in scored_entity.entity.mentions:
            add(mention.doc_id, mention.page, mention.component_ids, scored_entity.score)
    for scored_relation in evidence.relations:
        for mention in scored_relation.relation.mentions:
            add(mention.doc_id, mention.page, mention.component_ids, scored_relation.score)
    return weights


def _scaled(values: dict[str, float]) -> dict[str, float]:
    top = max(values.values(), default=0.0)
    return {k: v / top for k, v in values.items()} if top > 0 else {k: 0.0 for k in values}


def term_share(query_terms: set[str], text: str) -> float:
    """The share of ``query_terms`` found among the words of ``text`` (0 when no terms)."""
    if not query_terms:
        return 0.0
    return len(query_terms & set(tokenize(text))) / len(query_terms)


def best_regions(page: Page, query: str, weights: dict[str, float], limit: int) -> list[tuple[Component, float]]:
    """Up to ``limit`` regions of ``page`` with their scores in [0, 1], best first."""
    candidates = [c for c in page.components if not c.furniture and c.content.strip()]
    if not candidates or limit < 1:
        return []
    terms = set(tokenize(query))
    evidence = _scaled({c.id: weights.get(c.id, 0.0) for c in candidates})
    lexical = _scaled({c.id: term_share(terms, c.content) for c in candidates})
    scored = [(c, (evidence[c.id] + lexical[c.id]) / 2) for c in candidates]
    scored.sort(key=lambda pair: (-pair[1], pair[0].order))
    return scored[:limit]
