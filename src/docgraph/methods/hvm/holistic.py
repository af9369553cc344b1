"""The cross-modal holistic view M, the fact index I_fac, conflict groups and resolutions.

Pure logic, no I/O and no models (METHODS.md, HVM build step 3):

- ``HolisticView`` holds M (accepted facts of one document, by id) and the entity table
  (name, concept φ(e), chunks the entity was extracted from). The fact index is derived:
  ``I_fac(e)`` = the chunks e was extracted from ∪ the provenance of the facts of M that
  have e as head or tail. An entity with neither is not part of the view any more.
  Every change is recorded so the caller can persist exactly what changed (``take_diff``).
- ``register_extraction`` turns one chunk's extraction into new facts F_i (ids
  ``<chunk id>#f<n>``) and records the chunk as a mention of its entities.
- ``merge_duplicates`` folds exact duplicates (same head, relation, tail, qualifier) of
  F_i into the fact of M they repeat (provenance merged); no model needed for those.
- ``candidate_groups``: for each new fact f, the facts of F⁺ = F_i ∪ M sharing its
  (head, relation), its (head, tail), or its head; each distinct group with more than
  one fact. Members are ordered new facts first, then existing facts sharing the
  relation or tail of a new member, then the most recent; ``bounded`` cuts a group to
  the size sent to a model.
- ``apply_resolution`` applies a resolver's per-fact decisions (keep / discard / modify
  with a time or scope / merge into another fact of the group) to the view; new facts
  outside confirmed groups go straight into M.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from .extraction import EntityInfo, Extraction, Fact, concept_name, entity_key, relation_name

KeyKind = Literal["hr", "ht", "h"]
KEY_KINDS: tuple[KeyKind, ...] = ("hr", "ht", "h")
GENERIC_CONCEPT = "thing"


def fact_key(fact: Fact, kind: KeyKind) -> tuple[str, ...]:
    """The grouping key of a fact: (head, relation), (head, tail) or (head,)."""
    if kind == "hr":
        return (fact.head, fact.relation)
    if kind == "ht":
        return (fact.head, fact.tail)
    return (fact.head,)


@dataclass
class ViewDiff:
    """What changed since the last ``take_diff``: facts to write, facts to delete, entities to write/delete."""

    facts: dict[str, Fact] = field(default_factory=dict)
    deleted_facts: set[str] = field(default_factory=set)
    entities: dict[str, EntityInfo] = field(default_factory=dict)
    deleted_entities: set[str] = field(default_factory=set)


class HolisticView:
    """M and the entity table of one document (see the module docstring)."""

    def __init__(self, facts: Iterable[Fact] = (), entities: Iterable[EntityInfo] = ()):
        self.facts: dict[str, Fact] = {}
        self.entities: dict[str, EntityInfo] = {e.key: e for e in entities}
        self._by_entity: dict[str, dict[str, None]] = {}
        self._by_head: dict[str, dict[str, None]] = {}
        self._identity: dict[tuple[str, str, str, str], str] = {}
        self._changed: set[str] = set()
        self._deleted: set[str] = set()
        self._touched: set[str] = set()
        for fact in facts:
            self._index(fact)
        self._changed.clear()
        self._touched.clear()

    # ----------------------------------------------------------------- facts
    def _index(self, fact: Fact) -> None:
        self.facts[fact.id] = fact
        for key in {fact.head, fact.tail}:
            self._by_entity.setdefault(key, {})[fact.id] = None
        self._by_head.setdefault(fact.head, {})[fact.id] = None
        self._identity.setdefault(fact.identity, fact.id)
        self._changed.add(fact.id)
        self._deleted.discard(fact.id)
        self._touched.update((fact.head, fact.tail))

    def _unindex(self, fact_id: str) -> Fact | None:
        fact = self.facts.pop(fact_id, None)
        if fact is None:
            return None
        for key in {fact.head, fact.tail}:
            self._by_entity.get(key, {}).pop(fact_id, None)
        self._by_head.get(fact.head, {}).pop(fact_id, None)
        if self._identity.get(fact.identity) == fact_id:
            del self._identity[fact.identity]
        self._changed.discard(fact_id)
        self._deleted.add(fact_id)
        self._touched.update((fact.head, fact.tail))
        return fact

    def add(self, fact: Fact) -> None:
        """Put a fact into M (replacing one with the same id)."""
        self._unindex(fact.id)
        self._deleted.discard(fact.id)
        self._index(fact)

    def remove(self, fact_id: str) -> Fact | None:
        return self._unindex(fact_id)

    def replace(self, fact: Fact) -> None:
        self.add(fact)

    def duplicate_of(self, fact: Fact) -> str | None:
        """Id of a fact of M that ``fact`` exactly repeats (another id, same identity)."""
        found = self._identity.get(fact.identity)
        return found if found != fact.id else None

    def facts_about(self, entity: str) -> list[Fact]:
        """Facts of M with ``entity`` as head or tail, oldest first."""
        return [self.facts[i] for i in self._by_entity.get(entity, {})]

    def facts_with_head(self, head: str) -> list[Fact]:
        return [self.facts[i] for i in self._by_head.get(head, {})]

    # ----------------------------------------------------------------- entities and I_fac
    def mention(self, key: str, name: str, concept: str, chunk_id: str | None, description: str = "") -> None:
        """Record an entity (φ is decided by its first non-generic concept) and, if given, a chunk mentioning it."""
        info = self.entities.get(key)
        if info is None:
            info = EntityInfo(key=key, name=name, concept=concept or GENERIC_CONCEPT, description=description)
            self.entities[key] = info
        elif info.concept == GENERIC_CONCEPT and concept and concept != GENERIC_CONCEPT:
            info.concept = concept
        if description and not info.description:
            info.description = description
        if chunk_id is not None and chunk_id not in info.mentions:
            info.mentions.append(chunk_id)
        self._touched.add(key)

    def support(self, entity: str) -> list[str]:
        """I_fac(e): chunks e was extracted from, then the provenance of M's facts about e (no repeats)."""
        info = self.entities.get(entity)
        out = dict.fromkeys(info.mentions if info else [])
        for fact in self.facts_about(entity):
            out.update(dict.fromkeys(fact.chunks))
        return list(out)

    def live_entities(self) -> dict[str, EntityInfo]:
        """V_ent: entities with a mention or a fact in M."""
        return {k: e for k, e in self.entities.items() if e.mentions or self._by_entity.get(k)}

    def take_diff(self) -> ViewDiff:
        """Changes since the previous call (entities without mentions or facts are reported deleted)."""
        diff = ViewDiff(
            facts={i: self.facts[i] for i in self._changed if i in self.facts}, deleted_facts=set(self._deleted)
        )
        for key in self._touched:
            info = self.entities.get(key)
            if info is not None and (info.mentions or self._by_entity.get(key)):
                diff.entities[key] = info
            else:
                diff.deleted_entities.add(key)
                self.entities.pop(key, None)
        self._changed.clear()
        self._deleted.clear()
        self._touched.clear()
        return diff


# --------------------------------------------------------------------- new facts of a chunk
def register_extraction(view: HolisticView, chunk_id: str, extraction: Extraction) -> list[Fact]:
    """F_i of one chunk: its facts as ``Fact`` objects, with the chunk recorded as a mention of
    its entities (fact endpoints that are not in the entity list get an entry, no mention).
    Facts with an empty or self-referencing endpoint are dropped; repeats within the chunk too."""
    for entity in extraction.entities:
        key = entity_key(entity.name)
        if key:
            view.mention(key, entity.name.strip(), concept_name(entity.concept), chunk_id, entity.description)
    out: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    for fact in extraction.facts:
        head, tail = entity_key(fact.head), entity_key(fact.tail)
        if not head or not tail or head == tail:
            continue
        relation = relation_name(fact.relation)
        if (head, relation, tail) in seen:
            continue
        seen.add((head, relation, tail))
        for key, name, concept in ((head, fact.head, fact.head_concept), (tail, fact.tail, fact.tail_concept)):
            view.mention(key, name.strip(), concept_name(concept) if concept else "", None)
        out.append(Fact(id=f"{chunk_id}#f{len(out) + 1}", head=head, relation=relation, tail=tail, chunks=[chunk_id]))
    return out


def merge_duplicates(view: HolisticView, new_facts: Sequence[Fact]) -> tuple[list[Fact], dict[str, str]]:
    """Fold new facts that exactly repeat a fact of M into it (provenance merged, M updated).

    Returns the remaining new facts and ``{new id: id of the fact of M it merged into}``."""
    fresh: list[Fact] = []
    merged: dict[str, str] = {}
    for fact in new_facts:
        target = view.duplicate_of(fact)
        if target is None:
            fresh.append(fact)
            continue
        old = view.facts[target]
        view.replace(old.model_copy(update={"chunks": list(dict.fromkeys(old.chunks + fact.chunks))}))
        merged[fact.id] = target
    return fresh, merged


# --------------------------------------------------------------------- candidate conflict groups
@dataclass(frozen=True)
class CandidateGroup:
    """Facts of F⁺ sharing a key with a new fact. ``fact_ids`` are ordered (see module docstring);
    ``omitted`` counts the facts ``bounded`` left out."""

    kind: KeyKind
    key: tuple[str, ...]
    fact_ids: tuple[str, ...]
    new_ids: tuple[str, ...]
    omitted: int = 0

    def __len__(self) -> int:
        return len(self.fact_ids)


def candidate_groups(view: HolisticView, new_facts: Sequence[Fact]) -> list[CandidateGroup]:
    """F_conf: the distinct groups g_k(f), k ∈ {hr, ht, h}, f ∈ F_i, with |g| > 1 (in first-seen order)."""
    new_by_head: dict[str, list[Fact]] = {}
    for fact in new_facts:
        new_by_head.setdefault(fact.head, []).append(fact)
    out: list[CandidateGroup] = []
    seen: set[frozenset[str]] = set()
    for fact in new_facts:
        pool_new = new_by_head[fact.head]
        pool_old = [f for f in view.facts_with_head(fact.head) if f.id not in {n.id for n in pool_new}]
        for kind in KEY_KINDS:
            key = fact_key(fact, kind)
            new_members = [f for f in pool_new if fact_key(f, kind) == key]
            old_members = [f for f in pool_old if fact_key(f, kind) == key]
            ids = frozenset(f.id for f in new_members + old_members)
            if len(ids) < 2 or ids in seen:
                continue
            seen.add(ids)
            relations = {f.relation for f in new_members}
            tails = {f.tail for f in new_members}
            recency = {f.id: i for i, f in enumerate(old_members)}
            old_sorted = sorted(
                old_members, key=lambda f: (f.relation in relations, f.tail in tails, recency[f.id]), reverse=True
            )
            out.append(
                CandidateGroup(
                    kind=kind,
                    key=key,
                    fact_ids=tuple(f.id for f in new_members + old_sorted),
                    new_ids=tuple(f.id for f in new_members),
                )
            )
    return out


def bounded(group: CandidateGroup, max_size: int) -> CandidateGroup:
    """The group cut to its first ``max_size`` facts (at least two are always kept; 0 = no cut)."""
    size = max(2, max_size)
    if max_size <= 0 or len(group.fact_ids) <= size:
        return group
    kept = group.fact_ids[:size]
    return replace(
        group,
        fact_ids=kept,
        new_ids=tuple(i for i in group.new_ids if i in kept),
        omitted=group.omitted + len(group.fact_ids) - size,
    )


def group_entities(group: CandidateGroup, facts: dict[str, Fact]) -> list[str]:
    """Z_g: the heads and tails of the group's facts (first-seen order)."""
    out: dict[str, None] = {}
    for fact_id in group.fact_ids:
        fact = facts[fact_id]
        out[fact.head] = None
        out[fact.tail] = None
    return list(out)


def group_support(view: HolisticView, group: CandidateGroup, facts: dict[str, Fact]) -> list[str]:
    """B_g = ∪ I_fac(e), e ∈ Z_g; the group's own provenance first, then the rest."""
    out: dict[str, None] = {}
    for fact_id in group.fact_ids:
        out.update(dict.fromkeys(facts[fact_id].chunks))
    for entity in group_entities(group, facts):
        out.update(dict.fromkeys(view.support(entity)))
    return list(out)


# --------------------------------------------------------------------- resolutions
Action = Literal["keep", "discard", "modify", "merge"]
ACTIONS: dict[str, Action] = {name: name for name in get_args(Action)}  # a reply's word -> its action


@dataclass(frozen=True)
class ConfirmedGroup:
    """A candidate group the detector confirmed, with its conflict type and conflicting pairs."""

    group: CandidateGroup
    type: str
    pairs: tuple[tuple[str, str], ...] = ()
    explanation: str = ""


@dataclass(frozen=True)
class Decision:
    fact_id: str
    action: Action
    relation: str = ""
    qualifier: str = ""
    into: str = ""
    reason: str = ""


@dataclass
class Resolution:
    """The resolver's answer: decisions per fact, indices of confirmed groups it left unresolved
    (and, per group index, how many chunks of B_g it was not shown)."""

    decisions: list[Decision] = field(default_factory=list)
    unresolved: set[int] = field(default_factory=set)
    summary: str = ""
    support_omitted: dict[int, int] = field(default_factory=dict)  # group index → B_g chunks not shown


@dataclass
class ApplyReport:
    added: int = 0
    kept: int = 0
    discarded: int = 0
    modified: int = 0
    merged: int = 0
    unresolved: int = 0
    ignored: list[str] = field(default_factory=list)


def apply_resolution(
    view: HolisticView, new_facts: Sequence[Fact], confirmed: Sequence[ConfirmedGroup], resolution: Resolution
) -> ApplyReport:
    """Update M with a chunk's new facts under the resolver's decisions (see module docstring).

    Only facts inside confirmed groups can be decided on; other decisions are ignored and
    reported. A fact of a confirmed group without a decision is kept. A merge moves the
    fact's provenance into a surviving fact of the same group (a merge into a discarded
    fact discards). Facts of groups left unresolved that survive are marked ``unresolved``.
    """
    report = ApplyReport()
    facts: dict[str, Fact] = dict(view.facts)
    facts.update({f.id: f for f in new_facts})
    new_ids = {f.id for f in new_facts}
    in_group: dict[str, list[int]] = {}
    for index, conf in enumerate(confirmed):
        for fact_id in conf.group.fact_ids:
            in_group.setdefault(fact_id, []).append(index)

    decisions: dict[str, Decision] = {}
    for decision in resolution.decisions:
        if decision.fact_id not in in_group:
            report.ignored.append(f"{decision.fact_id}: not in a confirmed group")
        elif decision.fact_id in decisions:
            report.ignored.append(f"{decision.fact_id}: second decision")
        elif decision.action == "merge" and (
            decision.into == decision.fact_id
            or not set(in_group.get(decision.into, ())) & set(in_group[decision.fact_id])
        ):
            report.ignored.append(f"{decision.fact_id}: merge target {decision.into or '(none)'} not in its group")
        elif decision.action == "modify" and not (decision.relation.strip() or decision.qualifier.strip()):
            report.ignored.append(f"{decision.fact_id}: modify without a relation or qualifier")
        else:
            decisions[decision.fact_id] = decision

    def final_target(fact_id: str) -> str | None:
        seen: set[str] = set()
        while fact_id not in seen:
            seen.add(fact_id)
            decision = decisions.get(fact_id)
            if decision is None or decision.action in ("keep", "modify"):
                return fact_id
            if decision.action == "discard":
                return None
            fact_id = decision.into
        return None  # a merge cycle: nothing survives it

    survivors: dict[str, Fact] = {}
    for fact_id in in_group:
        chosen = decisions.get(fact_id)
        fact = facts[fact_id]
        action = chosen.action if chosen else "keep"
        types = {confirmed[i].type for i in in_group[fact_id]}
        note = chosen.reason if chosen else "kept (no decision given)"
        if action == "discard" or (action == "merge" and final_target(fact_id) is None):
            report.discarded += 1
            continue
        if action == "merge":
            report.merged += 1
            continue
        if chosen is not None and action == "modify":
            update = {"qualifier": chosen.qualifier.strip() or fact.qualifier}
            if chosen.relation.strip():
                update["relation"] = relation_name(chosen.relation)
            fact = fact.model_copy(update=update)
            report.modified += 1
        else:
            report.kept += 1
        survivors[fact_id] = fact.model_copy(update={"conflict": "/".join(sorted(types)), "note": note})

    for fact_id, decision in decisions.items():
        if decision.action == "merge" and (target := final_target(fact_id)) is not None:
            base = survivors[target]
            survivors[target] = base.model_copy(
                update={"chunks": list(dict.fromkeys(base.chunks + facts[fact_id].chunks))}
            )

    for fact_id, fact in survivors.items():
        if any(i in resolution.unresolved for i in in_group[fact_id]):
            fact = fact.model_copy(update={"status": "unresolved"})
            report.unresolved += 1
        survivors[fact_id] = fact

    for fact_id in in_group:
        if fact_id not in new_ids and fact_id not in survivors:
            view.remove(fact_id)
    ordered = [f for i, f in survivors.items() if i not in new_ids]
    ordered += [survivors.get(f.id, f) for f in new_facts if f.id not in in_group or f.id in survivors]
    for final in ordered:
        view.remove(final.id)  # the old version must not count as its own duplicate
        duplicate = view.duplicate_of(final)
        if duplicate is not None:  # a modified fact that now repeats another one merges into it
            old = view.facts[duplicate]
            view.replace(old.model_copy(update={"chunks": list(dict.fromkeys(old.chunks + final.chunks))}))
            report.merged += 1
            continue
        view.add(final)
        if final.id not in in_group:
            report.added += 1
    return report
