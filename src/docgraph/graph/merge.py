"""Merging entities judged the same: canonical ids, redirected and de-duplicated relations.

KG4VD cross-page connection (METHODS.md build step 4): ``same`` pairs are unioned into one
canonical node; relations are redirected to it and duplicate edges removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .unionfind import UnionFind


@dataclass(frozen=True)
class MergedRelation:
    """One relation after merging; ``members`` are the indices of the input relations it stands for."""

    source: str
    target: str
    label: str
    members: tuple[int, ...]


@dataclass
class MergeResult:
    """``canonical`` maps every input entity id to its group's canonical id; ``groups`` maps
    each canonical id to its members (input order); ``relations`` are the kept relations in
    order of first appearance; ``dropped_self_loops`` are input relation indices dropped
    because both ends resolve to one entity."""

    canonical: dict[str, str]
    groups: dict[str, list[str]]
    relations: list[MergedRelation]
    dropped_self_loops: list[int] = field(default_factory=list)

    @property
    def merged_ids(self) -> dict[str, str]:
        """Only the ids that were replaced: non-canonical id → canonical id."""
        return {eid: canon for eid, canon in self.canonical.items() if eid != canon}


def merge_entities(
    entity_ids: Sequence[str],
    same_pairs: Iterable[tuple[str, str]],
    relations: Iterable[tuple[str, str, str]],
    key: Callable[[str], Any] | None = None,
) -> MergeResult:
    """Union the ``same`` pairs, choose a canonical id per group, redirect relations.

    The canonical member of a group is the one with the smallest ``key(id)``, ties (and the
    default) by the smallest id — e.g. ``key=lambda e: -mentions[e]`` picks the most
    mentioned entity. ``relations`` are ``(source, target, label)`` triples; after
    redirection a relation whose source and target are the same entity is dropped (a
    relation of an entity to itself says nothing about the graph, whether merging made it
    so or it came that way), and relations with the same (source, target, label) collapse
    into one, keeping direction. Raises ``ValueError`` when a pair or relation names an id
    that is not in ``entity_ids``. Pure: inputs are not modified.
    """
    known = set(entity_ids)
    uf: UnionFind[str] = UnionFind(entity_ids)
    for a, b in same_pairs:
        for eid in (a, b):
            if eid not in known:
                raise ValueError(f"'same' pair names unknown entity {eid!r}")
        uf.union(a, b)

    rank = (lambda e: (key(e), e)) if key is not None else (lambda e: e)
    canonical: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for members in uf.groups():
        head = min(members, key=rank)
        groups[head] = list(members)
        for member in members:
            canonical[member] = head

    kept: dict[tuple[str, str, str], list[int]] = {}
    dropped: list[int] = []
    for index, (source, target, label) in enumerate(relations):
        for eid in (source, target):
            if eid not in known:
                raise ValueError(f"relation {index} ({source!r} -[{label}]-> {target!r}) names unknown entity {eid!r}")
        src, dst = canonical[source], canonical[target]
        if src == dst:
            dropped.append(index)
            continue
        kept.setdefault((src, dst, label), []).append(index)
    merged = [MergedRelation(s, t, lbl, tuple(idx)) for (s, t, lbl), idx in kept.items()]
    return MergeResult(canonical=canonical, groups=groups, relations=merged, dropped_self_loops=dropped)
