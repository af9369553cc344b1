"""A question is read once (``methods.retrieval.question``): the lexicon, the labels it names,
the elements it asks for and the BM25 terms come from one reading that every stage shares."""

from __future__ import annotations

from docgraph.config import RetrievalSettings
from docgraph.methods.retrieval import lexicon as lexicon_module
from docgraph.methods.retrieval.evidence_layer import measure_items
from docgraph.methods.retrieval.question import _read, read_question
from docgraph.text import tokenize

QUESTION = "What does Table 3 of the consolidated statements of cash flows say about capital expenditure?"


def test_one_reading_serves_every_stage(monkeypatch):
    calls = []
    real = lexicon_module.Lexicon.read

    def counted(self, question, *args, **kwargs):
        calls.append(question)
        return real(self, question, *args, **kwargs)

    monkeypatch.setattr(lexicon_module.Lexicon, "read", counted)
    _read.cache_clear()
    settings = RetrievalSettings()
    first = read_question(QUESTION, settings)
    assert read_question(QUESTION, settings) is first
    assert measure_items(QUESTION, settings) == first.terms
    assert calls == [QUESTION], "the lexicon reads the question once"
    assert read_question(QUESTION, RetrievalSettings(measures=False)) is not first, "other settings, another reading"


def test_the_reading_holds_what_each_signal_needs():
    reading = read_question(QUESTION, RetrievalSettings())
    assert ("table", "3") in reading.references
    assert reading.modalities == ("table",)
    assert any(label[0] == "statement" for label in reading.labels)
    assert reading.sparse_terms[: len(tokenize(QUESTION))] == tuple(tokenize(QUESTION))
    plain = read_question("Who founded the Mongol Empire?", RetrievalSettings())
    assert plain.references == () and plain.modalities == () and plain.terms == ()
    assert plain.sparse_terms == tuple(tokenize("Who founded the Mongol Empire?"))


def test_the_graph_stages_match_the_words_the_reading_gives():
    """The graph's lexical match and the second hop's name columns take the reading's words:
    the same columns and scores as reading the text there, so rankings do not move."""
    import numpy as np

    from docgraph.graph.bridges import EntityBridges, name_words
    from docgraph.models.bm25 import BM25

    question = "Who did The Mongol Empire fight after Genghis Khan died?"
    reading = read_question(question, RetrievalSettings())
    assert reading.tokens == tuple(tokenize(question))
    assert reading.name_words == name_words(question) and reading.name_words[0] == "who"
    bridges = EntityBridges.build(
        3, [(0, "Mongol Empire"), (1, "Genghis Khan"), (2, "Song dynasty"), (1, "Song dynasty")]
    )
    assert bridges.query_columns(reading.name_words) == bridges.query_columns(question) != []
    index = BM25(["the Mongol Empire", "Genghis Khan died", "the Song dynasty"])
    assert np.array_equal(index.scores(reading.tokens), index.scores(question))
    # indexed terms the first text lacks ("fight" is in no text, so it is not a term)
    assert index.absent_terms(reading.tokens, [0]) == index.absent_terms(question, [0]) == ["genghis", "khan", "died"]
