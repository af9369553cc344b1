"""Cross-references by name (graph.name_links): which headings count, who names whom, scores."""

from __future__ import annotations

import numpy as np

from docgraph.graph.name_links import NameLinks, heading_name


def corpus() -> NameLinks:
    # page 0: the book (names its author and, in lower case, "adolescence");
    # page 1: the author; page 2: a journal headed "Adolescence"; page 3: "Introduction",
    # named by pages 0, 1 and 2; page 4 names the author too
    headings = [
        (0, "Alexander and the Terrible Day (book)"),
        (1, "Judith Viorst"),
        (2, "Adolescence"),
        (3, "Introduction"),
        (4, "Reviews"),
    ]
    texts = [
        "Alexander and the Terrible Day is a book by Judith Viorst about adolescence. See the Introduction.",
        "Judith Viorst is an American author. Introduction: she wrote Alexander and the Terrible Day.",
        "Adolescence is a journal. Its Introduction is short.",
        "Introduction to the collection.",
        "Critics liked Judith Viorst.",
    ]
    return NameLinks.build(5, headings, texts)


def test_a_heading_is_a_name_when_it_reads_like_one():
    assert heading_name("Brother (Pearl Jam song)") == "Brother", "the disambiguator is not part of the name"
    assert heading_name("  Judith   Viorst ") == "Judith Viorst"
    assert heading_name("introduction") == "", "no capital: a common word, not a name"
    assert heading_name("2019 results") == "" and heading_name("$5 million") == "", "values are not names"
    assert heading_name("One Two Three Four Five Six Seven Eight Nine") == "", "too long to be looked for"


def test_the_page_a_seed_names_scores_highest_and_the_seed_itself_zero():
    links = corpus()
    scores = links.scores([0], [1.0], "What kind of university did the author of the book attend?")
    assert scores[0] == 0.0, "a seed does not link to itself"
    assert scores[1] == 1.0, "the rarer name the book's page mentions: its author's page"
    assert 0.0 < scores[3] < scores[1], "'Introduction' is named on three pages: less specific"
    assert scores[2] == 0.0, "'adolescence' in lower case is a word, not the journal's name"
    assert scores[4] == 0.0, "a page that only names the same author is not headed by it"


def test_names_the_question_contains_are_left_out():
    links = corpus()
    scores = links.scores([0], [1.0], "Which university did judith viorst attend?")
    assert scores[1] == 0.0, "reaching the question's own names is first-hop retrieval's job"
    assert scores[3] == 1.0


def test_a_page_naming_its_own_heading_does_not_mention_it():
    links = corpus()
    column = links.keys["judith viorst"][0]
    assert links.mentions[:, column].toarray().ravel().tolist() == [1, 0, 0, 0, 1]
    assert links.targets[column].toarray().ravel().tolist() == [0, 1, 0, 0, 0]


def test_no_seeds_no_names_or_nothing_named_scores_zero():
    links = corpus()
    assert not links.scores([], [], "q").any()
    assert not links.scores([4], [1.0], "Who is Judith Viorst?").any(), "its only name is the question's"
    empty = NameLinks.build(2, [(0, "lower case")], ["a", "b"])
    assert len(empty) == 0 and not empty.scores([0], [1.0], "q").any()
    np.testing.assert_array_equal(links.scores([9], [1.0], "q"), np.zeros(5))
