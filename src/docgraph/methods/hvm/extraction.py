"""What HVM-GraphRAG extracts from a chunk and keeps about it, and how names are normalised.

Vocabulary (METHODS.md, "HVM-GraphRAG"): a *concept* is a category, an *entity* an
instance assigned to exactly one concept by φ(e), a *fact* ``(e_h, r, e_t)`` and a
*schema* ``(c_h, r, c_t)``. An ``Extraction`` is what one chunk yields (entities with
their concepts, facts with the concepts of their endpoints); concepts C_i and schemas S_i
are derived from it. A ``Fact`` is a fact of the holistic view M with its provenance.

Contracts:
- ``entity_key`` is the identity of an entity within a document: NFKC-lowercased,
  whitespace collapsed, surrounding punctuation and a leading article removed. Two
  mentions with the same key are the same entity.
- ``relation_name`` is lowercase_underscore (letters, digits, underscores), never empty, at most
  ``MAX_RELATION_CHARS`` long (cut at a word boundary).
- ``concept_name`` is a lowercase, singular-ish display form of a concept.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, Field

_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_EDGE_PUNCT = " \t\n\r\"'`“”‘’.,;:!?()[]{}<>*•·-–—"
_SIGNED = re.compile(r"^\s*[-−–]\s*\d")
_NON_WORD = re.compile(r"[^0-9a-z]+")
_NUMBER = re.compile(
    r"^[\s(]*[-+−]?[$€£¥]?\s*[\d.,]+\s*(%|[kmb]n?|million|billion|thousand|bn|m)?[\s)]*$", re.IGNORECASE
)

MAX_RELATION_CHARS = 64
CONFLICT_TYPES: tuple[str, ...] = ("mutual", "temporal", "granularity")


def clean_name(name: str) -> str:
    """A display name: whitespace collapsed, surrounding punctuation stripped (a number keeps its sign)."""
    text = " ".join(unicodedata.normalize("NFKC", name).split())
    cleaned = text.strip(_EDGE_PUNCT)
    if _SIGNED.match(text) and cleaned[:1].isdigit():
        cleaned = "-" + cleaned
    return cleaned


def entity_key(name: str) -> str:
    """The identity of an entity name (see the module contract); ``""`` for an empty name."""
    text = clean_name(name).lower()
    text = _ARTICLE.sub("", text)
    return " ".join(text.split())


def relation_name(label: str) -> str:
    """``label`` as lowercase_underscore (``"Is located in"`` → ``"is_located_in"``)."""
    text = _NON_WORD.sub("_", unicodedata.normalize("NFKC", label).lower()).strip("_")
    if len(text) > MAX_RELATION_CHARS:
        text = text[:MAX_RELATION_CHARS].rsplit("_", 1)[0]
    return text or "related_to"


def singular(word: str) -> str:
    """A cheap English singular of one lowercase word (``"emissions"`` → ``"emission"``)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def concept_name(label: str) -> str:
    """The display form of a concept: lowercase, words separated by spaces, last word singular."""
    words = _NON_WORD.sub(" ", unicodedata.normalize("NFKC", label).lower()).split()
    if not words:
        return "thing"
    words[-1] = singular(words[-1])
    return " ".join(words)


def is_numeric(text: str) -> bool:
    """True for bare numbers, amounts and percentages ("1,200", "€3.4 bn", "12 %")."""
    return bool(text.strip()) and bool(_NUMBER.match(text))


class ExtractedEntity(BaseModel):
    name: str
    concept: str
    description: str = ""


class ExtractedFact(BaseModel):
    head: str
    relation: str
    tail: str
    head_concept: str = ""
    tail_concept: str = ""


class Extraction(BaseModel):
    """What one chunk yields. ``strategy`` names the extractor (``"offline"`` or ``"model:<name>"``)."""

    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)
    strategy: str = ""
    notes: list[str] = Field(default_factory=list)

    @property
    def concepts(self) -> set[str]:
        """C_i: the concepts of the chunk's entities and fact endpoints."""
        found = {concept_name(e.concept) for e in self.entities}
        found |= {concept_name(c) for f in self.facts for c in (f.head_concept, f.tail_concept) if c}
        return found

    @property
    def schemas(self) -> set[tuple[str, str, str]]:
        """S_i: ``(c_h, r, c_t)`` for every fact whose endpoint concepts are known."""
        phi = {entity_key(e.name): concept_name(e.concept) for e in self.entities}
        out = set()
        for f in self.facts:
            head = phi.get(entity_key(f.head)) or (concept_name(f.head_concept) if f.head_concept else "")
            tail = phi.get(entity_key(f.tail)) or (concept_name(f.tail_concept) if f.tail_concept else "")
            if head and tail:
                out.add((head, relation_name(f.relation), tail))
        return out


class Fact(BaseModel):
    """A fact of the holistic view M. ``head``/``tail`` are entity keys; ``chunks`` its provenance.

    ``status`` is ``unresolved`` when it sits in a flagged conflict nobody could settle
    (both sides are kept, with their provenance); ``conflict`` names the conflict type it
    was involved in and ``note`` says what happened to it.
    """

    id: str
    head: str
    relation: str
    tail: str
    chunks: list[str]
    qualifier: str = ""
    status: Literal["accepted", "unresolved"] = "accepted"
    conflict: str = ""
    note: str = ""

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.head, self.relation, self.tail)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """Two facts with the same identity are exact duplicates."""
        return (self.head, self.relation, self.tail, self.qualifier.lower())


class EntityInfo(BaseModel):
    """An entity of one document: its name, its one concept φ(e), and the chunks it was extracted from."""

    key: str
    name: str
    concept: str
    description: str = ""
    mentions: list[str] = Field(default_factory=list)
