"""Table rows a sentence names, so its numbers are looked up in those rows.

A sentence that names a row of a cited table ("Health Care sales were 8,421") states that
row's values; a number that the table holds only in another row is a different figure.
``table_rows(markdown)`` gives each row of a Markdown table as (label, text): the label is
its first non-empty cell, the text the whole row and the columns' headers.
``named_rows(sentence, rows)`` keeps the rows whose label's words (three or more letters,
not function words) all occur in the sentence; a label without such words names nothing.
"""

from __future__ import annotations

import re

from ...text import STOPWORDS, normalize
from ..building.markdown_tables import parse_table

Row = tuple[str, str]
_WORD = re.compile(r"[a-z][a-z&'-]{2,}")


def words(text: str) -> set[str]:
    """The significant words of ``text`` (lower case, plural "s" taken off)."""
    out = set()
    for word in _WORD.findall(normalize(text)):
        if word not in STOPWORDS:
            out.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return out


def table_rows(markdown: str) -> list[Row]:
    """(label, row text) for each row of a Markdown table ([] when it is not one); the text
    holds the columns' headers too, as a sentence stating a row's value says its column
    ("at December 31, 2018, long-term debt was $13,411 million")."""
    headers, rows = parse_table(markdown)
    heading = " | ".join(h for h in headers if h)
    out = []
    for cells in rows:
        label = next((c for c in cells if c.strip()), "")
        if label:
            out.append((label, " | ".join(cells) + (f"\n{heading}" if heading else "")))
    return out


def named_rows(sentence: str, rows: list[Row]) -> list[Row]:
    """The rows among ``rows`` that ``sentence`` names (see the module docstring)."""
    said = words(sentence)
    named = []
    for label, text in rows:
        label_words = words(label)
        if label_words and len(label_words) <= 8 and label_words <= said:
            named.append((label, text))
    return named
