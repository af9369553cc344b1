"""The offline answer: quote the evidence sentences that best match the question, each cited.

Used by every method when no answer model is configured. Sentences are scored by
IDF-weighted overlap with the question's terms (IDF over the candidate sentences, so
rare question words count most) plus a small prior from the passage's retrieval rank;
the best few distinct sentences are quoted with their citation numbers. The answer
says plainly that no model was used, and why: none is configured (``NO_MODEL``), or the
answer model failed and this is the fallback (``MODEL_FAILED``, see ``answer_fallback``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...text import sentences, tokenize
from ...types import Evidence
from .citations import CitationBook

NO_MODEL = "No answer model is configured (offline mode)"
MODEL_FAILED = "The answer model failed (see the answer's warnings), so no model was used"


def offline_notice(reason: str = NO_MODEL) -> str:
    return f"{reason}, so this answer quotes the evidence that best matches the question:"


def nothing_found(reason: str = NO_MODEL) -> str:
    return f"{reason}, and no evidence matching the question was found."


OFFLINE_NOTICE = offline_notice()
NOTHING_FOUND = nothing_found()
FALLBACK_NOTICE = offline_notice(MODEL_FAILED)
FALLBACK_NOTHING_FOUND = nothing_found(MODEL_FAILED)
SENTENCE_CACHE = 2048  # passages whose split sentences are kept (one answer quotes up to a few hundred)


@dataclass(frozen=True)
class EvidencePassage:
    """Evidence text grounded on components of one page, with its retrieval score."""

    doc_id: str
    page: int
    component_ids: tuple[str, ...]
    text: str
    score: float = 0.0


@dataclass(frozen=True)
class _Candidate:
    sentence: str
    passage: EvidencePassage
    rank: int
    tokens: frozenset[str]


@lru_cache(maxsize=SENTENCE_CACHE)
def _sentence_tokens(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A passage's sentences with their token sets, those with no token left out: one
    answer ranks the same passages for its items and for the question."""
    split = ((sentence, frozenset(tokenize(sentence))) for sentence in sentences(text))
    return tuple((sentence, tokens) for sentence, tokens in split if tokens)


def _candidates(passages: list[EvidencePassage]) -> list[_Candidate]:
    return [
        _Candidate(sentence, passage, rank, tokens)
        for rank, passage in enumerate(passages)
        for sentence, tokens in _sentence_tokens(passage.text)
    ]


def _scores(question: str, cands: list[_Candidate]) -> list[float]:
    """Each candidate's match to ``question``: IDF-weighted overlap (the IDF over the
    candidates), shorter sentences discounted, plus a prior from its passage's rank."""
    q_terms = set(tokenize(question))
    df: dict[str, int] = {}
    for cand in cands:
        for term in cand.tokens & q_terms:
            df[term] = df.get(term, 0) + 1
    n = len(cands)
    out = []
    for cand in cands:
        overlap = sum(math.log(1 + n / df[t]) for t in cand.tokens & q_terms)
        length_penalty = 1.0 if len(cand.tokens) >= 4 else 0.6
        out.append(overlap * length_penalty + 0.5 / (1.0 + cand.rank))
    return out


def rank_sentences(question: str, passages: list[EvidencePassage]) -> list[tuple[float, str, EvidencePassage]]:
    """(score, sentence, passage) for every evidence sentence, best first; deterministic."""
    cands = _candidates(passages)
    scored = sorted(
        ((score, -index, cand) for index, (score, cand) in enumerate(zip(_scores(question, cands), cands))),
        key=lambda item: (item[0], item[1]),
        reverse=True,
    )
    return [(score, cand.sentence, cand.passage) for score, _, cand in scored]


def _stem(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") else token


def item_sentences(
    items: Sequence[str], passages: list[EvidencePassage], question: str = ""
) -> list[tuple[str, EvidencePassage]]:
    """For each item (a line item a measure is computed from: "total current liabilities", or
    one the question names), the evidence sentence that gives its value most exactly: one
    that holds all its words (plural "s" aside), preferring one with a number, then one that
    starts with the item (a table row named by it); then, for an item the question names, the
    sentence that matches the question best (``rank_sentences``' score: "net income
    attributable to CVS Health" picks that row over "Net income"), for an input of a measure
    the fewest other words; then the best-ranked passage. Items the evidence lacks are skipped."""
    if not items:
        return []
    cands = _candidates(passages)
    words = [tuple(_stem(t) for t in tokenize(cand.sentence)) for cand in cands]
    asked = {_stem(t) for t in tokenize(question)}
    wanted_items = [tuple(_stem(t) for t in tokenize(item)) for item in items]
    named_items = [bool(wanted) and set(wanted) <= asked for wanted in wanted_items]
    match = _scores(question, cands) if any(named_items) else []  # scored only when an item is named
    out: list[tuple[str, EvidencePassage]] = []
    for wanted, named in zip(wanted_items, named_items):
        holding = [
            (
                not any(t[0].isdigit() for t in w),
                w[: len(wanted)] != wanted,
                -match[i] if named else float(len(w) - len(wanted)),
                cands[i].rank,
                i,
            )
            for i, w in enumerate(words)
            if wanted and set(wanted) <= set(w)
        ]
        if holding:
            best = cands[min(holding)[-1]]
            out.append((best.sentence, best.passage))
    return out


def compared_parties(evidence: Evidence) -> list[set[str]]:
    """The document ids of each party a comparing question names (``RoutedDocument.party``),
    in the question's order; empty when it compares nothing."""
    parties: dict[int, set[str]] = {}
    for routed in evidence.routed:
        if routed.party is not None:
            parties.setdefault(routed.party, set()).add(routed.doc_id)
    return [parties[n] for n in sorted(parties)] if len(parties) > 1 else []


def named_documents(evidence: Evidence) -> set[str]:
    """The ids of the documents the question names (``Evidence.routed``); empty when it names
    none or the workspace holds one document."""
    return {routed.doc_id for routed in evidence.routed}


def extractive_answer(
    question: str,
    passages: list[EvidencePassage],
    book: CitationBook,
    max_sentences: int = 3,
    reason: str = NO_MODEL,
    items: Sequence[str] = (),
    parties: Sequence[Collection[str]] = (),
    named: Collection[str] = (),
) -> str:
    """Quote up to ``max_sentences`` best sentences with citations registered in ``book``;
    the first line says why no model answered (``reason``). ``items`` (the input line items
    of a measure the question asks for, ``methods.retrieval.lexicon``) are quoted first, each by the
    sentence that names it most exactly (``item_sentences``), beyond ``max_sentences`` if
    need be, so the answer shows the numbers the measure is computed from. With ``parties``
    (the document ids of each company a comparing question names: ``compared_parties``),
    every party's items and its best sentence are quoted, in the parties' order, before the
    best of the rest: a comparison shows each side. With ``named`` (the documents the question
    names: ``named_documents``), only their passages are quoted when they have any: a
    question about 3M's FY2018 filing is not answered from another company's filing that
    shares its words."""
    if named and any(p.doc_id in named for p in passages):
        passages = [p for p in passages if p.doc_id in named]
    chosen: list[tuple[str, EvidencePassage]] = []
    seen: set[str] = set()

    def take(sentence: str, passage: EvidencePassage) -> None:
        key = " ".join(tokenize(sentence))
        if key not in seen:
            seen.add(key)
            chosen.append((sentence, passage))

    sides = [[p for p in passages if p.doc_id in party] for party in parties] if len(parties) > 1 else [passages]
    for side in sides:
        for sentence, passage in item_sentences(items, side, question):
            take(sentence, passage)
    ranked = rank_sentences(question, passages)
    if len(sides) > 1:
        for party in parties:
            best = next(((s, p) for _, s, p in ranked if p.doc_id in party), None)
            if best is not None:
                take(*best)
    for _, sentence, passage in ranked:
        if len(chosen) >= max(max_sentences, len(sides)):
            break
        take(sentence, passage)
    if not chosen:
        return nothing_found(reason)
    lines = [offline_notice(reason)]
    for sentence, passage in chosen:
        number = book.cite(passage.doc_id, passage.page, list(passage.component_ids), quote=sentence)
        suffix = f" [{number}]" if number is not None else ""
        lines.append(f"- \u201c{sentence}\u201d{suffix}")
    return "\n".join(lines)
