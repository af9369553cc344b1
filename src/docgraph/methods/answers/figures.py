"""Numbers, years and dates as values, so a claim can be matched however it is written.

``claim_figures(text)`` lists what a sentence states: amounts and counts (``Figure``, with
currency, scale words and suffixes — "$1,076M", "1,076 million", "1.076 billion" and
"1076000000" are one value), percentages, years and calendar dates. References to the
document's own structure ("Item 7", "Note 5", "page 12", "Form 10-K") are not claims.
``EvidenceFigures(text)`` indexes what evidence text holds; its ``has_*`` methods say
whether a stated value is there. An amount matches an evidence number at the same value
or one a power of a thousand away (tables say "in millions" once, in their header), and a
stated value with two or more significant digits also matches evidence that rounds to it
at the stated precision ("$1.1 billion" for "1,076" in millions). Signs are ignored:
filings write losses in parentheses.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

MONTHS = {
    name: n
    for n, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATES = [  # (pattern, group order)
    (re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>(?:19|20)\d{{2}})\b", re.I)),
    (
        re.compile(
            rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH}),?\s+"
            r"(?P<y>(?:19|20)\d{2})\b",
            re.I,
        )
    ),
    (re.compile(r"\b(?P<y>(?:19|20)\d{2})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")),
    (re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>(?:19|20)\d{2})\b")),
    (re.compile(rf"\b(?P<m>{_MONTH})\s+(?:of\s+)?(?P<y>(?:19|20)\d{{2}})\b", re.I)),
]
SCALES = {
    "thousand": 3,
    "thousands": 3,
    "k": 3,
    "million": 6,
    "millions": 6,
    "mn": 6,
    "mm": 6,
    "m": 6,
    "billion": 9,
    "billions": 9,
    "bn": 9,
    "b": 9,
    "trillion": 12,
    "trillions": 12,
    "tn": 12,
    "t": 12,
}
_NUMBER = re.compile(
    r"(?P<cur>(?:US|C|A)?[$€£¥]|\b(?:USD|EUR|GBP|JPY)\s?)?"
    r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w.]*\d)"
    r"(?P<suffix>[kKmMbBtT]n?\b|mm\b)?"
    r"(?:\s?(?P<word>thousands?|millions?|billions?|trillions?|mn|bn|tn)\b)?"
    r"(?:\s?(?P<pct>%|percent\b|per\s?cent\b|percentage points?\b|pct\b|bps\b|basis points?\b))?",
    re.I,
)
_YEAR = re.compile(r"(?<![\d,.$])(?:FY\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})(?![\d,]|\.\d)", re.I)
_SHORT_FY = re.compile(r"\bFY\s?'?(\d{2})\b", re.I)
_YEAR_IN_WORD = re.compile(r"(?<=[A-Za-z])((?:19|20)\d{2})\b")
_REFERENCE = re.compile(
    r"(?:\b(?:item|items|note|notes|part|page|pages|p|pp|section|sections|figure|fig|"
    r"table|exhibit|chapter|schedule|appendix|step|rule|article|no|number|level|tier|"
    r"phase|round|grade|class|form)\.?\s*$)|(?:[#§]\s*$)",
    re.I,
)
_MONTH_BEFORE = re.compile(rf"\b{_MONTH}\s*$", re.I)  # "December 31" without a year: a day
_IDENT_AFTER = re.compile(r"^-?[A-Za-z]")  # "10-K", "8-K", "COVID-19" (before), "3M" (letter after)
_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "hundred": 100,
    "dozen": 12,
    "half": 50,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.I)


@dataclass(frozen=True)
class Figure:
    """A stated number: ``value`` (scale applied, sign dropped), ``step`` (one unit in its
    last written digit, scale applied), ``digits`` (significant digits written), ``kind``
    ("amount", "percent" or "year"), ``scaled`` (a scale word or suffix was written) and
    ``text`` (as written, at ``start`` of the text it was found in; -1: not known)."""

    value: Decimal
    step: Decimal
    digits: int
    kind: str
    scaled: bool
    text: str
    start: int = -1


@dataclass(frozen=True)
class DateValue:
    year: int
    month: int
    day: int | None
    text: str


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def find_dates(text: str) -> tuple[list[DateValue], str]:
    """The calendar dates of ``text`` and the text with them blanked out (same length)."""
    found: list[DateValue] = []
    spans: list[tuple[int, int]] = []
    for pattern in _DATES:
        for m in pattern.finditer(_blank(text, spans)):
            month_raw = m.group("m").rstrip(".").lower()
            month = MONTHS.get(month_raw) if not month_raw.isdigit() else int(month_raw)
            day = int(m.group("d")) if "d" in m.groupdict() and m.group("d") else None
            if not month or not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
                continue
            found.append(DateValue(int(m.group("y")), month, day, m.group(0)))
            spans.append(m.span())
    return found, _blank(text, spans)


def _figure(m: re.Match) -> Figure | None:
    raw = m.group("num").replace(",", "")
    try:
        number = Decimal(raw)
    except InvalidOperation:
        return None
    suffix = (m.group("suffix") or "").lower()
    word = (m.group("word") or "").lower()
    if suffix and not (m.group("cur") or len(suffix) > 1 or suffix in ("m", "b", "k") and m.group("cur")):
        return None  # "10m" without a currency: metres, minutes; not a scale we can trust
    exponent = SCALES.get(word) or SCALES.get(suffix) or 0
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    digits = len(raw.replace(".", "").lstrip("0")) or 1
    scale = Decimal(10) ** exponent
    kind = "percent" if m.group("pct") else "amount"
    if (
        kind == "amount"
        and not exponent
        and not m.group("cur")
        and not decimals
        and "," not in m.group("num")
        and len(raw) == 4
        and raw[:2] in ("19", "20")
    ):
        kind = "year"
    return Figure(number * scale, Decimal(10) ** -decimals * scale, digits, kind, bool(exponent), m.group(0).strip())


def claim_figures(text: str) -> tuple[list[Figure], list[DateValue]]:
    """What a sentence states: its numbers (percentages and years included) and dates.
    Citation markers, list numbering and references to document parts are skipped."""
    text = re.sub(r"\[\d+(?:\s*[,;–-]\s*\d+)*\]", lambda m: " " * len(m.group(0)), text)
    text = re.sub(r"^\s*\d{1,2}[.)]\s", lambda m: " " * len(m.group(0)), text)
    dates, rest = find_dates(text)
    figures: list[Figure] = []
    for m in _SHORT_FY.finditer(rest):
        figures.append(Figure(Decimal(2000 + int(m.group(1))), Decimal(1), 4, "year", False, m.group(0)))
    rest = _SHORT_FY.sub(lambda m: " " * len(m.group(0)), rest)
    for m in _YEAR_IN_WORD.finditer(rest):  # "FY2022", "Q42021"
        figures.append(Figure(Decimal(m.group(1)), Decimal(1), 4, "year", False, m.group(1)))
    for m in _NUMBER.finditer(rest):
        before, after = rest[: m.start()], rest[m.end() :]
        if (
            _REFERENCE.search(re.sub(r"\d+[-–.]\s*$", "", before[-16:]))
            or _IDENT_AFTER.match(after)
            or re.search(r"[A-Za-z]-?$", before[-2:])
            or _MONTH_BEFORE.search(before[-12:])
        ):
            continue
        figure = _figure(m)
        if figure is not None:
            lead = len(m.group(0)) - len(m.group(0).lstrip())
            figures.append(dataclasses.replace(figure, start=m.start() + lead))
    return figures, dates


class EvidenceFigures:
    """The numbers, years and dates of evidence text, for ``has_figure``/``has_date``."""

    def __init__(self, text: str):
        dates, rest = find_dates(text)
        self.dates = {(d.year, d.month, d.day) for d in dates} | {(d.year, d.month, None) for d in dates}
        self.years = {int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", text)}
        self.years |= {2000 + int(y) for y in _SHORT_FY.findall(text)}
        values: set[Decimal] = set()
        for m in _NUMBER.finditer(rest):  # the day and year of a date are not amounts
            figure = _figure(m)
            if figure is not None:
                values.add(abs(figure.value))
                if figure.scaled:  # "1.5 million" is also the "1.5" of a column in millions
                    values.add(abs(Decimal(m.group("num").replace(",", ""))))
        values |= {Decimal(v) for w, v in _WORDS.items() if re.search(rf"\b{w}\b", text, re.I)}
        self.values = values

    def has_date(self, date: DateValue) -> bool:
        return (date.year, date.month, date.day) in self.dates

    def has_year(self, year: int) -> bool:
        return year in self.years

    def has_figure(self, figure: Figure) -> bool:
        """Whether the evidence holds this number (see the module docstring for the rules)."""
        if figure.kind == "year":
            return self.has_year(int(figure.value)) or abs(figure.value) in self.values
        target = abs(figure.value)
        shifts = (0,) if figure.kind == "percent" else (0, 3, 6, 9, 12, -3, -6, -9, -12)
        for value in self.values:
            for shift in shifts:
                candidate = value.scaleb(shift)
                if candidate == target or (figure.digits >= 2 and abs(candidate - target) * 2 <= figure.step):
                    return True
        return False
