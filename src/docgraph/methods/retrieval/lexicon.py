"""A domain lexicon read into a question: derived measures and the statements they are
computed from, and the front matter a document's first page prints.

"What is the FY2021 inventory turnover ratio for Nike?" is answered from two pages, the
income statement (cost of sales) and the balance sheet (inventories), and neither prints
"turnover" or "ratio": text similarity finds the management discussion that talks about
inventories instead. "What is the date of the document?" is answered by its cover, which
shares no word with it. A ``Lexicon`` (TOML files: the bundled ``lexicons/finance.toml``
and ``lexicons/documents.toml``, and any a user adds through ``retrieval.lexicons``) names

- **statements**: sections a document titles by name ("CONSOLIDATED BALANCE SHEETS",
  "Consolidated Statements of Operations"), each under a key (``balance_sheet``), and the
  line items a standard has it print (``items``: "goodwill", "total current liabilities"),
  unless the question asks them of a part of the business (``[line_items] parts``: "segment");
- **measures**: quantities computed from others ("inventory turnover", "cash ratio"), each
  with the line items it takes (``inputs``) and the statements that print them;
- **front matter**: what a question asks about the document itself ("the title of this
  report", "who wrote the paper", "the defendant").

``Lexicon.read(question)`` gives what a question asks through it: labels resolved like
explicit references (``methods.retrieval.references``) — the statements it names, those its
measures imply, those that print the line items it names, then ``COVER`` (the first page of
each document) — and the input terms to add to its sparse query.
``Lexicon.heading_label(heading)`` tells which statement a section heading titles, so the page
it starts on defines that statement.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

from ...errors import ConfigError

K = TypeVar("K")
Label = tuple[str, str]  # ("statement", "balance_sheet"), as methods.retrieval.references labels
COVER: Label = ("cover", "1")  # the first page of each document
BUNDLED = ("finance.toml", "documents.toml")
_FRONT_MATTER_KEYS = ("attributes", "documents", "names")
# what a statement's title may open with: the company's name and "and Subsidiaries" (capitalised
# words, "and", "of", "&"), "Consolidated": "3M Company and Subsidiaries Consolidated Balance Sheet"
_TITLE_PREFIX = r"(?-i:(?:(?:[A-Z0-9][\w&.,'\u2019-]*|and|of|&)\s+){0,12}?)"
# what may follow the name in a title: nothing, punctuation but a colon ("Balance Sheet:" runs a
# paragraph in), a parenthesis ("(in millions)"), a date or a period ("At December 31", "Years Ended…")
_TITLE_REST = (
    r"\s*(?:$|[.,(\u2013\u2014-]|(?:as\s+)?(?:of|at|for)\b|(?:years?|fiscal|periods?|quarters?|"
    r"three|six|nine|twelve|months?|ended|ending)\b)"
)
_SPLIT_WORD = re.compile(r"\b(\w{2,}) (\w)(?=\s|$)")  # "Balance Shee t At": text layers split a word's last letter


@dataclass(frozen=True)
class Measure:
    """A quantity computed from line items: its names, its inputs, the statements holding them."""

    names: tuple[str, ...]
    inputs: tuple[str, ...]
    statements: tuple[str, ...]


@dataclass(frozen=True)
class LexiconReading:
    """What a question asks through a lexicon: labels (the statements it names, then those
    its measures imply, then those printing the line items it names, without repeats; then
    ``COVER`` when it asks for front matter), the measures' input terms for the sparse query,
    and the line items the question names, as it writes them."""

    labels: tuple[Label, ...] = ()
    terms: tuple[str, ...] = ()
    items: tuple[str, ...] = ()

    def sparse_query(self, question: str) -> str:
        """The question with the input terms after it (unchanged when there are none)."""
        return f"{question}\n{' '.join(self.terms)}" if self.terms else question


def _phrase(name: str) -> str:
    """A regex for a lexicon name: case-free, each word with an optional plural "s", any run of
    spaces, hyphens or underscores between words, and an apostrophe optional (straight or curly)."""
    words = [re.escape(w).replace("'", "['\u2019]?") for w in re.split(r"[\s_-]+", name.strip()) if w]
    return r"[\s_-]+".join(rf"{w}(?:e?s)?" if w[-1].isalpha() else w for w in words)


class Lexicon:
    """Statements, measures and front matter from one or more TOML files (``lexicons/*.toml``)."""

    def __init__(
        self,
        statements: Mapping[str, Sequence[str]],
        measures: Sequence[Measure],
        front_matter: Mapping[str, Sequence[str]] | None = None,
        items: Mapping[str, Sequence[str]] | None = None,
        parts: Sequence[str] = (),
    ) -> None:
        unknown = sorted({s for m in measures for s in m.statements} - set(statements))
        if unknown:
            raise ConfigError(
                f"lexicon: measures name statements no file defines: {', '.join(unknown)}; "
                "add them under [statements.<key>] with their names"
            )
        self.statements = {key: tuple(names) for key, names in statements.items()}
        self.measures = tuple(measures)
        self._named = [
            (key, re.compile(rf"\b(?:{'|'.join(map(_phrase, names))})\b", re.IGNORECASE))
            for key, names in self.statements.items()
            if names
        ]
        self._titles = [
            (key, re.compile(rf"^{_TITLE_PREFIX}(?:{'|'.join(map(_phrase, names))}){_TITLE_REST}", re.IGNORECASE))
            for key, names in self.statements.items()
            if names
        ]
        self.items = {key: tuple(names) for key, names in (items or {}).items() if key in self.statements}
        self._items = [
            (key, re.compile(rf"\b(?:{'|'.join(map(_phrase, names))})\b", re.IGNORECASE))
            for key, names in self.items.items()
            if names
        ]
        self.parts = tuple(parts)
        self._parts = re.compile(rf"\b(?:{'|'.join(map(_phrase, parts))})\b", re.IGNORECASE) if parts else None
        self._measures = [
            (m, re.compile(rf"\b(?:{'|'.join(map(_phrase, m.names))})\b", re.IGNORECASE))
            for m in self.measures
            if m.names
        ]
        self.front_matter = {key: tuple((front_matter or {}).get(key, ())) for key in _FRONT_MATTER_KEYS}
        self._front_matter = _front_matter_pattern(**self.front_matter)

    @classmethod
    def load(cls, extra: Iterable[str | Path] = (), bundled: Iterable[str] = BUNDLED) -> Lexicon:
        """The bundled lexicons plus the TOML files ``extra`` (a user's own domain); a statement
        key defined twice merges its names. A missing or malformed file raises a
        ``ConfigError`` naming it."""
        texts = [
            (f"lexicons/{name}", resources.files(__package__).joinpath("lexicons", name).read_text("utf-8"))
            for name in bundled
        ]
        for path in extra:
            try:
                texts.append((str(path), Path(path).read_text("utf-8")))
            except OSError as exc:
                raise ConfigError(f"lexicon {path}: cannot read it ({exc.strerror}); fix retrieval.lexicons") from exc
        statements: dict[str, list[str]] = {}
        items: dict[str, list[str]] = {}
        parts: list[str] = []
        measures: list[Measure] = []
        front_matter: dict[str, list[str]] = {}
        for source, text in texts:
            try:
                data = tomllib.loads(text)
                for key, table in data.get("statements", {}).items():
                    statements.setdefault(key, []).extend(str(n) for n in table.get("names", []))
                    items.setdefault(key, []).extend(str(n) for n in table.get("items", []))
                measures.extend(
                    Measure(
                        tuple(map(str, m["names"])),
                        tuple(map(str, m.get("inputs", []))),
                        tuple(map(str, m.get("statements", []))),
                    )
                    for m in data.get("measures", [])
                )
                parts.extend(map(str, data.get("line_items", {}).get("parts", [])))
                for key in _FRONT_MATTER_KEYS:
                    front_matter.setdefault(key, []).extend(map(str, data.get("front_matter", {}).get(key, [])))
            except (tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise ConfigError(
                    f"lexicon {source}: not a lexicon file ({exc}); see "
                    "docgraph/methods/retrieval/lexicons/finance.toml for the format"
                ) from exc
        return cls(statements, measures, front_matter, items, parts)

    def read(
        self, question: str, measures: bool = True, front_matter: bool = True, line_items: bool = True
    ) -> LexiconReading:
        """What ``question`` asks through the lexicon: with ``measures``, the statements it
        names or its measures imply and its measures' inputs, and with ``line_items`` too,
        the statements printing the line items it names and those items (none when it asks
        them of a part of the business, a segment); with ``front_matter``, ``COVER`` when it
        asks about the document itself."""
        keys: list[str] = []
        terms: list[str] = []
        items: list[str] = []
        if measures:
            named = _found(self._named, question)
            asked = _found(self._measures, question)
            keys = [key for _, key in named] + [key for _, measure in asked for key in measure.statements]
            if line_items and not (self._parts is not None and self._parts.search(question)):
                mentions = sorted(
                    (m.start(), key, m.group(0)) for key, pattern in self._items for m in pattern.finditer(question)
                )
                keys += [key for _, key, _ in mentions]
                items = [text for _, _, text in mentions]
            terms = [term for _, measure in asked for term in measure.inputs]
        labels = [("statement", key) for key in dict.fromkeys(keys)]
        if front_matter and self._front_matter is not None and self._front_matter.search(question):
            labels.append(COVER)
        return LexiconReading(tuple(labels), tuple(dict.fromkeys(terms)), tuple(dict.fromkeys(items)))

    def heading_label(self, heading: str) -> Label | None:
        """The statement a section heading titles ("CONSOLIDATED BALANCE SHEETS" →
        ("statement", "balance_sheet")); None for any other heading, a long one included
        (a sentence that starts with a statement's name is no title)."""
        if len(heading) > 160:
            return None
        heading = _SPLIT_WORD.sub(r"\1\2", heading.strip())
        for key, pattern in self._titles:
            if pattern.match(heading):
                return "statement", key
        return None


def _found(patterns: Sequence[tuple[K, re.Pattern]], text: str) -> list[tuple[int, K]]:
    """(where, key) of each pattern found in ``text`` (its first match), in order of appearance."""
    found = ((m.start(), key) for key, pattern in patterns for m in [pattern.search(text)] if m)
    return sorted(found, key=lambda where: where[0])


# after a document noun: a clause or label that picks out a part ("the title of the slide
# that shows revenue", "the date of the report on page 4", "slide 5") — not the document
_WHOLE = r"(?!\s+(?:that|which|where|whose|when|with|showing|shows|about|on|in|for|from|of|\d))"


def _front_matter_pattern(
    attributes: Sequence[str], documents: Sequence[str], names: Sequence[str]
) -> re.Pattern | None:
    """What asks about a document itself: an attribute of it ("the title of this report",
    "the paper's authors"), who made it ("who wrote the book"), or a name only front
    matter carries ("defendant"); None when the lexicon gives none."""
    forms = []
    if attributes and documents:
        attribute = "|".join(map(_phrase, attributes))
        document = "|".join(map(_phrase, documents))
        forms += [
            rf"(?:{attribute})\s+of\s+(?:the|this)\s+(?:{document}){_WHOLE}",
            rf"(?:the|this|its)\s+(?:{document})(?:['\u2019]s)?\s+(?:{attribute})",
            rf"who\s+(?:wrote|presented|published|authored|edited|issued|signed)\s+(?:the|this)\s+(?:{document})",
        ]
    if names:
        forms.append("|".join(map(_phrase, names)))
    return re.compile(rf"\b(?:{'|'.join(forms)})\b", re.IGNORECASE) if forms else None


@lru_cache(maxsize=8)
def lexicon(extra: tuple[str, ...] = ()) -> Lexicon:
    """The lexicon of the bundled files plus ``extra`` (cached per list of files)."""
    return Lexicon.load(extra)
