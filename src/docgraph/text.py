"""Small text utilities shared across packages: tokens, stopwords, sentences.

Deterministic and dependency-free, so they are cheap enough for hot query paths.
"""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset("""
a an and are as at be been being but by can could did do does for from had has have how i if in into
is it its itself may might more most no nor not of on or our out over own she he so some such than
that the their them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours about above after again
against all am any because before below between both down during each few further here him his her
hers me my myself once only other ours same should shall just also per via vs etc
""".split())

_TOKEN = re.compile(r"[\w][\w\-\.']*[\w]|[\w]", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")


def normalize(text: str) -> str:
    """NFKC-normalised, lowercased text."""
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str, drop_stopwords: bool = True) -> list[str]:
    """Lowercase word tokens (numbers kept, e.g. ``3.5``), stopwords dropped by default."""
    tokens = [t.strip(".'") for t in _TOKEN.findall(normalize(text))]
    tokens = [t for t in tokens if t]
    if drop_stopwords:
        tokens = [t for t in tokens if t not in STOPWORDS]
    return tokens


def sentences(text: str, min_chars: int = 3) -> list[str]:
    """Split text into sentences on terminal punctuation and line breaks between blocks."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=[-•*·]\s)", text):
        block = " ".join(block.split())
        out.extend(s.strip() for s in _SENTENCE_END.split(block) if len(s.strip()) >= min_chars)
    return out
