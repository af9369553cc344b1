"""What a person picks a document from a shelf by — title, organisation, period, kind —
guessed without a model, kept beside the document, and editable.

Sources, in the order they are trusted: what the user set (``docgraph meta``), the cover
page (a filing's registrant and fiscal period, a report's organisation line and date), the
lines the document prints in its margins page after page (``running_lines``: a report's
running title, a publisher's copyright footer) and the heading of a filing's statements
("THE COCA-COLA COMPANY AND SUBSIDIARIES", where the cover prints the name as a logo), the
PDF's metadata title, the file's name ("3M_2018_10K" names 3M, 2018 and a 10-K), and the
page shape (a deck of landscape pages of few words is slides). ``guess_metadata`` is a pure
function of those texts; ``documents.metadata_store`` keeps the result in the store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ..types import ComponentKind, Document, Page
from .file_names import REPORT_KINDS, file_name_fields
from .running_lines import RunningLine, running_lines

GUESSER = 15  # the version of the guessing rules: a label guessed by older rules is guessed again
FIELDS = ("title", "organisation", "period", "kind", "ticker")
COVER_CHARS = 4000
SLIDE_WORDS = 200  # a page's median words below which landscape pages are slides (prose runs to 400 and more)
TITLE_SHARE = 0.5  # a running line on at least this share of the pages read may name the document

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = (
    r"(?P<month>"
    + "|".join(m.capitalize() for m in _MONTHS)
    + "|"
    + "|".join(_MONTHS)
    + "|"
    + "|".join(m.upper() for m in _MONTHS)
    + r")"
)
_DATE = re.compile(_MONTH + r"\s+(?P<day>\d{1,2}),?\s+(?P<year>(?:19|20)\d\d)\b")
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r",?\s+(?P<year>(?:19|20)\d\d)\b")  # "January 2012", "March, 2020"
_PERIOD_END = re.compile(r"(?P<what>fiscal\s+year|quarterly\s+period|year|quarter|period)\s+ended", re.IGNORECASE)
_COPYRIGHT = re.compile(r"(?:©|\(c\)|copyright)\s*((?:19|20)\d\d)\b", re.IGNORECASE)
_REGISTRANT = re.compile(r"([^\n]{2,90}?)\s*\n[\s_]*\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.IGNORECASE)
_ORG_SUFFIX = re.compile(
    r"^(?:the\s+)?[A-Z0-9][\w&.,'’ -]{0,70}?\b(?:inc|incorporated|corp|corporation|company|co|ltd|limited|llc|plc|"
    r"group|holdings|ag|sa|nv|se|center|centre|institute|university|foundation|association|council|agency|bank|"
    r"organi[sz]ation|ministry|department|trust|consortium)\.?$",
    re.IGNORECASE,
)
_NOT_ORG = re.compile(
    r"securities\s+and\s+exchange|^state\s+of|^name\s+of|^title\s+of|exchange,?\s+inc|"
    r"file\s+number|transition\s+period|\(mark\s+one\)|^(?:or|form\s+[\w-]+)$|"
    r"\b(?:our|the|this)\s+(?:company|corporation|group|bank|trust|organi[sz]ation)\.?$",  # "Officers of the Company"
    re.IGNORECASE,
)
_FIELD_SEPARATOR = re.compile(r"\s+(?:\|\|?|·|•)\s+")  # "A || B", "A | B", "A · B"
_NAME = r"[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)+"  # a person: capitalised words, two or more
_PEOPLE = re.compile(rf"{_NAME}(?:\s*(?:,|&|\band\b)\s*{_NAME})+")  # "Leon Herrmann & Stefan Kollmannsberger"
_SUBSIDIARIES = re.compile(r",?\s+and\s+(?:its\s+)?(?:consolidated\s+)?subsidiaries\.?$", re.IGNORECASE)
_COPYRIGHT_HEAD = re.compile(r"^(?:copyright|©|\(c\))(?:\s|©|\(c\)|(?:19|20)\d\d|[-–,])*", re.IGNORECASE)
_RIGHTS = re.compile(r"[.,]?\s*all\s+rights\s+reserved\.?$", re.IGNORECASE)
_NOT_TITLE = re.compile(r"published\s+as|preprint|under\s+review|proceedings\s+of|^source:", re.IGNORECASE)
_SYMBOL_HEAD = re.compile(r"trading\s+symbol", re.IGNORECASE)
_SYMBOL = re.compile(r"[A-Z]{1,5}")
_REGISTERED = re.compile(r"section\s+12\s*\(\s*b\s*\)", re.IGNORECASE)  # listed securities, with their symbols
_UNREGISTERED = re.compile(r"12\s*\(\s*g\s*\)", re.IGNORECASE)  # the next block: no listing, no symbol
_SYMBOL_BEFORE_EXCHANGE = re.compile(
    r"(?<![\w$.,/-])([A-Z]{1,5})\s*\|?\s*(?i:the\s+)?(?i:new\s+york\s+stock|nyse\b|nasdaq\b|"
    r"chicago\s+stock|boston\s+stock|cboe\b|london\s+stock|toronto\s+stock)"
)
_EXCHANGES = frozenset({"NYSE", "NASDAQ", "AMEX", "LSE", "TSX", "CBOE", "NONE", "N", "A"})
_FORM = re.compile(r"\bform\s+(10-?k|10-?q|20-?f|8-?k|40-?f|s-1)\b", re.IGNORECASE)
_KIND_WORDS = (*REPORT_KINDS, ("abstract", "paper"))
_GENERIC_HEADING = re.compile(
    r"^(?:\d+\.?|[ivx]+\.)?\s*(?:(?:table of )?contents?|index|agenda|overview|"
    r"introduction|abstract|preface|foreword|summary|recommended citation|getting started|"
    r"at a glance|support|about(?: us| this \w+| [A-Z][\w ]+)?|related work|background|"
    r"methods?|methodology|results|discussion|conclusions?|references|acknowledge?ments|"
    r"appendix(?: \w+)?|terminology|glossary|notice|trademarks(?: and permissions)?|"
    r"(?:user(?:'s)? |owner(?:'s)? )?(?:guide|manual|handbook)|"
    r"white\s+paper|brochure|fact\s*sheet|report)\W*$",  # a kind of document, not which one
    re.IGNORECASE,
)
_NUMBERED_SECTION = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVX]+\.|[A-H]\.)\s+\S")  # "2 Related Work", "II. Methods"
_FILE_LIKE = re.compile(r"^[^\s]*[_][^\s]*$")
_DIGEST = re.compile(r"[0-9a-f]{16,}", re.IGNORECASE)  # a file named by a hash: it names nothing
_CITATION = re.compile(
    r"(?:recommended|suggested)\s+citation|how\s+to\s+cite|please\s+cite|cite\s+(?:this\s+\w+\s+)?as", re.IGNORECASE
)
_QUOTED = re.compile(r"[“\"]([^”\"\n]{8,160}?)[”\"]")
SHORT_NAME_WORDS = 3
_FILE_WORDS = frozenset(  # what file names say about every document: no name
    "report annual final draft document doc file scan copy paper slides deck presentation untitled new "
    "version v1 v2 v3 user guide manual handbook brochure".split()
)


class DocumentMeta(BaseModel):
    """A document's shelf label; ``sources`` says where each field came from ("user" fields
    are never replaced by a guess)."""

    title: str = ""
    organisation: str = ""
    period: str = ""
    kind: str = ""
    ticker: str = ""  # a listed company's trading symbol, as its filing's cover prints it
    sources: dict[str, str] = Field(default_factory=dict)
    file_name: str = ""
    guesser: int = 0  # the GUESSER that made it
    hints: dict[str, str] = Field(default_factory=dict)  # what the file gave at ingest: metadata_title, display

    def names(self) -> list[str]:
        """What the document may be called by: its organisation, its title, the name part of
        its file name ("3M" of "3M_2018_10K"), and a short file name as a whole ("STEPBACK",
        "nova_y70": up to ``SHORT_NAME_WORDS`` words, not only words that name a kind of
        document, "report_final") — what the document was called before it had a title."""
        parts = [self.organisation, self.title, file_name_fields(self.file_name)[0], short_file_name(self.file_name)]
        return [p for p in dict.fromkeys(parts) if p]


def readable_stem(stem: str) -> str:
    """A file name as words: underscores as spaces, runs of space as one ("PG_2020.03.09_US" →
    "PG 2020.03.09 US")."""
    return " ".join(stem.replace("_", " ").split())


def short_file_name(stem: str) -> str:
    """``stem`` made readable when it is short enough to be a name (``DocumentMeta.names``), else ""."""
    readable = readable_stem(stem)
    words = re.findall(r"[A-Za-z0-9]+", readable)
    if not words or len(words) > SHORT_NAME_WORDS or _DIGEST.fullmatch(readable):
        return ""
    return "" if all(w.lower() in _FILE_WORDS for w in words) else readable


def file_stem(doc: Document) -> str:
    """The name of the file the user added, without folder or extension."""
    return doc.path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]


def shown_title(doc: Document, label: DocumentMeta | None) -> str:
    """The title to show for ``doc``: its label's, else the one ingestion chose."""
    return label.title if label is not None and label.title else doc.title


@dataclass
class _Found:
    value: str
    source: str


def _quarter(month: str) -> int:
    return (_MONTHS.index(month.lower()) // 3) + 1


def cover_period(text: str) -> _Found | None:
    """A filing's "fiscal year ended December 31, 2018" (→ FY2018) or "quarterly period ended
    March 31, 2021" (→ Q1 2021, by calendar month), else the year of the cover's first full
    date, else of its first month and year ("Social Audit January 2012"), else of its copyright
    line (a bare number such as a model's "1900" is no period)."""
    for match in _PERIOD_END.finditer(text):
        date = _DATE.search(text, match.end(), match.end() + 120)
        if date is None:
            continue
        year = date.group("year")
        if "quarter" in match.group("what").lower():
            return _Found(f"Q{_quarter(date.group('month'))} {year}", "cover")
        return _Found(f"FY{year}", "cover")
    date = _DATE.search(text) or _month_year(text)
    if date is not None:
        return _Found(date.group("year"), "cover")
    copyright = _COPYRIGHT.search(text)
    return _Found(copyright.group(1), "cover") if copyright else None


def _month_year(text: str) -> re.Match | None:
    """The first month and year that a line of ``text`` gives alone: a line with several
    ("July 2011 January 2012 July 2012 …") is a chart's axis or a timeline, no date of the cover."""
    for line in text.splitlines():
        found = list(_MONTH_YEAR.finditer(line))
        if len(found) == 1:
            return found[0]
    return None


def cover_organisation(text: str) -> _Found | None:
    """The registrant a filing names, or the cover's first line that ends as an
    organisation's name does ("3M COMPANY", "Pew Research Center"); the cover's own
    wording ("Commission File Number …" above the line of a name printed as a logo) is none."""
    match = _REGISTRANT.search(text)
    if match and re.search(r"[A-Za-z]", match.group(1)) and not _NOT_ORG.search(match.group(1).strip(" _")):
        return _Found(" ".join(match.group(1).strip(" _").split()), "cover")
    for line in text.splitlines():
        name = organisation_line(line)
        if name:
            return _Found(name, "cover")
    return None


def organisation_line(line: str) -> str | None:
    """``line`` as an organisation's name when it ends as one does — "3M COMPANY", "About
    Pew Research Center", a copyright line ("Copyright © Huawei Technologies Co., Ltd.") or
    a filing's statements' heading ("THE COCA-COLA COMPANY AND SUBSIDIARIES") — else None."""
    line = re.sub(r"^(?:\d+|about)\s+", "", " ".join(line.split()).strip(" _"), flags=re.IGNORECASE)
    line = _SUBSIDIARIES.sub("", _RIGHTS.sub("", _COPYRIGHT_HEAD.sub("", line))).strip(" _")
    return line if 2 <= len(line) <= 80 and _ORG_SUFFIX.match(line) and not _NOT_ORG.search(line) else None


def running_organisation(running: Sequence[RunningLine], pages: Iterable[Page]) -> _Found | None:
    """The organisation the document prints page after page (a copyright footer, a running
    header that is a name), else the one a filing's statements are headed by ("… AND
    SUBSIDIARIES", on a few pages only), else None."""
    for line in running:
        name = organisation_line(line.text)
        if name:
            return _Found(name, "running header")
    for page in pages:
        for comp in sorted(page.components, key=lambda c: c.order):
            name = organisation_line(comp.text) if _SUBSIDIARIES.search(comp.text.strip()) else None
            if name:
                return _Found(name, "statements")
    return None


def running_title(found: _Found, running: Sequence[RunningLine]) -> _Found:
    """The title ``found`` unless the document's running lines name it better: when the
    title is only its file name, the first line on ``TITLE_SHARE`` of the pages that is
    neither an organisation, a date nor a venue; when a running line holds the title and
    adds two words or more to it ("Product Introduction" printed on every page as "Object
    Storage Service Product Introduction"; a version number is no word), that line. A line of
    fields ("authors || title || institution", a slide footer) offers its title field."""
    lines = [
        title_field(line.text)
        for line in running
        if line.share >= TITLE_SHARE
        and organisation_line(line.text) is None
        and not _DATE.search(line.text)
        and not _NOT_TITLE.search(line.text)
    ]
    if found.source == "file name":
        return _Found(lines[0][:120], "running header") if lines else found
    title = _words(found.value)
    for line in lines:
        words = _words(line)
        extra = len(words) - len(title)
        if title and extra >= 2 and any(words[i : i + len(title)] == title for i in range(extra + 1)):
            return _Found(line[:120], "running header")
    return found


def title_field(line: str) -> str:
    """The field of a running line set in fields ("Leon Herrmann & Stefan Kollmannsberger ||
    Deep Learning in Computational Mechanics || Bauhaus-Universität Weimar") that is a title:
    of those that are neither people (names joined by "&", "and" or commas), an organisation,
    a date nor a number, one with a lower-case word ("in", "of") before one of capitalised
    words only, then the longest; the whole line when it has no fields or none is such."""
    fields = [f.strip() for f in _FIELD_SEPARATOR.split(line) if f.strip()]
    titled = [
        f
        for f in fields
        if len(fields) > 1
        and not _PEOPLE.fullmatch(f)
        and organisation_line(f) is None
        and not _DATE.search(f)
        and not _MONTH_YEAR.search(f)
        and _words(f)
    ]
    return max(titled, key=lambda f: (bool(re.search(r"(?<!\S)[a-z]", f)), len(_words(f)))) if titled else line


def _words(text: str) -> list[str]:
    """The words of ``text`` that hold letters, in lower case: "Release 2.18.0" adds one."""
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if re.search(r"[a-z]", w)]


def cover_ticker(text: str) -> _Found | None:
    """A filing's trading symbol from its cover's table of securities registered under
    Section 12(b): the symbol a row sets just before its exchange's name ("Common Stock,
    $5.00 Par Value BA New York Stock Exchange", however the table's cells were read), else
    the first symbol-like cell under the "Trading Symbol(s)" head ("JPM"); never past that
    table (the Section 12(g) block and the check boxes after it: "NONE", "YES")."""
    registered = _REGISTERED.search(text)
    if registered is not None:
        block = _before_unregistered(text[registered.end() : registered.end() + 1200])
        for row in _SYMBOL_BEFORE_EXCHANGE.finditer(block):
            if row.group(1) not in _EXCHANGES:
                return _Found(row.group(1), "cover")
    head = _SYMBOL_HEAD.search(text)
    if head is None:
        return None
    for cell in re.split(r"[\n|]", _before_unregistered(text[head.end() : head.end() + 400])):  # lines, or cells
        cell = cell.strip()
        if _SYMBOL.fullmatch(cell) and cell not in _EXCHANGES:
            return _Found(cell, "cover")
    return None


def _before_unregistered(text: str) -> str:
    """``text`` up to the cover's Section 12(g) block (securities not listed: no symbol)."""
    end = _UNREGISTERED.search(text)
    return text if end is None else text[: end.start()]


def cover_kind(text: str, landscape_share: float, words_per_page: float = 0.0) -> _Found | None:
    """A document's kind from its cover's form or kind words, else from its pages' shape: a
    deck of landscape pages is slides when a page holds no more words than a slide does
    (a report laid out in landscape holds paragraphs)."""
    form = _FORM.search(text)
    if form:
        return _Found(form.group(1).upper().replace("10K", "10-K").replace("10Q", "10-Q"), "cover")
    lowered = text.lower()
    for words, kind in _KIND_WORDS:
        if words in lowered:
            return _Found(kind, "cover")
    if landscape_share >= 0.8 and words_per_page < SLIDE_WORDS:
        return _Found("slides", "page shape")
    return None


def cited_title(cover: str) -> str | None:
    """The title a cover's citation line quotes — "RECOMMENDED CITATION: Pew Research Center,
    March, 2020, “Americans and Germans Differ in Their Views of Each Other and the World”" —
    or None: a publisher that prints its title as a picture still spells it there."""
    citation = _CITATION.search(cover)
    quoted = _QUOTED.search(cover, citation.end(), citation.end() + 400) if citation else None
    title = quoted.group(1).strip().rstrip(".,") if quoted else ""
    return title if len(title.split()) >= 3 else None


def subtitled(display: str | None, cover: str) -> str | None:
    """The cover's display line with its subtitle when it announces one: "The Impact of Open
    Access Latin American Scholarship:" set large, and the cover line that holds it going on in
    smaller type ("… Scholarship: Digitizing the Backlist …"). The display line otherwise."""
    shown = " ".join((display or "").split())
    if not shown.endswith(":"):
        return display
    for line in cover.splitlines():
        line = " ".join(line.split())
        if line.startswith(shown) and len(line) > len(shown):
            return line
    return display


def better_title(
    current: str, cover_titles: Iterable[str], stem: str, display: str | None = None, cited: str | None = None
) -> _Found:
    """The title ingestion chose unless it names no document — a generic heading
    ("Contents:"), a numbered section ("2 Related Work") or a file name ("…_FINAL") — then
    the cover's first real heading, else what the cover prints largest (``display``:
    ``cover_text.display_line``), else the title its citation line quotes (``cited_title``),
    else the file name made readable; a numbered section only before a file name that is a
    bare digest ("7c3f6204…")."""
    current = " ".join(current.split())
    section = ""  # the first numbered section heading met, the last resort
    if current and not _GENERIC_HEADING.match(current) and not _FILE_LIKE.match(current):
        if not _NUMBERED_SECTION.match(current):
            return _Found(current, "ingest")
        section = current
    for heading in cover_titles:
        heading = " ".join(heading.split())
        if _GENERIC_HEADING.match(heading) or len(heading) < 4 or not re.search(r"[A-Za-z]{3}", heading):
            continue
        if not _NUMBERED_SECTION.match(heading):
            return _Found(heading[:120], "cover")
        section = section or heading[:120]
    if display and not _GENERIC_HEADING.match(display) and not _NUMBERED_SECTION.match(display):
        return _Found(" ".join(display.split())[:120], "cover")
    if cited:
        return _Found(" ".join(cited.split())[:120], "cover")
    readable = readable_stem(stem)
    if section and (not readable or _DIGEST.fullmatch(readable)):
        return _Found(section, "cover")
    return _Found(readable or current, "file name")


def guess_metadata(
    doc: Document, pages: Iterable[Page], metadata_title: str | None = None, display: str | None = None
) -> DocumentMeta:
    """The document's shelf label from its pages (``pages`` in any order: the first two are
    its cover, all of them are read for running lines — ``store_guess`` passes the first two
    and a sample), its file name, and what the file itself gave: its metadata title and its
    cover's display line (``cover_text``); pure."""
    ordered = sorted(pages, key=lambda p: p.number)
    first = ordered[:2]
    running = running_lines(ordered) if len(ordered) > 2 else []
    cover = "\n".join(c.text for p in first for c in sorted(p.components, key=lambda c: c.order))[:COVER_CHARS]
    headings = [
        c.text
        for p in first
        for c in sorted(p.components, key=lambda c: c.order)
        if c.kind is ComponentKind.TITLE and not c.furniture
    ]
    stem = file_stem(doc)
    file_name, file_period, file_kind = file_name_fields(stem)
    landscape = sum(1 for p in first if p.width > p.height * 1.05) / len(first) if first else 0.0
    inside = [len(" ".join(c.text for c in p.components).split()) for p in ordered[2:] or ordered]
    words_per_page = float(sorted(inside)[len(inside) // 2]) if inside else 0.0
    found: dict[str, _Found | None] = {
        "title": running_title(
            better_title(doc.title, headings, stem, subtitled(display, cover), cited_title(cover)), running
        ),
        "organisation": cover_organisation(cover)
        or running_organisation(running, ordered)
        or (_Found(file_name, "file name") if file_name else None),
        "period": cover_period(cover) or (_Found(file_period, "file name") if file_period else None),
        "kind": cover_kind(cover, landscape, words_per_page) or (_Found(file_kind, "file name") if file_kind else None),
        "ticker": cover_ticker(cover),
    }
    if metadata_title and found["organisation"] is None and " - " in metadata_title:
        found["organisation"] = _Found(metadata_title.rsplit(" - ", 1)[-1].strip(), "pdf metadata")
    kind, organisation, period = found["kind"], found["organisation"], found["period"]
    if kind is not None and kind.source == "cover" and kind.value[:1].isdigit() and organisation is not None:
        found["title"] = _Found(
            " ".join(filter(None, [organisation.value, "Form", kind.value, period.value if period else ""])), "cover"
        )
    hints = {"metadata_title": metadata_title or "", "display": display or ""}
    meta = DocumentMeta(file_name=stem, guesser=GUESSER, hints={k: v for k, v in hints.items() if v})
    for name, value in found.items():
        if value is not None and value.value:
            setattr(meta, name, value.value)
            meta.sources[name] = value.source
    return meta


def label_matches(words: Iterable[str], title: str, label: DocumentMeta | None, file_name: str) -> bool:
    """Whether every one of ``words`` (case aside) occurs in what a document is known by: its
    title, label fields (organisation, period, kind, trading symbol) and file name — as the
    web app's document filter reads them."""
    fields = [title, file_name] + ([label.organisation, label.period, label.kind, label.ticker] if label else [])
    known = " ".join(fields).lower()
    return all(word.lower() in known for word in words)
