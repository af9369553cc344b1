"""Routing in a library: the documents a question names, found before its pages.

A question over a shelf of filings names what it is about — "What is the FY2018 capital
expenditure amount for 3M?" — and the same statement exists in every filing, so page
scores alone pick the right table of the wrong company or year. ``DocumentRouter`` reads
each document's shelf label (``documents.metadata``: organisation, title, the name in its
file name, period, kind) and gives every document a weight for the question:

1. **names**: a document is named when the question holds one of its names whole — as
   words ("American Water Works") or run together ("AmericanWaterWorks" in a file name,
   "JPMorgan" against "JP Morgan") — legal words (Inc., Company, Corporation, The) aside,
   or its trading symbol in capitals ("JPM"; a symbol is its organisation's, so every
   document of the organisation has the one any of them prints); the first words of its
   organisation's name alone, capitalised inside the question, name it at half weight when
   no other organisation's name starts with those words ("CVS" for "CVS Health
   Corporation", "American Water" for "American Water Works Company" beside "American
   Express"); an abbreviation written
   with two capitals or more names it whole when it shortens every word of its
   organisation's name in order ("IBM", "FedEx", "P&G"); the last three read case, so not
   in a question written all in capitals;
2. **kind**: the kind of document the question names ("the 10-Q", "the annual report",
   "the slides", "this paper": ``routing_terms.question_kinds``) picks among the named
   documents those of that kind, where they differ; when the question names no document,
   a kind alone names every document of it — unless every document or none is of it — and
   the documents' content then chooses between them (``document_nodes``);
3. **period**: among the named documents, those whose period holds a year the question
   names ("FY2018", "fiscal 2018", "in 2018", "1Q23") weigh more, the latest such year most
   (a later filing prints the earlier years as comparatives), and among those the ones of
   the grain asked — the quarter named ("Q2", "second quarter"), else a whole year (a
   10-K before a 10-Q of the same year); when none holds a named year, the nearest
   period; when the question names no year, the latest period a little
   (``DocumentRouter.period_bonus``). A period is read from the label and from the file
   name both (``routing_terms.document_periods``): a 10-Q's cover dates its calendar
   quarter, its file name often its fiscal one.

Steps 2 and 3 run within each **party** the question names: documents named by the same
words of it ("3M" names every 3M filing) are one party, and a question that names several
("Which had higher net income, CVS Health or American Express?") has each party's best
document weigh in full; when it asks about them together (``routing_terms.compares``: a
word that compares, or names joined by "and", "or", a comma) the methods give each party's
pages turns in the first slots (``Route.parties``, ``Route.comparing``, ``turns``).

The weight is ``floor + (1 - floor) · match / best match``: the named documents keep their
scores, the others keep ``floor`` of them — softly, so evidence elsewhere still ranks. The
router **abstains** (no weight at all) when the question names no document or kind, when
it names every document alike and neither kind nor period tells them apart, or in a
workspace of one document.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...documents.metadata import DocumentMeta
from ...documents.metadata_store import ensure_metadata, labels_version
from ...store.base import Store
from ...types import RoutedDocument
from .routing_terms import (
    Reading,
    agreeing,
    compares,
    document_periods,
    question_kinds,
    question_quarters,
    question_years,
)

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
_CAPITALISED = re.compile(r"(?<=[\w,;:]\s)[A-Z][A-Za-z0-9&]+")  # not the question's first word
_TICKER = re.compile(r"\b[A-Z][A-Z0-9]{1,5}\b")
_CASED_WORD = re.compile(r"[A-Za-z0-9]+")  # ``words`` as the question writes them
_ABBREVIATION = re.compile(r"\b(?=(?:[a-z&]*[A-Z]){2})[A-Za-z][A-Za-z&]{1,7}\b")  # two capitals or more: IBM, AmEx
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


def _capitalised_run(
    start: tuple[str, ...], runs: Mapping[str, frozenset[int]], capitalised: Mapping[str, str], shown: Sequence[str]
) -> tuple[str, frozenset[int]] | None:
    """Where the question writes ``start`` (the first words of a name, as words or run
    together) as a name is written — one word capitalised past the question's first word
    ("CVS"), several each with a capital or a digit first ("American Water", "J.P. Morgan")
    — as (the words as written, their positions); None when it does not."""
    at = runs.get("".join(start))
    if at is None:
        return None
    if len(at) == 1:
        word = "".join(start)
        return (capitalised[word], at) if word in capitalised else None
    written = [shown[i] for i in sorted(at)] if shown else []
    if written and all(w[0].isupper() or w[0].isdigit() for w in written):
        return " ".join(written), at
    return None


def _parties(named: np.ndarray, spans: Sequence[frozenset[int]]) -> list[tuple[np.ndarray, set[int]]]:
    """The named documents grouped by who named them: documents named by the same or
    overlapping words of the question ("3M" names each 3M filing) are one party, in the
    order the question names them; each with the positions of the words that named it."""
    groups: list[tuple[set[int], list[int]]] = []  # (question positions, documents)
    for doc in named:
        touching = [g for g in groups if g[0] & spans[doc]]
        merged: tuple[set[int], list[int]] = (set(spans[doc]), [int(doc)])
        for g in touching:
            merged[0].update(g[0])
            merged[1].extend(g[1])
            groups.remove(g)
        groups.append(merged)
    groups.sort(key=lambda g: min(g[0], default=-1))
    return [(np.array(sorted(docs), dtype=np.int64), positions) for positions, docs in groups]


@dataclass(frozen=True)
class Route:
    """What a question names in a library: per document (``doc_ids`` order) how well it is
    named, in [0, 1], and what named it; ``by_name`` is False when only a kind of document
    was named ("the slides"), which leaves the choice between those documents to their
    content (``document_nodes``)."""

    doc_ids: list[str]
    titles: list[str]
    match: np.ndarray
    reasons: list[list[str]]
    by_name: bool
    parties: list[list[str]] = field(default_factory=list)  # named documents by who named them, best first
    compares: bool = False  # the question asks about its parties together (``routing_terms.compares``)

    @property
    def comparing(self) -> bool:
        """Whether the question compares several parties ("CVS Health or American Express"):
        each has its own documents, and an answer needs evidence from every one of them. A
        party named in passing ("its lawsuit with DuPont") is routed to but compared with
        nothing."""
        return len(self.parties) > 1 and self.compares

    def named(self) -> list[str]:
        """The documents the route weighs above the floor (match above 0), in the router's
        order: "the statement of cash flows" of a question naming AMD's filing is that filing's."""
        return [d for d, m in zip(self.doc_ids, self.match) if m > 0]

    def weights(self, floor: float) -> dict[str, float]:
        """Document id → weight ``floor + (1 - floor) · match``."""
        return {d: floor + (1.0 - floor) * float(m) for d, m in zip(self.doc_ids, self.match)}

    def explain(self, floor: float) -> list[RoutedDocument]:
        """The documents the question names, best first: each with the weight its pages get
        and what named it — the name the question holds, as the document's label writes it
        (a first word, abbreviation or trading symbol as the question writes it), the kind,
        and the period that counted, and its party when the question compares several; empty
        when ``floor`` is 1 (routing off)."""
        if floor >= 1.0:
            return []
        order = sorted(np.flatnonzero(self.match > 0), key=lambda i: (-self.match[i], self.doc_ids[i]))
        party = {d: n for n, docs in enumerate(self.parties) for d in docs} if self.comparing else {}
        return [
            RoutedDocument(
                doc_id=self.doc_ids[i],
                title=self.titles[i],
                weight=round(floor + (1.0 - floor) * float(self.match[i]), 4),
                named_by=self.reasons[i],
                party=party.get(self.doc_ids[i]),
            )
            for i in order
        ]


@dataclass
class DocumentRouter:
    """Names, periods and kinds of a library's documents (see the module docstring)."""

    doc_ids: list[str]
    names: list[list[tuple[str, ...]]]  # per document: its names as word tuples
    spellings: list[list[str]]  # per document: the same names as its label writes them
    periods: list[set[Reading]]  # per document: every reading of its period (routing_terms)
    leading: list[list[tuple[str, ...]]]  # per document: starts of its organisation's name no other name starts with
    tickers: list[set[str]]  # per document: its organisation's trading symbols, matched as written (capitals)
    organisations: list[tuple[str, ...]]  # per document: its organisation's own words (for abbreviations)
    titles: list[str]  # per document: what to call it (its label's title, else its file name)
    kinds: list[str]  # per document: its label's kind ("10-K", "slides"; "" unknown)

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
        starts: dict[tuple[str, ...], set[tuple[str, ...]]] = {}  # a name's first words → the organisations naming so
        for doc_names, org in zip(names, organisations):
            for n in doc_names:
                for k in range(1, len(n) + 1):
                    starts.setdefault(n[:k], set()).add(org)
        leading = [[org[:k] for k in range(1, len(org)) if starts.get(org[:k]) == {org}] for org in organisations]
        symbols: dict[tuple[str, ...], set[str]] = {}  # an organisation → the trading symbols its documents print
        for d, org in zip(doc_ids, organisations):
            if len(metadata[d].ticker) >= 2:
                symbols.setdefault(org or (d,), set()).add(metadata[d].ticker)
        return cls(
            doc_ids,
            names,
            [list(found.values()) for found in spelled],
            [document_periods(metadata[d]) for d in doc_ids],
            leading,
            [set(symbols.get(org or (d,), ())) for d, org in zip(doc_ids, organisations)],
            organisations,
            [metadata[d].title or metadata[d].file_name or d for d in doc_ids],
            [metadata[d].kind for d in doc_ids],
        )

    def route(self, question: str) -> Route | None:
        """What the question names (steps 1–3 of the module docstring); None when the router
        abstains."""
        if len(self.doc_ids) < 2:
            return None
        score, reasons, spans = self._names(question)
        asked_kinds = question_kinds(question)
        of_kind = np.array([k in asked_kinds for k in self.kinds], dtype=bool)
        if not score.any():
            if not of_kind.any() or of_kind.all():
                return None
            score = of_kind.astype(np.float64)  # a kind alone: its documents, any of them
            for i in np.flatnonzero(of_kind):
                reasons[i] = [f"kind {self.kinds[i]}"]
            return Route(self.doc_ids, self.titles, score, reasons, by_name=False)
        grouped = _parties(np.flatnonzero(score == score.max()), spans)
        parties = [named for named, _ in grouped]
        years, quarters = question_years(question), question_quarters(question)
        for named in parties:
            if of_kind[named].any() and not of_kind[named].all():
                for i in named[of_kind[named]]:
                    score[i] += 0.5
                    reasons[i].append(f"kind {self.kinds[i]}")
            bonus = self.period_bonus(named, years, quarters)
            score[named] += bonus
            for doc, extra in zip(named, bonus):
                if extra > 0:
                    reasons[doc].append(f"period {self._period_shown(int(doc), years, quarters)}")
        match = score / score.max()
        for named in parties:  # each party its own series: its best document weighs in full
            match[named] = score[named] / score[named].max()
        if match.min() == match.max() and len(parties) < 2:
            return None  # every document named alike, and nothing told them apart
        ids = [[self.doc_ids[i] for i in sorted(named, key=lambda i: -match[i])] for named in parties]
        together = compares(words(question), [positions for _, positions in grouped])
        return Route(self.doc_ids, self.titles, match, reasons, by_name=True, parties=ids, compares=together)

    def _names(self, question: str) -> tuple[np.ndarray, list[list[str]], list[frozenset[int]]]:
        """Step 1: per document 1 when the question holds one of its names, 0.5 for the first
        words of its organisation's name alone; with what named it ("3M COMPANY", "CVS") and
        where (the positions of the question's words that named it). A question written all
        in capitals names by words only: its "IS" is no abbreviation, its "CAT" no trading
        symbol."""
        said = words(question)
        runs: dict[str, frozenset[int]] = {}  # words run together → where in the question (the first place)
        for i in range(len(said)):
            for j in range(i + 1, min(i + MAX_SPAN, len(said)) + 1):
                runs.setdefault("".join(said[i:j]), frozenset(range(i, j)))
        cased = question if any(c.islower() for c in question) else ""  # a question in capitals shows no names by case
        capitalised = {w.lower(): w for w in _CAPITALISED.findall(cased)}  # "CVS", "Boeing": as names are written
        shown_words = _CASED_WORD.findall(cased.replace("’", "'").replace("'s ", " "))
        if len(shown_words) != len(said):
            shown_words = []  # a letter whose case changes its length: read no name by case
        score = np.zeros(len(self.doc_ids))
        reasons: list[list[str]] = [[] for _ in self.doc_ids]
        spans: list[frozenset[int]] = [frozenset() for _ in self.doc_ids]
        for i, doc_names in enumerate(self.names):
            for name, written in zip(doc_names, self.spellings[i]):
                if "".join(name) in runs:
                    score[i], reasons[i], spans[i] = 1.0, [written], runs["".join(name)]
                    break
            if score[i] < 1.0:  # not named whole: by the first words its name starts with, the fewest first
                starts = (_capitalised_run(start, runs, capitalised, shown_words) for start in self.leading[i])
                found = next((run for run in starts if run is not None), None)
                if found is not None:
                    score[i], reasons[i], spans[i] = 0.5, [found[0]], found[1]
        for token in _ABBREVIATION.findall(cased):
            letters = token.lower().replace("&", "")
            for i, org in enumerate(self.organisations):
                if len(org) > 1 and abbreviates(letters, org):
                    score[i], reasons[i], spans[i] = 1.0, [token], runs.get("".join(words(token)), frozenset())
        shown = set(_TICKER.findall(cased))
        for i, tickers in enumerate(self.tickers):
            if tickers & shown:
                token = min(tickers & shown)
                score[i], reasons[i], spans[i] = 1.0, sorted(tickers & shown), runs.get(token.lower(), frozenset())
        return score, reasons, spans

    def _period_shown(self, doc: int, years: set[int], quarters: set[int]) -> str:
        """The reading of ``doc``'s period that counted, as "2018" or "Q2 2023"."""
        readings = sorted(self.periods[doc], key=lambda r: (r[0] in years, r[1] in quarters, r[0], r[1] or 0))
        year, quarter = readings[-1]
        return f"Q{quarter} {year}" if quarter and (quarters or not years) else str(year)

    def period_bonus(self, named: np.ndarray, asked: set[int], quarters: Collection[int] = ()) -> np.ndarray:
        """What the named documents' periods add (step 3 of the module docstring): 1 for the
        latest year the question names that a period holds (a later report prints the earlier
        years as comparatives), 0.5 for the other years it names, and a further 0.25 for
        those of the latest year whose period has the grain asked — the quarter the question
        names, or a whole year when it names none — where their grains differ; when no
        period holds a named year, 0.5 for the nearest period (a later one on a tie); when
        the question names no year, 0.25 for the latest period — what a person asking "is
        Boeing's business cyclical?" means."""
        years = [{y for y, _ in self.periods[i]} for i in named]
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
            bonus = np.array([1.0 if h and max(h) == best else 0.5 if h else 0.0 for h in held])
            latest = np.flatnonzero(bonus == 1.0)
            grain = np.array([agreeing(self.periods[named[i]], {best}, quarters) for i in latest], dtype=bool)
            if grain.any() and not grain.all():
                bonus[latest[grain]] += 0.25
            return bonus
        distance = [min((abs(y - a) - 0.5 * (y > a) for y in ys for a in asked), default=np.inf) for ys in years]
        nearest = min(distance)
        return np.array([0.5 if d == nearest else 0.0 for d in distance])


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


def page_weights(route: Route | None, floor: float, pages: PageDocuments) -> np.ndarray | None:
    """The routing weight of each page (its document's), or None when there is no route
    (the router abstained) or ``floor`` is 1; documents the route does not know weigh ``floor``."""
    if route is None or floor >= 1.0:
        return None
    weights = route.weights(floor)
    return np.array([weights.get(d, floor) for d in pages.doc_ids], dtype=np.float64)[pages.codes]


def document_router(store: Store) -> DocumentRouter:
    """The router of the workspace's documents as their labels stand now (labels guessed for
    documents that have none yet); rebuilt only when the ready documents change or a label is
    set by hand (``metadata_store.labels_version``). A query reads the document list and that stamp,
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
