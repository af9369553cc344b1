"""An answer's sentences with their place in the text and the citation numbers they carry.

``answer_sentences(text)`` cuts an answer at line breaks and at sentence ends: ".", "!" or
"?" (then closing quotes or brackets and citation markers such as "[2][5]" that belong to
the sentence before) followed by space and something that can open a sentence. A period
after an abbreviation ("Inc.", "e.g.", "U.S.") or an initial ("J. Smith") is not an end.
List bullets, numbering and Markdown emphasis at a line's start are not part of the
sentence. ``markers(sentence)`` lists its citation numbers in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_END = re.compile(r"[.!?]+[\"'”’)\]*_]*(?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])*[\"'”’)*_]*(?=\s+\S)")
_OPENS = re.compile(r"\s+(?!\[\d)[\"'“‘(\[*_]*[A-Z0-9$€£¥-]")  # a citation marker opens nothing: "… 2021. [1]"
_ABBREVIATIONS = frozenset(
    """
inc incl corp co ltd plc llc mr mrs ms dr prof st jr sr vs etc e.g i.e eg ie u.s u.k no nos fig figs approx
jan feb mar apr jun jul aug sep sept oct nov dec est dept div vol pp p al
""".split()
)
_LEAD = re.compile(r"^(?:\s|[-*•>#]+\s|\d{1,2}[.)]\s|\*\*|__)*")


@dataclass(frozen=True)
class Span:
    """A sentence: its text and its ``[start, end)`` in the answer."""

    text: str
    start: int
    end: int


def markers(sentence: str) -> list[int]:
    """The citation numbers of ``sentence``, in order, without duplicates."""
    numbers = (int(n) for m in MARKER.finditer(sentence) for n in re.split(r"\s*[,;]\s*", m.group(1)))
    return list(dict.fromkeys(numbers))


def _is_end(line: str, match: re.Match) -> bool:
    if not _OPENS.match(line, match.end()):
        return False
    if not line[match.start()] == ".":
        return True
    if re.fullmatch(r"\s*\d{1,2}", line[: match.start()]):
        return False  # list numbering: "1. The first point"
    word = re.search(r"([\w.]+)$", line[: match.start()])
    if word is None:
        return True
    token = word.group(1).lower()
    if token in _ABBREVIATIONS or token.rstrip(".") in _ABBREVIATIONS:
        return False
    return not (len(token) == 1 and token.isalpha())  # "J. Smith"


def answer_sentences(text: str) -> list[Span]:
    """The sentences of ``text`` (see the module docstring); blank pieces are left out."""
    spans: list[Span] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        start = 0
        pieces = []
        for match in _END.finditer(line):
            if _is_end(line, match):
                pieces.append((start, match.end()))
                start = match.end()
        pieces.append((start, len(line)))
        for a, b in pieces:
            piece = line[a:b]
            lead = m.end() if (m := _LEAD.match(piece)) else 0  # the pattern matches "" at least
            body = piece[lead:].rstrip()
            if re.search(r"\w", body):
                spans.append(Span(body, offset + a + lead, offset + a + lead + len(body)))
        offset += len(line)
    return spans
