"""Small text utilities shared across packages: tokens, stopwords, sentences.

Deterministic and dependency-free, so they are cheap enough for hot query paths.
"""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    """
a an and are as at be been being but by can could did do does for from had has have how i if in into
is it its itself may might more most no nor not of on or our out over own she he so some such than
that the their them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours about above after again
against all am any because before below between both down during each few further here him his her
hers me my myself once only other ours same should shall just also per via vs etc
""".split()
)


def _mark_ranges() -> str:
    """A regex character-class body of the combining marks of the Basic Multilingual Plane.
    ``\\w`` leaves them out, and Devanagari, Thai or Bengali words carry their vowels as
    marks: without them "हिंदी" would split into consonants."""
    marks = [c for c in range(0x0300, 0x10000) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me")]
    ranges: list[tuple[int, int]] = []
    for code in marks:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


_NONE: frozenset[str] = frozenset()
_MARKS = _mark_ranges()
_TOKEN = re.compile(rf"\w[\w{_MARKS}\-\.']*[\w{_MARKS}]|\w", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")


def _diacritic_folding() -> dict[int, str]:
    """A ``str.translate`` table taking the diacritics off Latin and Greek letters ("ū" → "u",
    "é" → "e", "ά" → "α"), and the Latin letters that do not decompose to their usual
    spelling ("ø" → "o", "ß" → "ss", "æ" → "ae"). Other scripts keep their marks: a Japanese
    dakuten or a Devanagari vowel sign makes another word, an accent on a Latin name does not."""
    table: dict[int, str] = {}
    for start, end in ((0x00C0, 0x0250), (0x0370, 0x0400), (0x1E00, 0x2000)):  # Latin-1, Latin Extended,
        for code in range(start, end):  # Greek, Latin Extended Additional, Greek Extended
            char = chr(code)
            base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
            if base and base != char:
                table[code] = base
    extra = {
        "ø": "o",
        "ß": "ss",
        "æ": "ae",
        "œ": "oe",
        "đ": "d",
        "ł": "l",
        "ð": "d",
        "þ": "th",
        "ħ": "h",
        "ı": "i",
        "\u0307": "",
    }  # the dot "İ".lower() leaves ("İstanbul" = "Istanbul")
    table.update((ord(k), v) for k, v in extra.items())
    return table  # applied after lower(): the upper-case entries of the ranges are never met


_FOLD = _diacritic_folding()
_FOLDABLE = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_FOLD)) + "]")


def _folded(match: re.Match[str]) -> str:
    return _FOLD[ord(match.group())]


def normalize(text: str) -> str:
    """NFKC-normalised, lowercased text with Latin and Greek diacritics folded, so that a
    question typed without accents ("Akinoshu", "Zurich") meets the page that has them.
    ASCII text is only lowercased (NFKC and the folding leave it as it is); other text
    is folded where a foldable letter occurs, not through ``str.translate``, whose walk
    over every character of a page costs more than the rest of tokenising it."""
    if text.isascii():
        return text.lower()
    return _FOLDABLE.sub(_folded, unicodedata.normalize("NFKC", text).lower())


def tokenize(text: str, drop_stopwords: bool = True) -> list[str]:
    """Lowercase word tokens (``normalize``d; numbers kept, e.g. ``3.5``), stopwords dropped by
    default."""
    dropped = STOPWORDS if drop_stopwords else _NONE
    return [t for t in (word.strip(".'") for word in _TOKEN.findall(normalize(text))) if t and t not in dropped]


def sentences(text: str, min_chars: int = 3) -> list[str]:
    """Split text into sentences on terminal punctuation and line breaks between blocks."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=[-•*·]\s)", text):
        block = " ".join(block.split())
        out.extend(s.strip() for s in _SENTENCE_END.split(block) if len(s.strip()) >= min_chars)
    return out
