"""Proper names a sentence states, and whether evidence text names them, without a model.

``claim_names(sentence)`` finds runs of capitalised words ("Tim Cook", "American Express",
"AMD", "iPhone 14"), joined by "of", "and", "&", "de" … inside a run. A lone capitalised
word that opens the sentence (or a line, or follows a colon) is a name only when it is
not an ordinary word written capitalised there: all-capitals, a capital inside it, or a
digit. Function words, months and weekdays, units and currency codes are never names.
``name_found(name, text)`` holds when the evidence has the name (case, punctuation and a
possessive "'s" aside), or every word of it that is not a corporate suffix or a function
word.
"""

from __future__ import annotations

import re

from ...text import STOPWORDS, normalize
from .figures import MONTHS

_WORD = re.compile(r"[A-Za-z0-9][\w&'’.-]*[\w]|[A-Za-z]")
_JOINERS = frozenset({"of", "&", "de", "la", "du", "von", "van", "der", "for"})
_FIGURE_LIKE = re.compile(r"^(?:\d[\d,.]*(?:[kKmMbBtT]n?|mm|%)?|(?:FY|Q|H)\d+|\d+(?:st|nd|rd|th|s))$", re.I)
_NOT_NAMES = frozenset(
    """
a an the this that these those it its in on at by for from to of and or but if as is was were be
however therefore thus also although while when where which who what how why according overall total
based both each every all some many most several other another such no not yes so then there here
note notes item items table figure page section part answer question evidence source sources document
documents report q1 q2 q3 q4 fy h1 h2 usd eur gbp jpy us$ i we you they he she our their my your
monday tuesday wednesday thursday friday saturday sunday
""".split()
) | frozenset(MONTHS)
_SUFFIXES = frozenset(
    "inc inc. corp corp. corporation co co. company ltd ltd. plc llc lp sa ag nv group holdings the".split()
)
_OPENERS = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•]\s*)?|\(\s*|[\"“]\s*)$")


def _capitalised(word: str, before: str = "") -> bool:
    if _FIGURE_LIKE.match(word):  # "3M" (the company) is a name unless it is "$3M"
        return bool(re.fullmatch(r"\d+[A-Z]", word)) and not re.search(r"[$€£¥]\s*$", before)
    return word[:1].isupper() or any(c.isupper() for c in word[1:])


def _distinctive(word: str) -> bool:
    """A word that reads as a name even where every word is capitalised."""
    letters = [c for c in word if c.isalpha()]
    return (
        (len(letters) >= 2 and all(c.isupper() for c in letters))
        or any(c.isupper() for c in word[1:])
        or any(c.isdigit() for c in word)
    )


def claim_names(sentence: str) -> list[str]:
    """The proper names ``sentence`` states, in order, without duplicates."""
    text = re.sub(r"\[\d+(?:\s*[,;]\s*\d+)*\]", " ", sentence)
    text = re.sub(r"[*_#`]+", " ", text)
    text = re.sub(r"(?:[$€£¥]\s?\d|\d{1,3}(?:,\d{3})+)[\d,.]*\w*", lambda m: " " * len(m.group(0)), text)
    names: list[str] = []
    run: list[str] = []
    run_start = 0

    def close() -> None:
        while run and run[-1].lower() in _JOINERS:
            run.pop()
        if run:
            opener = bool(_OPENERS.search(text[:run_start]))
            words = [w for w in run if w.lower() not in _JOINERS]
            if not (len(words) == 1 and (opener or words[0].lower() in _NOT_NAMES) and not _distinctive(words[0])):
                name = " ".join(run).strip(".'’")
                if name.lower() not in _NOT_NAMES and name not in names:
                    names.append(name)
        run.clear()

    last_end = 0
    for m in _WORD.finditer(text):
        word = re.sub(r"['’]s$", "", m.group(0).rstrip("."))
        gap = text[last_end : m.start()]
        if run and gap.strip() == "&":
            run.append("&")
        elif run and gap.strip():
            close()
        lower = word.lower()
        capital = _capitalised(word, text[max(0, m.start() - 2) : m.start()])
        if capital and (lower not in _NOT_NAMES or run and lower in _JOINERS):
            if not run:
                run_start = m.start()
            run.append(word)
        elif run and word.lower() in _JOINERS:
            run.append(word)
        else:
            close()
        last_end = m.end()
    close()
    return names


def _key(text: str) -> str:
    text = normalize(text.replace("’", "'"))
    text = re.sub(r"'s\b", "", text)
    return " ".join(re.findall(r"\w+", text))


def name_found(name: str, text_key: str) -> bool:
    """Whether ``text_key`` (evidence text passed through ``evidence_key``) names ``name``."""
    key = _key(name)
    if not key:
        return True
    if f" {key} " in text_key:
        return True
    words = [w for w in key.split() if w not in STOPWORDS and w not in _SUFFIXES and w not in _JOINERS]
    return bool(words) and all(f" {w} " in text_key or f" {w}s " in text_key for w in words)


def evidence_key(text: str) -> str:
    """Evidence text in the form ``name_found`` searches (lower case, words, spaces around)."""
    return f" {_key(text)} "
