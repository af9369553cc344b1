"""Offline NLP on real paragraphs from the shared data: entities, phrases, triples, mapping."""

from __future__ import annotations

import pytest

from docgraph.models.base import OfflineNLP
from docgraph.models.nlp import SpacyNLP, cooccurrences, map_label


@pytest.fixture(scope="module")
def nlp() -> SpacyNLP:
    return SpacyNLP()


def _by_label(analysis, label):
    return {e.text for e in analysis.entities if e.label == label}


def test_people_places_and_organisations_of_a_real_paragraph(nlp, paragraph):
    text = paragraph("Julie C. Tatlock")
    nelson = paragraph("Brooke Nelson is the Director")
    tatlock, brooke = nlp.analyze([text, nelson])
    assert isinstance(nlp, OfflineNLP)
    assert "Julie C. Tatlock" in _by_label(tatlock, "PERSON")
    assert {"Milwaukee", "Wisconsin"} <= _by_label(tatlock, "GPE")
    assert {"Mount Mary University", "Department of Justice", "Lutheran Journal of Ethics"} <= _by_label(tatlock, "ORG")
    assert "Brooke Nelson" in _by_label(brooke, "PERSON")
    assert {
        "California State University",
        "Marymount California University",
        "Claremont Graduate University",
        "University of Edinburgh",
    } <= _by_label(brooke, "ORG")
    assert "Irvine" in _by_label(brooke, "GPE")
    assert "Marco Learning" in {e.text for e in brooke.entities}
    for e in tatlock.entities + brooke.entities:  # offsets index the caller's text
        source = text if e in tatlock.entities else nelson
        assert " ".join(source[e.start : e.end].split()) == e.text
    assert "Department of Justice" in {e.text for e in tatlock.entities}  # leading "the" dropped


def test_svo_triples_from_the_dependency_parse(nlp, paragraph):
    tatlock = nlp.analyze([paragraph("Julie C. Tatlock")])[0]
    triples = {(t.predicate, t.object): t.subject for t in tatlock.triples}
    assert "Tatlock" in triples[("chair", "Department of Justice")]
    assert "Tatlock" in triples[("chair_at", "Mount Mary University")]
    assert triples[("include", "World History")] == "research interests"
    assert all(t.sentence for t in tatlock.triples)

    made = nlp.analyze(
        [
            "Gaul was conquered by Julius Caesar. Rome was founded on seven hills. "
            "Caesar crossed the Rubicon and marched on Rome. The Senate did not trust Pompey. "
            "OpenStax set up a new program."
        ]
    )[0]
    got = {(t.subject, t.predicate, t.object) for t in made.triples}
    assert ("Julius Caesar", "conquer", "Gaul") in got  # passive with agent: active direction
    assert ("Rome", "be_founded_on", "seven hills") in got  # passive without agent
    assert ("Caesar", "march_on", "Rome") in got  # conjoined verb inherits the subject
    assert ("Senate", "not_trust", "Pompey") in got
    assert ("OpenStax", "set_up", "new program") in got
    assert all(t.predicate == t.predicate.lower() and " " not in t.predicate for t in made.triples)


def test_noun_phrases_sentences_and_cooccurrence(nlp):
    text = "The Mongol Empire traded with Venice. Its armies reached Hungary.\nKublai Khan ruled China from Khanbaliq."
    a = nlp.analyze([text])[0]
    assert "Mongol Empire" in a.noun_phrases and "Its armies" not in a.noun_phrases
    assert len(a.sentences) == 3 and len(a.sentence_spans) == 3
    assert text[a.sentence_spans[2][0] : a.sentence_spans[2][1]].startswith("Kublai Khan")
    pairs_text = {(x.text, y.text) for x, y in cooccurrences(a)}
    pairs_sentence = {(x.text, y.text) for x, y in cooccurrences(a, within="sentence")}
    assert ("Kublai Khan", "China") in pairs_sentence
    assert ("Venice", "Kublai Khan") in pairs_text and ("Venice", "Kublai Khan") not in pairs_sentence
    assert pairs_sentence <= pairs_text


def test_analysis_is_deterministic_and_batched(nlp, paragraph):
    texts = [paragraph("Julie C. Tatlock"), "", "Rome fell in 476."]
    one = nlp.analyze(texts)
    two = nlp.analyze(texts)
    assert len(one) == 3 and one[1].entities == [] and one == two


@pytest.mark.parametrize(
    "label, schema, expected",
    [
        ("PERSON", ["person", "organization", "location"], "person"),
        ("PERSON", ["character", "object", "location"], "character"),
        ("GPE", ["person", "geographic_region", "concept"], "geographic_region"),
        ("LOC", ["Person", "Location"], "Location"),
        ("ORG", ["person", "organization"], "organization"),
        ("NORP", ["person", "group", "location"], "group"),
        ("DATE", ["date", "event"], "date"),
        ("DATE", ["metric", "fiscal_period"], "fiscal_period"),
        ("EVENT", ["person", "event"], "event"),
        ("WORK_OF_ART", ["person", "work_of_art"], "work_of_art"),
        ("LAW", ["person", "concept"], "concept"),
        ("MONEY", ["person", "object"], "object"),
        ("PRODUCT", ["person", "location"], "location"),
        ("PERSON", [], "person"),
    ],
)
def test_map_label(label, schema, expected):
    assert map_label(label, schema) == expected
    assert SpacyNLP().map_label(label, schema) == expected
