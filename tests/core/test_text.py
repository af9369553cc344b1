"""``docgraph.text.tokenize``: the tokens every BM25, the judge's name overlap and the
extractive answer share — accents folded where they do not make another word, combining
marks kept inside words of scripts that spell vowels with them."""

from __future__ import annotations

from docgraph.models.bm25 import BM25
from docgraph.text import tokenize


def test_latin_and_greek_diacritics_fold_to_what_a_user_types():
    assert tokenize("Akinoshū Kenji") == tokenize("Akinoshu Kenji") == ["akinoshu", "kenji"]
    assert tokenize("Zürich Straße, Łódź, Ærø") == ["zurich", "strasse", "lodz", "aero"]
    assert tokenize("İstanbul") == tokenize("Istanbul") == ["istanbul"]
    assert tokenize("Ἀθῆναι") == tokenize("ΑΘΗΝΑΙ") == ["αθηναι"]
    assert tokenize("naïve café costs 3.5 U.S. dollars") == ["naive", "cafe", "costs", "3.5", "u.s", "dollars"]


def test_marks_that_make_another_word_or_spell_a_vowel_stay():
    assert tokenize("かがく") != tokenize("かかく"), "a dakuten changes a Japanese word"
    assert tokenize("हिंदी भाषा") == ["हिंदी", "भाषा"], "Devanagari vowel signs stay inside the word"
    assert tokenize("йод") != tokenize("иод"), "Cyrillic й is a letter of its own"


def test_bm25_finds_the_accented_page_from_an_unaccented_question():
    pages = [
        "Kenji Fujimori was born to Japanese Peruvian engineers.",
        "Akinoshū Kenji (born 17 January 1969 as Kenji Imada) is a former sumo wrestler from Hiroshima.",
    ]
    best, _ = BM25(pages).top_k("Where was Akinoshu Kenji born?", 1)[0]
    assert best == 1
