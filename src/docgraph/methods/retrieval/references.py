"""Explicit references in a question: "figure 3", "Table 2", "Chapter 14", "section 3.2",
"slide 14", "page 7", and their ordinal forms: "the first figure", "the second table"; the
labels of papers and filings too: "TABLE IV" (Roman numerals read as numbers, so "Table 4"
finds it), "Item 7A", "Note 10", "Exhibit 10.1", "Part II", "Appendix B".

Questions about documents point at their parts by label as often as by content ("In
figure 3, how many icons…", "How many colors are in slide 14?"), and a label is exactly
what text similarity cannot match: the caption "Figure 3: …" shares one word with the
question. ``query_references`` reads the labels of a question; ``LabelIndex`` knows which
chunks *define* a label (a line that starts with it and goes on as a caption or a heading
does: "Figure 3: …", "NOTE 10 — …", "TABLE II"; not "Figure 3 shows…") and
which merely mention it, so a reference resolves to the page a figure, table, chapter or
section is on, and a page or slide number to that page of each document.

``asked_modalities`` reads the kinds of element a question asks about without a number
("how many charts…", "the photo of the library", "which table lists…"): the chunk
modalities (``image``, ``table``) whose pages can hold the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...types import Chunk

Label = tuple[str, str]  # (kind, number): ("figure", "3"), ("section", "3.2"), ("item", "7a"), ("page", "14")
_KINDS = {
    "fig": "figure",
    "figure": "figure",
    "figures": "figure",
    "table": "table",
    "tables": "table",
    "tab": "table",
    "chapter": "chapter",
    "chapters": "chapter",
    "section": "section",
    "sections": "section",
    "unit": "unit",
    "units": "unit",
    "slide": "page",
    "slides": "page",
    "page": "page",
    "pages": "page",
    "item": "item",
    "items": "item",
    "note": "note",
    "notes": "note",
    "exhibit": "exhibit",
    "exhibits": "exhibit",
    "appendix": "appendix",
    "appendices": "appendix",
    "annex": "appendix",
    "annexes": "appendix",
    "part": "part",
    "parts": "part",
}
_WORDS = (
    r"(figures?|fig|tables?|tab|chapters?|sections?|units?|slides?|pages?|items?|notes?|exhibits?"
    r"|appendix|appendices|annex(?:es)?|parts?)"
)
# ordinals count only figures, tables, chapters, sections, units and pages: "the second part" is no Part 2
_ORDINAL_WORDS = r"(figures?|fig|tables?|tab|chapters?|sections?|units?|slides?|pages?)"
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_CARDINALS = (
    {word: n for n, word in enumerate(_UNITS, 1)}
    | {word: n for n, word in enumerate(_TEENS, 10)}
    | {word: 10 * n for n, word in enumerate(_TENS, 2)}
)
_SPELLED = rf"(?:{'|'.join(_TENS)})(?:[- ]?(?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|{'|'.join(_UNITS)}"
# 3, 3.2, 1A / 3a (a sub-part), a Roman numeral (TABLE IV, PART II), a spelled number (CHAPTER
# EIGHTEEN, as Sphinx and many books print it) or an appendix letter (Appendix B, B.2)
_NUMBER = rf"(\d{{1,4}}(?:\.\d{{1,3}})*[a-z]?|(?-i:[IVXL]{{1,6}})|{_SPELLED}|(?-i:[A-Z])(?:\.\d{{1,3}})*)"
_QUERY = re.compile(rf"\b{_WORDS}\.?\s*{_NUMBER}\b", re.IGNORECASE)
_ORDINALS = {
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
}
_ORDINAL_QUERY = re.compile(
    rf"\b({'|'.join(_ORDINALS)}|(\d{{1,3}})(?:st|nd|rd|th))\s+{_ORDINAL_WORDS}\b", re.IGNORECASE
)
# a caption or heading: the label ends its line or is followed by punctuation or a capitalised
# word ("Figure 6: The interface", "NOTE 10 — TAXES", "TABLE II"); "Figure 6 shows…" is prose
_DEFINES = re.compile(
    rf"^\s*{_WORDS}\.?\s*{_NUMBER}\b(?=[ \t]*(?:$|[:.|)\u2013\u2014-]|(?-i:[A-Z0-9(\"\u201c'])))",
    re.IGNORECASE | re.MULTILINE,
)
# a caption the layout ran into other text ("…accuracy (%) Figure 5: Substantially improved…"):
# a figure or table label, a colon and a capitalised word, anywhere in a line
_INLINE_CAPTION = re.compile(rf"\b(figures?|fig|tables?|tab)\.?\s*{_NUMBER}\b(?=:[ \t]*(?-i:[A-Z]))", re.IGNORECASE)
_NUMBERED_HEADING = re.compile(r"^\s*(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(?=[A-Z])")  # "3.2 Results": section 3.2
_TITLE = re.compile(r"^TI\d+$")  # a title component's id (kind value + count: documents.pages)
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50}
_LETTERED = ("appendix", "exhibit", "part")  # kinds numbered by letters as well (Appendix B)


def _roman(numeral: str) -> int | None:
    """The value of a well-formed Roman numeral up to 89, else None ("IIII", "VV" are no numbers)."""
    values = [_ROMAN[c] for c in numeral]
    total = sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))
    canonical, rest = "", total
    for value, symbol in ((50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        count, rest = divmod(rest, value)
        canonical += symbol * count
    return total if canonical == numeral and total > 0 else None


def _label(match: re.Match) -> Label | None:
    """The label a reference match names, numbers normalised (Roman to Arabic, sub-part
    letters lower case); None for what only looks like one: a letter after a kind that is
    not numbered by letters ("table A" is no table), a malformed Roman numeral, or a lone
    "I" after a lower-case word ("the part I need")."""
    word, number = match.group(1), match.group(2)
    kind = _KINDS[word.lower()]
    spelled = re.split(r"[- ]", number.lower())
    if spelled[0] in _CARDINALS:
        return kind, str(sum(_CARDINALS[part] for part in spelled))
    if number.isupper() and number.isalpha():
        if number == "I" and word.islower():
            return None
        roman = _roman(number) if kind != "page" and set(number) <= set(_ROMAN) else None
        if roman is not None:
            return kind, str(roman)
        if len(number) == 1 and kind in _LETTERED:
            return kind, number
        return None
    if number[0].isupper():  # B.2
        return (kind, number) if kind == "appendix" else None
    label = (kind, number.lower())
    return _stem(label) or label if kind == "page" else label  # "slide 14b": slide 14


def _stem(label: Label) -> Label | None:
    """The label without its sub-part letter ("item", "7a") -> ("item", "7"); None if it has none."""
    kind, number = label
    return (kind, number[:-1]) if number[-1:].isalpha() and number[:-1][-1:].isdigit() else None


def query_references(query: str) -> list[Label]:
    """The labels a question refers to, in order of appearance, without repeats: "figure 3"
    and "the third figure" both give ("figure", "3") (an ordinal counts from the start of
    the document, as labels do); "Table IV" gives ("table", "4"), "Item 7A" ("item", "7a"),
    "Appendix B" ("appendix", "B")."""
    found = [(m.start(), label) for m in _QUERY.finditer(query) if (label := _label(m))]
    for m in _ORDINAL_QUERY.finditer(query):
        number = m.group(2) or _ORDINALS[m.group(1).lower()]
        found.append((m.start(), (_KINDS[m.group(3).lower()], str(int(number)))))
    return list(dict.fromkeys(label for _, label in sorted(found, key=lambda item: item[0])))


@dataclass
class LabelIndex:
    """Chunk rows defining (caption and heading lines) and mentioning each label but pages."""

    defines: dict[Label, list[int]] = field(default_factory=dict)
    mentions: dict[Label, list[int]] = field(default_factory=dict)
    parts: dict[Label, list[int]] = field(default_factory=dict)  # "figure 3": rows defining Figure 3a, 3b…
    headings: dict[Label, list[int]] = field(default_factory=dict)  # ("section", "3.2"): under "3.2 Results"

    @classmethod
    def build(cls, chunks: Sequence[Chunk], heading_label: Callable[[str], Label | None] | None = None) -> LabelIndex:
        """The labels of ``chunks`` (in reading order); a numbered heading ("3.2 Results", as
        papers and manuals number sections without the word) is its section's heading, at
        the first chunk under it, and so is a heading ``heading_label`` names (a lexicon's
        statement titles: "CONSOLIDATED BALANCE SHEETS", ``methods.retrieval.lexicon``)."""
        index = cls()
        sections: set[tuple] = set()
        for row, chunk in enumerate(chunks):
            key = (chunk.doc_id, tuple(chunk.section_path))
            opens_section = bool(chunk.section_path) and key not in sections
            if opens_section:
                sections.add(key)
                if numbered := _NUMBERED_HEADING.match(chunk.section_path[-1]):
                    index.headings.setdefault(("section", numbered.group(1)), []).append(row)
            if heading_label is not None:
                # its section's heading, and its own first line when it starts with a title
                # component (a title the layout did not make a section of)
                titles = [chunk.section_path[-1]] if opens_section else []
                if chunk.component_ids and _TITLE.match(chunk.component_ids[0]):
                    titles.append(chunk.text.split("\n", 1)[0])
                for named in sorted({label for title in titles if (label := heading_label(title))}):
                    index.headings.setdefault(named, []).append(row)
            defined = {label for m in _DEFINES.finditer(chunk.text) if (label := _label(m)) and label[0] != "page"}
            defined |= {label for m in _INLINE_CAPTION.finditer(chunk.text) if (label := _label(m))}
            for label in sorted(defined):
                index.defines.setdefault(label, []).append(row)
                if (stem := _stem(label)) is not None:
                    index.parts.setdefault(stem, []).append(row)
            for m in _QUERY.finditer(chunk.text):
                label = _label(m)
                if label and label[0] != "page":
                    index.mentions.setdefault(label, []).append(row)
        return index

    def cross_references(self, doc: np.ndarray, page: np.ndarray) -> np.ndarray:
        """``(mention row, definition row)`` pairs: each chunk mentioning a label that its
        document defines (``defining``) on another page, joined to the nearest such definition
        in reading order (a packed corpus or a textbook defines "Table 1" more than once).
        ``doc`` and ``page`` give each row's document and page."""
        pairs = []
        for label, mentions in self.mentions.items():
            defined = np.array(self.defining(label), dtype=np.int64)
            if not len(defined):
                continue
            for row in mentions:
                candidates = defined[doc[defined] == doc[row]]
                if len(candidates):
                    nearest = int(candidates[np.argmin(np.abs(candidates - row))])
                    if page[nearest] != page[row]:
                        pairs.append((row, nearest))
        return np.array(sorted(set(pairs)), dtype=np.int64).reshape(-1, 2)

    def defining(self, label: Label) -> list[int]:
        """Chunks defining ``label``; else defining its parts ("figure 3": Figure 3a, 3b);
        else, for a section, the first under its numbered heading ("section 3.2": "3.2
        Results"); else none."""
        return self.defines.get(label) or self.parts.get(label) or self.headings.get(label) or []

    def rows(self, label: Label) -> list[int]:
        """The chunks ``defining`` the label; else, for a part ("figure 3a"), those defining
        the whole; else those mentioning it."""
        stem = _stem(label)
        return self.defining(label) or (stem and self.defines.get(stem)) or self.mentions.get(label, [])


_ELEMENT_WORDS = {
    "image": (
        "chart",
        "charts",
        "graph",
        "graphs",
        "plot",
        "plots",
        "figure",
        "figures",
        "fig",
        "diagram",
        "diagrams",
        "image",
        "images",
        "picture",
        "pictures",
        "photo",
        "photos",
        "photograph",
        "photographs",
        "map",
        "maps",
        "logo",
        "logos",
        "illustration",
        "illustrations",
        "icon",
        "icons",
        "infographic",
        "infographics",
        "screenshot",
        "screenshots",
        "drawing",
        "drawings",
    ),
    "table": ("table", "tables"),
}
_ELEMENT_QUERY = {
    modality: re.compile(rf"\b({'|'.join(words)})\b", re.IGNORECASE) for modality, words in _ELEMENT_WORDS.items()
}


def asked_modalities(query: str) -> tuple[str, ...]:
    """Chunk modalities of the elements the question names ("charts" → image, "table" →
    table), in a fixed order; empty when it names none."""
    return tuple(modality for modality, pattern in _ELEMENT_QUERY.items() if pattern.search(query))


def later_runs(pages: Sequence[tuple[object, int]]) -> set[int]:
    """Of ``pages`` (document or part of one, page number; sorted) titled as one statement,
    the indices of those after their document's first run of pages: a report prints its
    primary statements before the notes and schedules that title a statement again (the
    guarantors' "Condensed Consolidating Balance Sheets", a parent company's, a quarter's),
    and "the balance sheet" means the first: the later runs are not what it refers to. The
    caller gives parts (``documents.parts``) where a file holds several documents, so each
    filing packed into one PDF has its own."""
    later: set[int] = set()
    for i in range(1, len(pages)):
        (doc_before, before), (doc, page) = pages[i - 1], pages[i]
        if doc == doc_before and (i - 1 in later or page - before > 2):
            later.add(i)
    return later
