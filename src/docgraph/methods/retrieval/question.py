"""A question as retrieval reads it — once.

Every page signal needs something read off the question: the lexicon's statements and
measure inputs, the labels it refers to ("figure 3", "page 2"), the kinds of element it asks
for ("chart", "table"), the terms BM25 scores, the words graph names are matched by.
``read_question`` reads all of them in one place and remembers the reading for the question
and the settings that shape it (the lexicon files, ``measures``, ``line_items``, ``front_matter``), so the
evidence layer, the graph stages, the offline answer's measure items and any later stage of
the same query share one reading instead of each reading the text again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...config import RetrievalSettings
from ...graph.bridges import name_words
from ...text import tokenize
from .lexicon import Label, lexicon
from .references import asked_modalities, query_references

READINGS_KEPT = 512  # recent questions whose reading is kept (an eval asks each once or twice)


@dataclass(frozen=True)
class QuestionReading:
    text: str
    labels: tuple[Label, ...]  # the lexicon's: statements named or implied, COVER for front matter
    terms: tuple[str, ...]  # the input terms of the measures it asks for
    items: tuple[str, ...]  # the line items it names, as it writes them ("goodwill")
    sparse_terms: tuple[str, ...]  # what BM25 scores: the text's words, then the measures' inputs
    tokens: tuple[str, ...]  # the text's own BM25 words (graph nodes' and concepts' lexical match)
    name_words: tuple[str, ...]  # its words as names are matched (graph.bridges.name_words)
    references: tuple[Label, ...]  # labels the text names, in order ("figure 3", "page 2")
    modalities: tuple[str, ...]  # element kinds it asks for ("table", "image")


def read_question(text: str, settings: RetrievalSettings) -> QuestionReading:
    """The reading of ``text`` under ``settings`` (made once, then shared; see the module doc)."""
    return _read(text, tuple(settings.lexicons), settings.measures, settings.front_matter, settings.line_items)


@lru_cache(maxsize=READINGS_KEPT)
def _read(
    text: str, lexicons: tuple[str, ...], measures: bool, front_matter: bool, line_items: bool
) -> QuestionReading:
    reading = lexicon(lexicons).read(text, measures, front_matter, line_items)
    return QuestionReading(
        text=text,
        labels=reading.labels,
        terms=reading.terms,
        items=reading.items,
        sparse_terms=tuple(tokenize(reading.sparse_query(text))),
        tokens=tuple(tokenize(text)),
        name_words=name_words(text),
        references=tuple(query_references(text)),
        modalities=asked_modalities(text),
    )
