"""Retrieval restricted to some of a library's documents (``documents=`` of a method that has
``capabilities.ScopedRetrieval``).

The restriction is made where pages are first scored (``EvidenceLayer.flat``'s ``scope``: the
other documents' pages weigh 0 in every later stage, as routing weights do), so the page
budget fills from the chosen documents however many others the library holds; ``keep_scope``
then drops whatever a graph stage still reached outside them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import InputError
from ...types import Evidence, Mention


def scope_option(value: Any) -> frozenset[str] | None:
    """The ``documents`` option as a set of document ids (None: the whole workspace)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InputError(f"documents must be a list of document ids, got {value!r}")
    ids = frozenset(value)
    if not ids or not all(isinstance(d, str) and d for d in ids):
        raise InputError(f"documents must be a non-empty list of document ids, got {value!r}")
    return ids


def _inside(mentions: list[Mention], scope: frozenset[str]) -> list[Mention] | None:
    """The mentions in ``scope`` (all of none: grounded nowhere); None when every one is outside."""
    kept = [m for m in mentions if m.doc_id in scope]
    return kept if kept or not mentions else None


def keep_scope(evidence: Evidence, scope: frozenset[str] | None) -> Evidence:
    """``evidence`` with only the pages and chunks of documents in ``scope``, and the entities
    and relations mentioned there (or grounded nowhere, as HVM's concepts) with their mentions
    elsewhere dropped, so no later stage cites another document; unchanged without a scope."""
    if scope is None:
        return evidence
    evidence.pages = [p for p in evidence.pages if p.doc_id in scope]
    evidence.chunks = [c for c in evidence.chunks if c.chunk.doc_id in scope]
    entities = []
    for scored in evidence.entities:
        mentions = _inside(scored.entity.mentions, scope)
        if mentions is not None:
            entities.append(
                scored.model_copy(update={"entity": scored.entity.model_copy(update={"mentions": mentions})})
            )
    relations = []
    for scored_relation in evidence.relations:
        mentions = _inside(scored_relation.relation.mentions, scope)
        if mentions is not None:
            relation = scored_relation.relation.model_copy(update={"mentions": mentions})
            relations.append(scored_relation.model_copy(update={"relation": relation}))
    evidence.entities, evidence.relations = entities, relations
    evidence.notes.append(f"restricted to {len(scope)} document(s)")
    return evidence
