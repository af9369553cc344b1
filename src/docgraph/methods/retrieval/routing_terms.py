"""How a question names a document's period and kind, read without a model — the terms
``routing.DocumentRouter`` weighs a library's documents by, beside their names.

- **Periods**: a label's period ("FY2018", "Q1 2021", "2019") and the period in its file
  name ("BESTBUY_2024Q2_10Q") are both readings of the document's period — a 10-Q's cover
  gives the calendar quarter its period ended in, its file name often the company's fiscal
  quarter, and a question may use either. A reading is ``(year, quarter)``: quarter None
  for a whole year, 0 for a bare year that only dates the document (an 8-K's or an
  earnings release's date says when, not which period it covers).
- **Questions** name years ("FY2018", "fiscal 2018", "in 2018", "FY18", "1Q23") and
  quarters ("Q2", "2Q", "second quarter").
- **Kinds**: a question names a kind of document by the words a person uses for it — "the
  10-Q", "the annual report", "the slides", "this paper" — and each such phrase means
  the kinds the label guesser gives (``documents.metadata``). A bare "report" names no
  kind: every long document is one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from ...documents.file_names import file_name_fields
from ...documents.metadata import DocumentMeta

Reading = tuple[int, int | None]  # (year, quarter 1–4; 0 a bare date; None a whole year)

_YEAR = re.compile(r"(?<![\d.])(?:fy\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)(?![\d])", re.IGNORECASE)
_SHORT_YEAR = re.compile(r"\b(?:fy\s?'?|[1-4]q\s?'?|q[1-4]\s?')(\d\d)\b", re.IGNORECASE)  # FY18, 1Q23, Q2'23
_PERIOD_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?![\d])")
_PERIOD_QUARTER = re.compile(r"\bQ([1-4])\b", re.IGNORECASE)
_QUARTER_NUMBER = re.compile(r"\bQ([1-4])(?=\b|'|\d\d\b)|\b([1-4])Q(?=\b|'|\d\d\b)", re.IGNORECASE)
_QUARTER_WORD = re.compile(r"\b(first|second|third|fourth)\s+(?:fiscal\s+|calendar\s+)?quarter\b", re.IGNORECASE)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}

_THE = r"\b(?:the|this|that|these|those|which|each|both|its|their|a|an|two|three)\s+(?:[\w-]+\s+)?"


def _form(number: str, letter: str) -> str:
    """A form's name: "10-K" as written, or run together after a determiner ("the 10K"),
    never a bare "10K" (ten thousand)."""
    return rf"\b{number}-{letter}\b|{_THE}{number}{letter}\b"


KIND_PHRASES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), frozenset(kinds))
    for pattern, kinds in (
        (_form("10", "K"), {"10-K"}),
        (_form("10", "Q") + r"|\bquarterly\s+(?:report|filing)s?\b", {"10-Q"}),
        (_form("8", "K"), {"8-K"}),
        (_form("20", "F"), {"20-F"}),
        (r"\bannual\s+(?:report|filing)s?\b", {"10-K", "20-F", "40-F", "annual report"}),
        (r"\b(?:earnings|press)\s+releases?\b", {"earnings release", "8-K"}),
        (r"\b(?:sustainability|esg|csr|impact)\s+reports?\b", {"sustainability report"}),
        (r"\bslides?\b|\bslide\s?decks?\b", {"slides"}),
        (_THE + r"(?:papers?|preprints?)\b", {"paper"}),
    )
)


def question_years(question: str) -> set[int]:
    """The years a question names: 2018, FY2018, fiscal 2018, FY18, 1Q23, Q2'23."""
    years = {int(y) for y in _YEAR.findall(question)}
    years |= {2000 + int(y) for y in _SHORT_YEAR.findall(question)}
    return years


def question_quarters(question: str) -> set[int]:
    """The quarters a question names: Q2, 2Q, 1Q23, "the second quarter"."""
    quarters = {int(a or b) for a, b in _QUARTER_NUMBER.findall(question)}
    quarters |= {_ORDINALS[w.lower()] for w in _QUARTER_WORD.findall(question)}
    return quarters


def question_kinds(question: str) -> frozenset[str]:
    """The document kinds a question names ("the 10-Q" → {"10-Q"}); empty when none."""
    named: set[str] = set()
    for pattern, kinds in KIND_PHRASES:
        if pattern.search(question):
            named |= kinds
    return frozenset(named)


DATED_KINDS = frozenset({"8-K", "earnings release"})  # kinds whose bare year is a date, not a period covered


def period_readings(period: str, dated: bool = False) -> set[Reading]:
    """``(year, quarter)`` of a period as a label writes it: "Q1 2021" → {(2021, 1)},
    "FY2018" → {(2018, None)}, "2018–2019" → both years; a bare year is a whole year, or
    (``dated``) only a date: quarter 0."""
    years = [int(y) for y in _PERIOD_YEAR.findall(period)]
    quarter = _PERIOD_QUARTER.search(period)
    if quarter:
        return {(y, int(quarter.group(1))) for y in years}
    bare = dated and not re.search(r"\bFY", period, re.IGNORECASE)
    return {(y, 0 if bare else None) for y in years}


def document_periods(meta: DocumentMeta) -> set[Reading]:
    """Every reading of a document's period: its label's and, unless the user set the
    period, its file name's."""
    dated = meta.kind in DATED_KINDS
    readings = period_readings(meta.period, dated)
    if meta.sources.get("period") != "user":
        readings |= period_readings(file_name_fields(meta.file_name)[1], dated)
    return readings


def agreeing(readings: Iterable[Reading], years: Collection[int], quarters: Collection[int]) -> bool:
    """Whether a period is the one asked for at the grain it was asked: a reading of an
    asked year in an asked quarter when the question names quarters, else a reading of an
    asked year that is a whole year (a date is neither)."""
    if quarters:
        return any(y in years and q in quarters for y, q in readings)
    return any(y in years and q is None for y, q in readings)


# words that ask about named things together: "compare", "than", "versus", "both", "difference"
_COMPARING = frozenset(
    "compare compared compares comparing comparison comparisons versus vs between both differ differs "
    "difference differences relative respectively than against either".split()
)
_JOINING = frozenset({"and", "or", "vs", "versus", "with", "to"})  # between two names: "CVS or American Express"


def compares(said: Sequence[str], party_spans: Sequence[Collection[int]]) -> bool:
    """Whether a question (its ``words``) that names several parties (each at the positions
    ``party_spans``, in question order) asks about them together: it holds a word that
    compares ("than", "compare", "versus", "both", "difference"), or two of the names stand
    side by side, joined by nothing but "and", "or", "vs", "with", "to" or a comma
    ("CVS Health or American Express"). A name met in passing ("its lawsuit with DuPont's
    supplier") is no comparison."""
    if len(party_spans) < 2:
        return False
    if _COMPARING.intersection(said):
        return True
    for before, after in zip(party_spans, party_spans[1:]):
        between = said[max(before) + 1 : min(after)]
        if len(between) <= 1 and all(w in _JOINING for w in between):
            return True
    return False
