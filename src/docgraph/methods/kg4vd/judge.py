"""The cross-page judge: is a pair of entities from different pages the ``same`` entity,
``related``, or ``unrelated``?

``OfflineJudge`` (no model), deterministic:
- ``same`` when the two share a normalised name or alias and a modality (structural
  entities — headings — and visual entities only within one document, where a repeated
  name means the same heading or figure), or when they have the same type (not a
  structural one: "Contributing Authors" is not the section "About the Authors", nor a
  value — a date or number is the same only by its exact name: "year" is neither
  "two-year" nor "four-year"), their embeddings' cosine reaches ``same_threshold`` and one
  name's content words all occur in the other, the shorter being a proper name ("Lynch" /
  "Ryan J. Lynch"; a common noun inside a longer phrase names a narrower thing: "network"
  is not "neural network");
- ``related`` when the cosine reaches ``related_threshold`` and the two share lexical
  evidence: half the content words of the shorter name occur in the other name, or one's
  name appears in the other's description (the offline embedder's cosines are
  compressed — most top-10 candidate pairs score above 0.8 — so similarity alone would
  link nearly everything); at most ``MAX_RELATED`` per anchor entity, the most similar
  first (the rest are ``unrelated``), which keeps the cross-page edges to a few per
  entity where a name recurs on every page of a document;
- ``unrelated`` otherwise.

Which candidates a judge sees is its ``candidate_policy``: the offline judge's sets are
unchanged since its rules were tuned — each unordered pair judged once, no similarity
floor; the model judge, as the paper specifies, judges every entity against its own top
``cross_page_top_k`` candidates, less those under ``min_similarity`` (a calibrated cosine,
``scoring.calibrated_cut``; 0 sends every top-k candidate) unless they share a name
(``crosspage.candidate_pairs``; a pool too small to calibrate on is judged in full).

``ModelJudge`` asks the build model (prompt ``prompts/judge.md``) about one entity and
its candidates at once, with the crops of visual entities as images (at most
``max_images``, the build endpoint's limit; the others are judged by their description);
a candidate the
reply does not label is ``unrelated``, and so are all candidates of a reply that stays
unparseable after the model layer's repair and re-ask (logged; counted as a failure).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from ...errors import ModelOutputError
from ...graph.bridges import NON_BRIDGING_TYPES
from ...models.base import ChatModel, ImagePart, user
from ...models.chat.response_format import json_schema_format
from ...prompts import material, render_prompt
from ...text import tokenize
from ...types import Entity, Usage

log = logging.getLogger(__name__)
MAX_RELATED = 3  # offline: 'related' verdicts per anchor entity, most similar first
Label = Literal["same", "related", "unrelated"]
_ARTICLE = re.compile(r"^(the|a|an)\s+")


@dataclass(frozen=True)
class JudgeItem:
    """An entity offered to the judge, with the crop of its region for visual entities."""

    id: str
    entity: Entity
    crop: Path | None = None


@dataclass(frozen=True)
class Verdict:
    label: Label
    reason: str = ""


class Judge(Protocol):
    name: str
    pair_once: bool  # each unordered pair judged once (else every entity gets its own top-k)
    min_similarity: float | None  # calibrated cosine floor for a candidate (None: no floor)

    def judge(self, anchor: JudgeItem, candidates: Sequence[tuple[JudgeItem, float]]) -> tuple[list[Verdict], Usage]:
        """One verdict per candidate (aligned); each candidate comes with its cosine to ``anchor``."""


def candidate_policy(judge: Judge) -> tuple[bool, float | None]:
    """``(pair_once, min_similarity)`` of a judge; one that does not say is judged pair by
    pair without a floor."""
    floor = getattr(judge, "min_similarity", None)
    return bool(getattr(judge, "pair_once", True)), (floor if floor else None)


def normalize_name(name: str) -> str:
    """Casefolded, accents and punctuation removed, leading article dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = re.sub(r"['’]s\b", "", text)
    text = " ".join(re.sub(r"[^\w]+", " ", text).split())
    return _ARTICLE.sub("", text)


def entity_names(entity: Entity) -> set[str]:
    return {n for n in (normalize_name(x) for x in [entity.name, *entity.aliases]) if n}


def name_overlap(a: Entity, b: Entity) -> float:
    """Share of the shorter name's content words (stopwords dropped) found in the other name
    (0 … 1; 1 when one name's words all occur in the other: "Lynch" / "Ryan J. Lynch")."""
    wa, wb = set(tokenize(normalize_name(a.name))), set(tokenize(normalize_name(b.name)))
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


def proper_name(name: str) -> bool:
    """Whether every word of a name that has letters starts with a capital ("Lynch",
    "Ryan J. Lynch", "Mongol Empire"), as names of people, places and organisations do; a
    common-noun phrase ("network", "neural network") is not one."""
    words = [w for w in name.split() if any(ch.isalpha() for ch in w)]
    return bool(words) and all(w.lstrip("\"'(“‘")[:1].isupper() for w in words)


def mentions_other(a: Entity, b: Entity) -> bool:
    """Whether one entity's (normalised) name occurs in the other's description."""

    def inside(x: Entity, y: Entity) -> bool:
        name = normalize_name(x.name)
        return bool(name) and f" {name} " in f" {normalize_name(y.description)} "

    return inside(a, b) or inside(b, a)


def _documents(entity: Entity) -> set[str]:
    return {m.doc_id for m in entity.mentions}


class OfflineJudge:
    """Names, aliases and embedding thresholds (rules in the module docstring). ``RULES``
    is recorded with a build (``build_config``): changing the rules reconnects graphs."""

    name = "offline"
    RULES = 2  # 2: values only by exact name; containment only for proper names
    pair_once = True
    min_similarity: float | None = None

    def __init__(
        self,
        same_threshold: float,
        related_threshold: float,
        structural_types: Sequence[str] = (),
        max_related: int = MAX_RELATED,
    ):
        self.same_threshold = same_threshold
        self.related_threshold = related_threshold
        self.structural_types = frozenset(structural_types)
        self.max_related = max_related

    def verdict(self, a: Entity, b: Entity, similarity: float) -> Verdict:
        if a.modality == b.modality and entity_names(a) & entity_names(b):
            local_only = a.modality == "visual" or a.type in self.structural_types or b.type in self.structural_types
            if not local_only or _documents(a) & _documents(b):
                return Verdict("same", "same name")
        shorter = min(a.name, b.name, key=lambda n: len(n.split()))
        if (
            a.type == b.type
            and a.modality == b.modality
            and a.type not in self.structural_types
            and a.type.lower() not in NON_BRIDGING_TYPES
            and proper_name(shorter)
            and similarity >= self.same_threshold
            and name_overlap(a, b) == 1.0
        ):
            return Verdict("same", "one name contains the other")
        if similarity >= self.related_threshold and (name_overlap(a, b) >= 0.5 or mentions_other(a, b)):
            return Verdict("related")
        return Verdict("unrelated")

    def judge(self, anchor: JudgeItem, candidates: Sequence[tuple[JudgeItem, float]]) -> tuple[list[Verdict], Usage]:
        verdicts, related = [], 0
        for cand, sim in sorted(candidates, key=lambda c: -c[1]):
            verdict = self.verdict(anchor.entity, cand.entity, sim)
            if verdict.label == "related":
                related += 1
                if related > self.max_related:
                    verdict = Verdict("unrelated", "beyond the related cap")
            verdicts.append((cand.id, verdict))
        by_id = dict(verdicts)
        return [by_id[c.id] for c, _ in candidates], Usage()


class JudgeLabel(BaseModel):
    candidate: int = Field(description="the candidate's number in the list")
    label: Label
    reason: str = ""


class JudgeReply(BaseModel):
    labels: list[JudgeLabel] = Field(default_factory=list)


def _describe(entity: Entity) -> str:
    pages = ", ".join(sorted({f"{m.doc_id} p.{m.page}" for m in entity.mentions}))
    aliases = f"; also called {', '.join(entity.aliases)}" if entity.aliases else ""
    description = entity.description or "(no description)"
    return f"{entity.name} [{entity.type}, {entity.modality}]{aliases} — {description} ({pages})"


class ModelJudge:
    """Judges with the build model, one call per anchor entity and its candidates.
    ``RULES`` is recorded with a build (``build_config``): changing it reconnects graphs."""

    name = "model"
    RULES = 2  # 2: every entity against its own top-k candidates, those above the floor
    pair_once = False

    def __init__(self, chat: ChatModel, max_images: int | None = None, min_similarity: float | None = None):
        self.chat = chat
        self.vision = bool(getattr(chat, "supports_vision", True))
        self.max_images = max_images
        self.min_similarity = min_similarity

    def judge(self, anchor: JudgeItem, candidates: Sequence[tuple[JudgeItem, float]]) -> tuple[list[Verdict], Usage]:
        images: list[ImagePart] = []

        def with_image(item: JudgeItem, text: str) -> str:
            room = self.max_images is None or len(images) < self.max_images
            if self.vision and room and item.entity.modality == "visual" and item.crop is not None:
                images.append(ImagePart(path=item.crop))
                return f"{text} [image {len(images)}]"
            return text

        entity = with_image(anchor, _describe(anchor.entity))
        listing = "\n".join(
            with_image(item, f"{n}. {_describe(item.entity)}") for n, (item, _) in enumerate(candidates, start=1)
        )
        prompt = render_prompt(__package__, "judge.md", entity=material(entity), candidates=material(listing))
        try:
            result = self.chat.complete(
                [user(prompt, images)],
                stage="kg4vd.judge",
                schema=JudgeReply,
                response_format=json_schema_format(JudgeReply, max_items={"labels": len(candidates)}),
            )
        except ModelOutputError as exc:  # an unusable reply links nothing; endpoint failures propagate
            log.warning(
                "kg4vd judge: unusable reply for %r, its candidates count as unrelated: %s", anchor.entity.name, exc
            )
            return [Verdict("unrelated", "unusable judge reply")] * len(candidates), Usage(failures=1)
        reply = result.parsed if isinstance(result.parsed, JudgeReply) else JudgeReply()
        by_number = {lab.candidate: Verdict(lab.label, lab.reason) for lab in reply.labels}
        return [
            by_number.get(n, Verdict("unrelated", "not labelled")) for n in range(1, len(candidates) + 1)
        ], result.usage
