"""What the per-modality extractors share: their input, their protocol, reply schemas, helpers.

``Extractor_m(h_i, x_i)`` of METHODS.md is a ``Strategy``: it takes ``ChunkInput``s of one
modality (the chunk, its structural context h_i, a description — caption or nearby
text — and, for pictures, the crop image) and returns one ``Extraction`` per input, in
order. Model strategies run their chunks concurrently (``run_parallel``); offline
strategies batch the offline NLP. A model reply that stays invalid after the model
layer's repair and re-ask is not dropped silently: with ``hvm.on_model_error = "offline"``
(the default) that chunk falls back to the offline strategy, its extraction marked
strategy ``"offline-fallback"`` with a note saying why; with ``"retry-later"`` it gets a
``ChunkFailed``, as a failing endpoint does. An endpoint that keeps failing
(timeouts, resets, 5xx after the retries) gives that chunk a ``ChunkFailed`` instead of an
extraction: the other chunks' extractions are kept, and the build stops the chunk's
document before it, to resume there on the next build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel, Field

from ...errors import ModelError, ModelOutputError
from ...models.base import ChatModel, ImagePart, TextAnalysis, user
from ...prompts import material, render_prompt
from ...types import Chunk, ComponentKind, Page
from ..building.build_stats import OFFLINE_FALLBACK
from .extraction import ExtractedEntity, ExtractedFact, Extraction, clean_name, is_numeric

T = TypeVar("T")
R = TypeVar("R")
MAX_PHRASES = 25
DESCRIPTION_CHARS = 240

# Readable concepts for spaCy NER labels (the offline φ); numeric labels are values, not concepts.
LABEL_CONCEPTS: dict[str, str] = {
    "PERSON": "person",
    "NORP": "group",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "location",
    "FAC": "facility",
    "PRODUCT": "product",
    "EVENT": "event",
    "WORK_OF_ART": "work",
    "LAW": "law",
    "LANGUAGE": "language",
    "DATE": "date",
    "TIME": "time",
}
VALUE_CONCEPTS: dict[str, str] = {
    "MONEY": "amount",
    "PERCENT": "percentage",
    "QUANTITY": "quantity",
    "CARDINAL": "number",
    "ORDINAL": "rank",
}


@dataclass(frozen=True)
class ChunkInput:
    """One chunk to extract from: ``context`` is h_i, ``description`` the caption/nearby text."""

    chunk: Chunk
    context: str
    description: str = ""
    image: Path | None = None


@dataclass(frozen=True)
class ChunkFailed:
    """A chunk whose model calls failed after the retries: nothing is stored for it."""

    error: str


class Strategy(Protocol):
    """An extractor for one modality."""

    name: str

    def extract(self, items: Sequence[ChunkInput]) -> Sequence[Extraction | ChunkFailed]:
        """One extraction (or, for a model strategy, ``ChunkFailed``) per item, in order."""


class OfflineStrategy(Protocol):
    """An extractor that calls no model, so never fails a chunk: what model strategies fall
    back to, and what the offline table and image strategies hand prose to."""

    name: str

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction]:
        """One extraction per item, in order."""


# --------------------------------------------------------------------- model replies
class EntityItem(BaseModel):
    name: str
    type: str = ""
    description: str = ""


class EntitiesReply(BaseModel):
    entities: list[EntityItem] = Field(default_factory=list)


class RelationItem(BaseModel):
    head: str
    relation: str
    tail: str
    head_type: str = ""
    tail_type: str = ""


class RelationsReply(BaseModel):
    relations: list[RelationItem] = Field(default_factory=list)


def entities_of(items: Sequence[EntityItem], default_concept: str = "thing") -> list[ExtractedEntity]:
    """Model entities as extracted entities (blank names dropped, bare numbers dropped)."""
    out = []
    for item in items:
        name = clean_name(item.name)
        if name and not is_numeric(name):
            out.append(
                ExtractedEntity(
                    name=name, concept=item.type.strip() or default_concept, description=item.description.strip()
                )
            )
    return out


def facts_of(items: Sequence[RelationItem]) -> list[ExtractedFact]:
    return [
        ExtractedFact(
            head=clean_name(r.head),
            relation=r.relation,
            tail=clean_name(r.tail),
            head_concept=r.head_type.strip(),
            tail_concept=r.tail_type.strip(),
        )
        for r in items
        if clean_name(r.head) and clean_name(r.tail) and r.relation.strip()
    ]


def entity_list(entities: Sequence[ExtractedEntity]) -> str:
    """Entities as prompt lines: ``- name [concept]: description``."""
    if not entities:
        return "(none)"
    return "\n".join(f"- {e.name} [{e.concept}]" + (f": {e.description}" if e.description else "") for e in entities)


def run_parallel(items: Sequence[T], work: Callable[[T], R], workers: int) -> list[R]:
    """``work`` over ``items`` on up to ``workers`` threads, results in input order."""
    if len(items) <= 1 or workers <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(work, items))


def with_fallback(
    model_work: Callable[[ChunkInput], Extraction], offline: OfflineStrategy | None
) -> Callable[[ChunkInput], Extraction | ChunkFailed]:
    """``model_work`` that falls back to ``offline`` when a reply stays invalid (the extraction
    marked strategy ``OFFLINE_FALLBACK``, with a note), and gives ``ChunkFailed`` when the
    endpoint keeps failing — or when a reply stays invalid and there is no ``offline``
    (``hvm.on_model_error = "retry-later"``)."""

    def work(item: ChunkInput) -> Extraction | ChunkFailed:
        try:
            return model_work(item)
        except ModelOutputError as exc:
            if offline is None:
                return ChunkFailed(f"the model's reply stayed unusable: {exc}")
            result = offline.extract([item])[0]
            result.strategy = OFFLINE_FALLBACK
            result.notes.append(f"model reply invalid, offline extraction used instead: {exc}")
            return result
        except ModelError as exc:
            return ChunkFailed(str(exc))

    return work


# --------------------------------------------------------------------- offline helpers
def first_sentence_with(analysis: TextAnalysis, name: str) -> str:
    """The first sentence mentioning ``name`` (the offline description, grounded in the chunk)."""
    lowered = name.lower()
    for sentence in analysis.sentences:
        if lowered in sentence.lower():
            return sentence[:DESCRIPTION_CHARS]
    return ""


def phrase_concept(phrase: str) -> str:
    """The concept of a noun phrase: its head, taken as its last word; a proper-noun head
    (capitalised, which NER did not type) says nothing about the category: ``name``."""
    words = [w for w in clean_name(phrase).split() if any(ch.isalpha() for ch in w)]
    if not words:
        return "thing"
    return "name" if words[-1][:1].isupper() else words[-1]


def offline_entities(analysis: TextAnalysis) -> tuple[list[ExtractedEntity], dict[str, str]]:
    """Entities from NER (concept from the label) and noun phrases (concept from the head),
    and a map lowercase name → concept that also covers numeric NER values (for fact endpoints)."""
    out: list[ExtractedEntity] = []
    concepts: dict[str, str] = {}
    for ent in analysis.entities:
        key = ent.text.lower()
        if ent.label in VALUE_CONCEPTS:
            concepts.setdefault(key, VALUE_CONCEPTS[ent.label])
            continue
        if key in concepts or not clean_name(ent.text):
            continue
        concepts[key] = LABEL_CONCEPTS.get(ent.label, ent.label.lower())
        out.append(
            ExtractedEntity(
                name=clean_name(ent.text), concept=concepts[key], description=first_sentence_with(analysis, ent.text)
            )
        )
    phrases = 0
    for phrase in analysis.noun_phrases:
        key = phrase.lower()
        head = phrase_concept(phrase)
        if key in concepts or is_numeric(phrase) or len(head) < 3 or phrases >= MAX_PHRASES:
            continue
        concepts[key] = head
        phrases += 1
        out.append(
            ExtractedEntity(name=clean_name(phrase), concept=head, description=first_sentence_with(analysis, phrase))
        )
    return out, concepts


def offline_facts(analysis: TextAnalysis, concepts: dict[str, str]) -> list[ExtractedFact]:
    """SVO triples as facts; endpoint concepts from the entity map, else the phrase head."""
    out = []
    for triple in analysis.triples:
        head, tail = clean_name(triple.subject), clean_name(triple.object)
        if not head or not tail:
            continue
        out.append(
            ExtractedFact(
                head=head,
                relation=triple.predicate,
                tail=tail,
                head_concept=concepts.get(triple.subject.lower()) or phrase_concept(head),
                tail_concept=concepts.get(triple.object.lower())
                or ("number" if is_numeric(tail) else phrase_concept(tail)),
            )
        )
    return out


def nearby_captions(page: Page, component_id: str) -> str:
    """Captions right before or after a component in reading order (a table's description)."""
    ordered = sorted(page.components, key=lambda c: c.order)
    index = next((i for i, c in enumerate(ordered) if c.id == component_id), None)
    if index is None:
        return ""
    window = ordered[max(0, index - 1) : index + 2]
    return " ".join(c.text.strip() for c in window if c.kind is ComponentKind.CAPTION and c.text.strip())


# --------------------------------------------------------------------- model calls shared by modalities
STAGE_EXTRACT = "hvm.extract"


def model_relations(
    chat: ChatModel, context: str, content: str, entities: Sequence[ExtractedEntity], images: Sequence[ImagePart] = ()
) -> list[ExtractedFact]:
    """The relation step (paper Fig. 16): facts among a chunk's entities (and values it states)."""
    if not entities:
        return []
    prompt = render_prompt(
        __package__,
        "extract_relations.md",
        context=material(context or "(none)"),
        content=material(content),
        entities=material(entity_list(entities)),
    )
    reply = chat.complete([user(prompt, list(images))], stage=STAGE_EXTRACT, schema=RelationsReply).parsed
    assert isinstance(reply, RelationsReply)
    return facts_of(reply.relations)
