"""Routing in a library: the documents a question names, found before its pages.

A question over a shelf of filings names what it is about — "What is the FY2018 capital
expenditure amount for 3M?" — and the same statement exists in every filing, so page
scores alone pick the right table of the wrong company or year. ``DocumentRouter`` reads
each document's shelf label (``documents.metadata``: organisation, title, the name in its
file name, period) and gives every document a weight for the question:

1. **names**: a document is named when the question holds one of its names whole — as
   words ("American Water Works") or run together ("AmericanWaterWorks" in a file name,
   "JPMorgan" against "JP Morgan") — legal words (Inc., Company, Corporation, The) aside,
   or its trading symbol in capitals ("JPM"); the first word of its organisation's name
   alone, capitalised inside the question, names it at half weight when no other name
   starts with that word ("CVS" for "CVS Health Corporation"); an abbreviation written
   with two capitals or more names it whole when it shortens every word of its
   organisation's name in order ("IBM", "FedEx", "P&G");
2. **period**: among the named documents, those whose period holds a year the question
   names ("FY2018", "fiscal 2018", "in 2018") weigh more, the latest such year most (a
   later filing prints the earlier years as comparatives); when none does, the nearest
   period; when the question names no year, the latest period a little
   (``DocumentRouter.period_bonus``).

The weight is ``floor + (1 - floor) · match / best match``: the named documents keep their
scores, the others keep ``floor`` of them — softly, so evidence elsewhere still ranks. The
router **abstains** (no weight at all) when the question names no document, when every
document is named alike, or in a workspace of one document.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...documents.metadata import DocumentMeta, ensure_metadata, labels_version
from ...store.base import Store
from ...types import Evidence, RoutedDocument

LEGAL_WORDS = frozenset(
    {
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "company",
        "co",
        "ltd",
        "limited",
        "llc",
        "plc",
        "the",
        "and",
        "of",
        "group",
        "holdings",
        "sa",
        "ag",
        "nv",
        "se",
    }
)
MAX_SPAN = 5  # question words run together when matching a name written as one word
_WORD = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"(?<![\d.])(?:fy\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)(?![\d])", re.IGNORECASE)
_CAPITALISED = re.compile(r"(?<=[\w,;:]\s)[A-Z][A-Za-z0-9&]+")  # not the question's first word
_TICKER = re.compile(r"\b[A-Z][A-Z0-9]{1,5}\b")
_ABBREVIATION = re.compile(r"\b(?=(?:[a-z&]*[A-Z]){2})[A-Za-z][A-Za-z&]{1,7}\b")  # two capitals or more: IBM, AmEx
_SHORT_FY = re.compile(r"\bfy\s?'?(\d\d)\b", re.IGNORECASE)
_CACHE: dict[tuple[str, str | None, tuple[str, ...]], DocumentRouter] = {}
CACHE_SIZE = 8


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words ("Coca-Cola" → coca, cola; "3M" → 3m)."""
    return _WORD.findall(text.lower().replace("’", "'").replace("'s ", " "))


def name_words(name: str) -> tuple[str, ...]:
    """A name's own words: legal words and bare numbers left out."""
    return tuple(w for w in words(name) if w not in LEGAL_WORDS and not w.isdigit())


def abbreviates(letters: str, name: tuple[str, ...]) -> bool:
    """Whether ``letters`` are the name's words shortened, in order, each to a non-empty
    start of itself: "ibm" for international business machines, "amex" for american express."""
    if not name:
        return not letters
    word, rest = name[0], name[1:]
    longest = min(len(word), len(letters) - len(rest))
    return any(letters[:k] == word[:k] and abbreviates(letters[k:], rest) for k in range(longest, 0, -1))


def question_years(question: str) -> set[int]:
    """The years a question names: 2018, FY2018, fiscal 2018, FY18."""
    years = {int(y) for y in _YEAR.findall(question)}
    years |= {2000 + int(y) for y in _SHORT_FY.findall(question)}
    return years


@dataclass
class DocumentRouter:
    """Names and years of a library's documents (see the module docstring)."""

    doc_ids: list[str]
    names: list[list[tuple[str, ...]]]  # per document: its names as word tuples
    spellings: list[list[str]]  # per document: the same names as its label writes them
    years: list[set[int]]
    unique_first: set[tuple[int, str]]  # (document, first word of its organisation) that no other name starts with
    tickers: list[set[str]]  # per document: its trading symbols, matched as the question writes them (capitals)
    organisations: list[tuple[str, ...]]  # per document: its organisation's own words (for abbreviations)
    titles: list[str]  # per document: what to call it (its label's title, else its file name)

    @classmethod
    def build(cls, metadata: Mapping[str, DocumentMeta]) -> DocumentRouter:
        doc_ids = sorted(metadata)
        spelled: list[dict[tuple[str, ...], str]] = [{} for _ in doc_ids]  # per document: its names' words → as written
        for i, d in enumerate(doc_ids):
            for written in metadata[d].names():
                if name_words(written):
                    spelled[i].setdefault(name_words(written), written)
        names = [list(found) for found in spelled]
        organisations = [name_words(metadata[d].organisation) for d in doc_ids]
        firsts: dict[str, set[tuple[str, ...]]] = {}  # a name's first word → the organisations of its documents
        for doc_names, org in zip(names, organisations):
            for n in doc_names:
                firsts.setdefault(n[0], set()).add(org)
        unique = {(i, org[0]) for i, org in enumerate(organisations) if len(org) > 1 and firsts.get(org[0]) == {org}}
        return cls(
            doc_ids,
            names,
            [list(found.values()) for found in spelled],
            [set(metadata[d].years()) for d in doc_ids],
            unique,
            [{metadata[d].ticker} if len(metadata[d].ticker) >= 2 else set() for d in doc_ids],
            organisations,
            [metadata[d].title or metadata[d].file_name or d for d in doc_ids],
        )

    def match(self, question: str) -> np.ndarray | None:
        """Per document (``doc_ids`` order) how well the question names it, in [0, 1]; None
        when the router abstains."""
        found = self._named(question)
        return None if found is None else found[0]

    def explain(self, question: str, floor: float) -> list[RoutedDocument]:
        """The documents the question names, best first: each with the weight its pages get
        and what named it — the name the question holds, as the document's label writes it
        (a first word, abbreviation or trading symbol as the question writes it), and the
        year of its period that counted; empty when the router abstains or ``floor`` is 1."""
        found = self._named(question)
        if found is None or floor >= 1.0:
            return []
        match, reasons = found
        order = sorted(np.flatnonzero(match > 0), key=lambda i: (-match[i], self.doc_ids[i]))
        return [
            RoutedDocument(
                doc_id=self.doc_ids[i],
                title=self.titles[i],
                weight=round(floor + (1.0 - floor) * float(match[i]), 4),
                named_by=reasons[i],
            )
            for i in order
        ]

    def _named(self, question: str) -> tuple[np.ndarray, list[list[str]]] | None:
        """``match`` with, per document, what named it ("3M COMPANY", "CVS" at half weight,
        "period 2018")."""
        if len(self.doc_ids) < 2:
            return None
        said = words(question)
        runs = {"".join(said[i:j]) for i in range(len(said)) for j in range(i + 1, min(i + MAX_SPAN, len(said)) + 1)}
        capitalised = {w.lower(): w for w in _CAPITALISED.findall(question)}  # "CVS", "Boeing": as names are written
        score = np.zeros(len(self.doc_ids))
        reasons: list[list[str]] = [[] for _ in self.doc_ids]
        for i, doc_names in enumerate(self.names):
            for name, written in zip(doc_names, self.spellings[i]):
                if "".join(name) in runs:
                    score[i] = 1.0
                    reasons[i] = [written]
                    break
                if (i, name[0]) in self.unique_first and name[0] in capitalised and score[i] < 0.5:
                    score[i] = 0.5
                    reasons[i] = [capitalised[name[0]]]
        for token in _ABBREVIATION.findall(question):
            letters = token.lower().replace("&", "")
            for i, org in enumerate(self.organisations):
                if len(org) > 1 and abbreviates(letters, org):
                    score[i], reasons[i] = 1.0, [token]
        shown = set(_TICKER.findall(question))
        for i, tickers in enumerate(self.tickers):
            if tickers & shown:
                score[i], reasons[i] = 1.0, sorted(tickers & shown)
        if not score.any() or score.min() == score.max():
            return None
        named = np.flatnonzero(score == score.max())
        asked = question_years(question)
        bonus = self.period_bonus(named, asked)
        score[named] += bonus
        for doc, extra in zip(named, bonus):
            if extra > 0:
                held = sorted(self.years[doc] & asked) or sorted(self.years[doc])
                reasons[doc].append(f"period {held[-1]}")
        return score / score.max(), reasons

    def period_bonus(self, named: np.ndarray, asked: set[int]) -> np.ndarray:
        """What the named documents' periods add (step 2 of the module docstring): 1 for the
        latest year the question names that a period holds (a later report prints the earlier
        years as comparatives), 0.5 for the other years it names; when no period holds one,
        0.5 for the nearest period (a later one on a tie); when the question names no year,
        0.25 for the latest period — what a person asking "is Boeing's business cyclical?"
        means."""
        years = [self.years[i] for i in named]
        bonus = np.zeros(len(named))
        if not any(years):
            return bonus
        if not asked:
            latest = max(max(y) for y in years if y)
            return np.array(
                [0.25 if y and max(y) == latest and len(set(map(frozenset, years))) > 1 else 0.0 for y in years]
            )
        held = [y & asked for y in years]
        if any(held):
            best = max(max(h) for h in held if h)
            return np.array([1.0 if h and max(h) == best else 0.5 if h else 0.0 for h in held])
        distance = [min((abs(y - a) - 0.5 * (y > a) for y in ys for a in asked), default=np.inf) for ys in years]
        nearest = min(distance)
        return np.array([0.5 if d == nearest else 0.0 for d in distance])

    def weights(self, question: str, floor: float) -> dict[str, float] | None:
        """Document id → weight ``floor + (1 - floor) · match`` (None: abstain)."""
        match = self.match(question)
        if match is None:
            return None
        return {d: floor + (1.0 - floor) * float(m) for d, m in zip(self.doc_ids, match)}


@dataclass(frozen=True)
class PageDocuments:
    """The documents of a ranking's pages: ``doc_ids`` once each, ``codes[p]`` page p's index
    into them (so a question's weights reach every page in one gather)."""

    doc_ids: list[str]
    codes: np.ndarray

    @classmethod
    def of(cls, page_docs: Sequence[str]) -> PageDocuments:
        positions: dict[str, int] = {}
        codes = np.fromiter(
            (positions.setdefault(d, len(positions)) for d in page_docs), dtype=np.int64, count=len(page_docs)
        )
        return cls(list(positions), codes)

    def within(self, scope: Collection[str]) -> np.ndarray:
        """1.0 for each page of a document in ``scope``, 0.0 for the others."""
        wanted = set(scope)
        return np.array([d in wanted for d in self.doc_ids], dtype=np.float64)[self.codes]


def page_weights(router: DocumentRouter | None, question: str, floor: float, pages: PageDocuments) -> np.ndarray | None:
    """The routing weight of each page (its document's), or None when there is no router or
    it abstains; documents the router does not know weigh ``floor``."""
    if router is None or floor >= 1.0:
        return None
    weights = router.weights(question, floor)
    if weights is None:
        return None
    return np.array([weights.get(d, floor) for d in pages.doc_ids], dtype=np.float64)[pages.codes]


def document_router(store: Store) -> DocumentRouter:
    """The router of the workspace's documents as their labels stand now (labels guessed for
    documents that have none yet); rebuilt only when the ready documents change or a label is
    set by hand (``metadata.labels_version``). A query reads the document list and that stamp,
    not the labels."""
    documents = store.list_documents()
    ready = tuple(sorted(d.id for d in documents if d.status == "ready"))
    key = (str(store.root), labels_version(store), ready)
    router = _CACHE.get(key)
    if router is None:
        router = DocumentRouter.build(ensure_metadata(store, documents))  # a guess it writes stamps nothing
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = router
    return router


def with_routing(evidence: Evidence, router: DocumentRouter | None, floor: float, scope: object = None) -> Evidence:
    """``evidence`` with the documents its question names (``DocumentRouter.explain``), as
    the graph methods' routing weighed them; none when documents were chosen (``scope``)."""
    if router is not None and scope is None:
        evidence.routed = router.explain(evidence.query, floor)
    return evidence
