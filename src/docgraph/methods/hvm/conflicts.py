"""Conflict detection and resolution over the holistic view: a model pair and an offline pair.

Contracts:
- ``Detector.detect(view, new_facts, groups)`` → the confirmed groups (a subset of the
  candidate groups, bounded to ``max_group_size`` facts), each with a type among
  mutual / temporal / granularity (offline: ``undetermined``) and its conflicting pairs.
- ``Resolver.resolve(view, new_facts, confirmed, current, chunks)`` → a ``Resolution``
  (decisions per fact id, indices of confirmed groups left unresolved) that
  ``holistic.apply_resolution`` applies.

The model detector and resolver prompt with ``detect_conflicts.md`` / ``resolve_conflicts.md``
(at most ``GROUPS_PER_CALL`` groups per call; facts numbered F1…, groups G1…, supporting
chunks S1…; the resolver sees B_g and the current chunk). What is cut is cut only where a
setting says so, and counted (``truncated``, a Counter per detector/resolver; the build
adds them up): a group beyond ``hvm.max_group_size`` facts (``groups_cut``,
``group_facts_omitted``), B_g beyond ``hvm.support_per_group`` chunks (``support_groups_cut``,
``support_chunks_omitted``; per group in ``Resolution.support_omitted``), and chunk texts
beyond ``hvm.support_chars`` characters, twice that for the current chunk
(``texts_cut``); 0 turns a cut off. The offline pair is honest about what rules can settle: it confirms only
groups sharing head and relation with different tails; tails that are the same value
written differently merge; genuinely different tails are all kept with their provenance,
and the group is left unresolved.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from ...config import HVMSettings
from ...models.base import ChatModel, user
from ...models.chat.response_format import json_schema_format
from ...prompts import material, render_prompt
from ...types import Chunk
from .extraction import CONFLICT_TYPES, Fact
from .holistic import (
    ACTIONS,
    CandidateGroup,
    ConfirmedGroup,
    Decision,
    HolisticView,
    Resolution,
    bounded,
    group_support,
)

GROUPS_PER_CALL = 10
STAGE_DETECT = "hvm.detect"
STAGE_RESOLVE = "hvm.resolve"


@dataclass(frozen=True)
class SupportLimits:
    """How much of B_g the resolver is shown (0 = no cut): chunks per group, characters per
    chunk (twice that for the current chunk)."""

    per_group: int = 4
    chars: int = 1200

    @classmethod
    def of(cls, settings: HVMSettings) -> SupportLimits:
        return cls(per_group=settings.support_per_group, chars=settings.support_chars)


def _cut(text: str, limit: int, truncated: Counter) -> str:
    if limit and len(text) > limit:
        truncated["texts_cut"] += 1
        return text[:limit]
    return text


def add_truncation(total: dict[str, int], *parts: object) -> None:
    """Add the ``truncated`` counts of detectors/resolvers (the offline ones cut nothing) to ``total``."""
    for part in parts:
        for key, value in (getattr(part, "truncated", None) or {}).items():
            total[key] = total.get(key, 0) + value


class Detector(Protocol):
    name: str

    def detect(
        self, view: HolisticView, new_facts: Sequence[Fact], groups: Sequence[CandidateGroup]
    ) -> list[ConfirmedGroup]: ...


class Resolver(Protocol):
    name: str

    def resolve(
        self,
        view: HolisticView,
        new_facts: Sequence[Fact],
        confirmed: Sequence[ConfirmedGroup],
        current: Chunk,
        chunks: Mapping[str, Chunk],
    ) -> Resolution: ...


# --------------------------------------------------------------------- model replies
class DetectedGroup(BaseModel):
    group: str
    conflict: bool = False
    type: str = ""
    pairs: list[list[str]] = Field(default_factory=list)
    explanation: str = ""


class DetectionReply(BaseModel):
    groups: list[DetectedGroup] = Field(default_factory=list)


class FactDecision(BaseModel):
    fact: str
    action: str = "keep"
    relation: str = ""
    qualifier: str = ""
    into: str = ""
    reason: str = ""


class ResolutionReply(BaseModel):
    decisions: list[FactDecision] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)
    summary: str = ""


def _label(text: str) -> str:
    return re.sub(r"\s+", "", text).upper()


class _Numbering:
    """F-labels for facts and the lines that show them, for one prompt."""

    def __init__(
        self,
        view: HolisticView,
        new_ids: set[str],
        facts: Mapping[str, Fact],
        chunks: Mapping[str, Chunk] | None = None,
    ):
        self.view, self.new_ids, self.facts, self.chunks = view, new_ids, facts, chunks or {}
        self.label_of: dict[str, str] = {}
        self.id_of: dict[str, str] = {}

    def label(self, fact_id: str) -> str:
        if fact_id not in self.label_of:
            label = f"F{len(self.label_of) + 1}"
            self.label_of[fact_id], self.id_of[label] = label, fact_id
        return self.label_of[fact_id]

    def _name(self, key: str) -> str:
        info = self.view.entities.get(key)
        return f"{info.name} [{info.concept}]" if info else key

    def line(self, fact_id: str) -> str:
        fact = self.facts[fact_id]
        pages = sorted({self.chunks[c].page for c in fact.chunks if c in self.chunks})
        where = (
            "new"
            if fact_id in self.new_ids
            else (f"accepted, page {', '.join(map(str, pages))}" if pages else "accepted")
        )
        scope = f" ({fact.qualifier})" if fact.qualifier else ""
        return (
            f"  {self.label(fact_id)}: ({self._name(fact.head)}, {fact.relation}{scope}, "
            f"{self._name(fact.tail)})  [{where}]"
        )

    def fact_id(self, label: str) -> str | None:
        return self.id_of.get(_label(label))


_KIND_TEXT = {"hr": "same head and relation", "ht": "same head and tail", "h": "same head"}


def _batches(items: Sequence, size: int) -> list[Sequence]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class ModelDetector:
    """The detector of the paper: the build model confirms groups and names their conflict type."""

    name = "model"

    def __init__(self, chat: ChatModel, max_group_size: int, context: str = ""):
        self.chat, self.max_group_size, self.context = chat, max_group_size, context
        self.truncated: Counter = Counter()

    def detect(
        self, view: HolisticView, new_facts: Sequence[Fact], groups: Sequence[CandidateGroup]
    ) -> list[ConfirmedGroup]:
        facts = {**view.facts, **{f.id: f for f in new_facts}}
        new_ids = {f.id for f in new_facts}
        out: list[ConfirmedGroup] = []
        shown = [bounded(g, self.max_group_size) for g in groups]
        for before, after in zip(groups, shown):
            if after.omitted > before.omitted:
                self.truncated["groups_cut"] += 1
                self.truncated["group_facts_omitted"] += after.omitted - before.omitted
        for batch in _batches(shown, GROUPS_PER_CALL):
            numbering = _Numbering(view, new_ids, facts)
            blocks = []
            for index, group in enumerate(batch, 1):
                lines = [numbering.line(i) for i in group.fact_ids]
                blocks.append(f"G{index} ({_KIND_TEXT[group.kind]}):\n" + "\n".join(lines))
            prompt = render_prompt(
                __package__,
                "detect_conflicts.md",
                context=material(self.context or "(none)"),
                groups=material("\n\n".join(blocks)),
            )
            bound = json_schema_format(DetectionReply, max_items={"groups": len(batch)})
            reply = self.chat.complete(
                [user(prompt)], stage=STAGE_DETECT, schema=DetectionReply, response_format=bound
            ).parsed
            assert isinstance(reply, DetectionReply)
            for item in reply.groups:
                match = re.fullmatch(r"G(\d+)", _label(item.group))
                if not item.conflict or not match or not 1 <= int(match.group(1)) <= len(batch):
                    continue
                group = batch[int(match.group(1)) - 1]
                kind = item.type.strip().lower()
                pairs = tuple(
                    (a, b)
                    for pair in item.pairs
                    if len(pair) == 2
                    for a, b in [(numbering.fact_id(pair[0]), numbering.fact_id(pair[1]))]
                    if a is not None and b is not None and a in group.fact_ids and b in group.fact_ids
                )
                out.append(
                    ConfirmedGroup(
                        group=group,
                        type=kind if kind in CONFLICT_TYPES else "undetermined",
                        pairs=pairs,
                        explanation=item.explanation.strip(),
                    )
                )
        return out


class ModelResolver:
    """The resolver of the paper: decisions from the groups, their supporting chunks and the current chunk."""

    name = "model"

    def __init__(self, chat: ChatModel, context: str = "", limits: SupportLimits = SupportLimits()):
        self.chat, self.context, self.limits = chat, context, limits
        self.truncated: Counter = Counter()

    def resolve(
        self,
        view: HolisticView,
        new_facts: Sequence[Fact],
        confirmed: Sequence[ConfirmedGroup],
        current: Chunk,
        chunks: Mapping[str, Chunk],
    ) -> Resolution:
        facts = {**view.facts, **{f.id: f for f in new_facts}}
        new_ids = {f.id for f in new_facts}
        resolution = Resolution()
        summaries = []
        for start in range(0, len(confirmed), GROUPS_PER_CALL):
            batch = confirmed[start : start + GROUPS_PER_CALL]
            numbering = _Numbering(view, new_ids, facts, chunks)
            support_ids: dict[str, str] = {}
            blocks = []
            for index, conf in enumerate(batch, 1):
                support = [c for c in group_support(view, conf.group, facts) if c in chunks and c != current.id]
                shown = support[: self.limits.per_group] if self.limits.per_group else support
                if len(shown) < len(support):
                    self.truncated["support_groups_cut"] += 1
                    self.truncated["support_chunks_omitted"] += len(support) - len(shown)
                    resolution.support_omitted[start + index - 1] = len(support) - len(shown)
                refs = []
                for chunk_id in shown:
                    support_ids.setdefault(chunk_id, f"S{len(support_ids) + 1}")
                    refs.append(support_ids[chunk_id])
                lines = [numbering.line(i) for i in conf.group.fact_ids]
                pairs = ", ".join(f"{numbering.label(a)}–{numbering.label(b)}" for a, b in conf.pairs)
                blocks.append(
                    f"G{index} — {conf.type} conflict{f' between {pairs}' if pairs else ''}: "
                    f"{conf.explanation or '(no explanation)'}\n"
                    + "\n".join(lines)
                    + f"\n  supporting chunks: {', '.join(refs) or '(only the current chunk)'}"
                )
            support_text = (
                "\n\n".join(
                    f"{label} (page {chunks[cid].page}, {chunks[cid].modality}):\n"
                    f"{_cut(chunks[cid].text, self.limits.chars, self.truncated)}"
                    for cid, label in support_ids.items()
                )
                or "(none besides the current chunk)"
            )
            prompt = render_prompt(
                __package__,
                "resolve_conflicts.md",
                groups=material("\n\n".join(blocks)),
                support=material(support_text),
                context=material(self.context or f"page {current.page}"),
                current=material(_cut(current.text, self.limits.chars * 2, self.truncated)),
            )
            facts_shown = sum(len(conf.group.fact_ids) for conf in batch)
            bound = json_schema_format(
                ResolutionReply, max_items={"decisions": max(1, facts_shown), "unresolved": max(1, facts_shown)}
            )
            reply = self.chat.complete(
                [user(prompt)], stage=STAGE_RESOLVE, schema=ResolutionReply, response_format=bound
            ).parsed
            assert isinstance(reply, ResolutionReply)
            for item in reply.decisions:
                fact_id = numbering.fact_id(item.fact)
                action = ACTIONS.get(item.action.strip().lower())
                if fact_id is None or action is None:
                    continue
                resolution.decisions.append(
                    Decision(
                        fact_id=fact_id,
                        action=action,
                        relation=item.relation,
                        qualifier=item.qualifier,
                        into=numbering.fact_id(item.into) or "" if item.into else "",
                        reason=item.reason.strip(),
                    )
                )
            for label in reply.unresolved:
                match = re.fullmatch(r"G(\d+)", _label(label))
                if match and 1 <= int(match.group(1)) <= len(batch):
                    resolution.unresolved.add(start + int(match.group(1)) - 1)
            if reply.summary.strip():
                summaries.append(reply.summary.strip())
        resolution.summary = " ".join(summaries)
        return resolution


# --------------------------------------------------------------------- offline rules
def _value_form(text: str) -> str:
    """A tail's comparable form: letters and digits only (``"1,200"`` ≡ ``"1200"``, ``"U.N."`` ≡ ``"UN"``)."""
    return re.sub(r"[\W_]+", "", text.lower())


class OfflineDetector:
    """Confirms only (head, relation) groups whose tails differ; other groups are complementary facts."""

    name = "offline"

    def detect(
        self, view: HolisticView, new_facts: Sequence[Fact], groups: Sequence[CandidateGroup]
    ) -> list[ConfirmedGroup]:
        facts = {**view.facts, **{f.id: f for f in new_facts}}
        out = []
        for group in groups:
            if group.kind != "hr":
                continue
            members = [facts[i] for i in group.fact_ids]
            pairs = tuple(
                (a.id, b.id)
                for a in members
                if a.id in group.new_ids
                for b in members
                if b.id != a.id and (b.tail, b.qualifier) != (a.tail, a.qualifier)
            )
            if pairs:
                out.append(
                    ConfirmedGroup(
                        group=group,
                        type="undetermined",
                        pairs=pairs,
                        explanation="same head and relation, different tails",
                    )
                )
        return out


class OfflineResolver:
    """Merges tails that are the same value written differently; leaves real disagreements unresolved."""

    name = "offline"

    def resolve(
        self,
        view: HolisticView,
        new_facts: Sequence[Fact],
        confirmed: Sequence[ConfirmedGroup],
        current: Chunk,
        chunks: Mapping[str, Chunk],
    ) -> Resolution:
        facts = {**view.facts, **{f.id: f for f in new_facts}}
        new_ids = {f.id for f in new_facts}
        resolution = Resolution()
        decided: set[str] = set()
        for index, conf in enumerate(confirmed):
            by_value: dict[tuple[str, str], list[str]] = {}
            for fact_id in conf.group.fact_ids:
                fact = facts[fact_id]
                by_value.setdefault((_value_form(fact.tail), fact.qualifier.lower()), []).append(fact_id)
            for same in by_value.values():
                target = next((i for i in same if i not in new_ids), same[0])
                for fact_id in same:
                    if fact_id != target and fact_id not in decided:
                        decided.add(fact_id)
                        resolution.decisions.append(
                            Decision(
                                fact_id=fact_id,
                                action="merge",
                                into=target,
                                reason="same value written differently (offline rule)",
                            )
                        )
            if len(by_value) > 1:
                resolution.unresolved.add(index)
                for same in by_value.values():
                    for fact_id in same:
                        if fact_id not in decided:
                            decided.add(fact_id)
                            resolution.decisions.append(
                                Decision(
                                    fact_id=fact_id,
                                    action="keep",
                                    reason="offline rules cannot tell a contradiction from complementary "
                                    "facts; all kept with their sources",
                                )
                            )
        resolution.summary = f"offline rules: {len(resolution.unresolved)} group(s) left unresolved"
        return resolution
