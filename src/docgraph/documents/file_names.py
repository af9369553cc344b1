"""What a file's name says about its document: the name, period and kind people put in it.

"3M_2018_10K", "JPMORGAN_2021Q1_10Q", "apple-2023-annual-report", "nvidia_fy24_10-k",
"Tesla Impact Report Q2 2022": a name is split into segments at underscores and spaces, or,
when it has neither, at hyphens (a form number, "10-K", and a date, "2022-08-19", stay
whole), and read left to right. The first two segments before the first period or kind are
the name, less initials ("PH_2016.06.08_Economy": PH names no one), and none when the first
is a lower-case code ("dl_comp_mech_slides"); the first period segment is the period
("2018", "2021Q1", "FY24", "Q2 2022", "2Q23"); the first kind segment or pair of segments is
the kind ("10K", "EARNINGS", "annual report", "slides"). ``file_name_fields`` is pure; the
label guesser (``metadata``) trusts a cover over the file name.
"""

from __future__ import annotations

import re

_SEGMENT = re.compile(
    r"(?:19|20)\d\d[.\-]\d\d(?:[.\-]\d\d)?"  # a date, kept whole
    r"|\d{1,2}-[A-Za-z](?![A-Za-z])"  # a form number: 10-K, 8-K, 20-F
    r"|[^\s_\-]+"
)
_YEAR_PERIOD = re.compile(r"^(?P<year>(?:19|20)\d\d)(?:[.\-]?(?:q(?P<q>[1-4])|\d\d(?:[.\-]\d\d)?))?$", re.IGNORECASE)
_FISCAL_YEAR = re.compile(r"^fy'?(?P<year>\d\d|(?:19|20)\d\d)$", re.IGNORECASE)  # FY24, FY2024
_QUARTER_YEAR = re.compile(r"^(?:q(?P<q>[1-4])|(?P<n>[1-4])q)(?:fy|')?(?P<year>\d\d|(?:19|20)\d\d)$", re.IGNORECASE)
_QUARTER = re.compile(r"^q([1-4])$", re.IGNORECASE)
_KIND = re.compile(r"^(10-?k|10-?q|20-?f|8-?k|ar|esg|csr|earnings|slides|deck)$", re.IGNORECASE)
_KIND_NAMES = {
    "EARNINGS": "earnings release",
    "AR": "annual report",
    "ESG": "sustainability report",
    "CSR": "sustainability report",
    "SLIDES": "slides",
    "DECK": "slides",
}
REPORT_KINDS = (  # the words that name a report's kind, on a cover or in a file name
    ("sustainability report", "sustainability report"),
    ("esg report", "sustainability report"),
    ("impact report", "sustainability report"),
    ("annual report", "annual report"),
    ("integrated report", "annual report"),
)
_KIND_PAIRS = dict(REPORT_KINDS) | {
    "csr report": "sustainability report",
    "earnings release": "earnings release",
    "slide deck": "slides",
}
_FORM_NUMBER = re.compile(r"^(\d+)-?([A-Z])$")  # "10K", "8K" → "10-K", "8-K"
_ARXIV = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_CODE = re.compile(r"^[a-z]{1,2}$")  # a lower-case prefix such as "dl_": a course or folder code


def _full_year(digits: str) -> str:
    return digits if len(digits) == 4 else f"20{digits}"


def _period(segment: str, following: str) -> tuple[str, int]:
    """The period a segment gives ("2018", "Q1 2021"; "" none) and how many segments it takes
    (a lone "Q2" takes the year after it)."""
    found = _YEAR_PERIOD.match(segment)
    if found:
        year = found.group("year")
        return (f"Q{found.group('q')} {year}" if found.group("q") else year), 1
    found = _FISCAL_YEAR.match(segment)
    if found:
        return _full_year(found.group("year")), 1
    found = _QUARTER_YEAR.match(segment)
    if found:
        return f"Q{found.group('q') or found.group('n')} {_full_year(found.group('year'))}", 1
    quarter, year = _QUARTER.match(segment), _YEAR_PERIOD.match(following)
    if quarter and year and not year.group("q"):
        return f"Q{quarter.group(1)} {year.group('year')}", 2
    return "", 0


def _kind(segment: str, following: str) -> tuple[str, int]:
    """The kind a segment, or it and the next, names ("10-K", "annual report"; "" none), and
    how many segments it takes."""
    pair = f"{segment} {following}".lower()
    if pair in _KIND_PAIRS:
        return _KIND_PAIRS[pair], 2
    if _KIND.match(segment):
        return _KIND_NAMES.get(segment.upper(), _FORM_NUMBER.sub(r"\1-\2", segment.upper())), 1
    return "", 0


def file_name_fields(stem: str) -> tuple[str, str, str]:
    """``(name, period, kind)`` read from a file name without its extension (see the module
    docstring); "" where absent. The name is given only beside a period or kind (a bare
    "Independents-Report" names nothing), and an arXiv id names only the kind, a paper."""
    if not stem:
        return "", "", ""
    if _ARXIV.match(stem):
        return "", "", "paper"
    segments = [s for s in re.split(r"[_\s]+", stem) if s]
    if len(segments) == 1:  # "apple-2023-annual-report": hyphens part it; else they join ("Coca-Cola")
        segments = _SEGMENT.findall(stem)
    name: list[str] = []
    period = kind = ""
    i = 0
    while i < len(segments):
        following = segments[i + 1] if i + 1 < len(segments) else ""
        found_period, taken = ("", 0) if period else _period(segments[i], following)
        if not taken and not kind:
            found_kind, taken = _kind(segments[i], following)
            kind = kind or found_kind
        period = period or found_period
        if not taken and not period and not kind:
            name.append(segments[i])
        i += max(taken, 1)
    if not (period or kind) or (name and _CODE.match(name[0])):  # "dl_comp_mech_slides": a code, not a name
        return "", period, kind
    name = [n for n in name[:2] if re.search(r"[A-Za-z]", n) and (len(n) >= 3 or re.search(r"\d", n))]  # not "PH"
    return " ".join(name), period, kind
