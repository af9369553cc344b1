"""Second-hop retrieval through shared entities (graph.bridges): scores and slot merging."""

from __future__ import annotations

import numpy as np
import pytest

from docgraph.graph.bridges import EntityBridges, bridging_name, interleave, normalise_name, second_hop


def corpus() -> EntityBridges:
    # page 0: the tournament (names the player); page 1: the player (names the team);
    # page 2: another player of the tournament year; page 3: unrelated; "Hawaii" is on every page but 3
    mentions = [
        (0, "Diamond Head Classic"),
        (0, "Buddy Hield"),
        (0, "Hawaii"),
        (1, "Buddy Hield"),
        (1, "Sacramento Kings"),
        (1, "Hawaii"),
        (2, "Hawaii"),
        (2, "The Honolulu Star"),
        (3, "Sacramento Kings"),
    ]
    return EntityBridges.build(4, mentions)


def test_names_are_normalised():
    assert normalise_name("The  Buddy-Hield!") == "buddy hield"
    assert normalise_name("X") == "" and normalise_name("the") == "the"
    assert normalise_name("The Tekezé River") == normalise_name("Tekeze river") == "tekeze river"


def test_a_name_with_and_without_its_accents_is_one_bridge_and_one_question_name():
    bridges = EntityBridges.build(3, [(0, "Tekezé River"), (1, "Tekeze River"), (2, "Nile")])
    assert len(bridges) == 2 and bridges.query_columns("Where does the Tekeze River flow?") == [0]


def test_the_page_sharing_the_seeds_rare_entity_scores_highest():
    bridges = corpus()
    scores = bridges.scores([0], [1.0], "Which team does the MVP of the Diamond Head Classic play for?")
    assert scores[0] == 0.0, "a seed does not bridge to itself"
    assert scores[1] > scores[2] > 0.0, "the rare shared name outweighs the common one"
    assert scores[3] == 0.0, "nothing shared with the seed"


def test_the_questions_own_entities_do_not_bridge():
    bridges = corpus()
    assert bridges.query_columns("Who is Buddy Hield?") == [bridges.columns["buddy hield"]]
    without_player = bridges.scores([0], [1.0], "Where did Buddy Hield play in Hawaii?")
    # only the tournament's own name is left in the seed's profile, and no other page has it
    assert np.all(without_player == 0.0)


def test_idf_is_log_scaled_document_frequency():
    bridges = corpus()
    hawaii, kings = bridges.columns["hawaii"], bridges.columns["sacramento kings"]
    assert bridges.idf[hawaii] == pytest.approx(np.log(5 / 3.5))
    assert bridges.idf[kings] == pytest.approx(np.log(5 / 2.5))


def test_empty_inputs_score_nothing():
    empty = EntityBridges.build(3, [])
    assert len(empty) == 0 and np.all(empty.scores([0], [1.0], "q") == 0.0)
    assert np.all(corpus().scores([], [], "q") == 0.0)


def test_interleave_places_bridged_items_at_every_nth_slot():
    assert interleave([0, 1, 2, 3, 4, 5], [9, 8], 3, 6) == [0, 1, 9, 2, 3, 8]
    assert interleave([0, 1, 2], [1, 7], 2, 5) == [0, 1, 2, 7], "repeats are skipped, sources run dry"
    assert interleave([0, 1, 2], [7], 0, 3) == [0, 1, 2], "every < 2: off"
    assert interleave([0, 1], [], 3, 5) == [0, 1]
    assert interleave([], [4, 5], 3, 2) == [4, 5]


def test_value_names_do_not_bridge():
    bridges = EntityBridges.build(
        2, [(0, "$1 million budget"), (1, "$1 million budget"), (0, "1940s"), (1, "1940s"), (0, "Kings"), (1, "Kings")]
    )
    assert list(bridges.columns) == ["kings"]


def test_one_common_word_does_not_bridge_but_names_and_caseless_words_do():
    """ "electricity" and "december" are on pages about anything; "Iowa", "wind power
    project" and a Chinese name are things two pages can both be about."""
    names = ["electricity", "december", "Iowa", "wind power project", "北京", "UNESCO"]
    bridges = EntityBridges.build(2, [(page, name) for page in (0, 1) for name in names])
    assert sorted(bridges.columns) == ["iowa", "unesco", "wind power project", "北京"]
    assert bridging_name("Électricité") and not bridging_name("électricité")


QUESTION = "Which team does the MVP of the Diamond Head Classic play for?"


def test_second_hop_places_the_bridged_page_at_the_nth_slot_with_a_score_between_its_neighbours():
    top = [(0, 0.9), (3, 0.5), (2, 0.4)]  # the method found the tournament, missed the player's page
    merged = second_hop(top, corpus(), QUESTION, every=2, seeds=1, k=4)
    assert [row for row, _ in merged] == [0, 1, 3, 2], "the player's page takes slot 2"
    assert merged[1][1] == pytest.approx((0.9 + 0.5) / 2)
    assert [s for _, s in merged] == sorted((s for _, s in merged), reverse=True)


def test_second_hop_orders_reached_pages_by_bridge_times_relevance():
    top = [(0, 0.9), (3, 0.5)]
    by_bridge = second_hop(top, corpus(), QUESTION, every=2, seeds=1, k=4)
    assert [row for row, _ in by_bridge][1] == 1, "the rare shared name first"
    own = np.array([0.9, 0.0, 1.0, 0.5])  # the player's page scores nothing of its own
    assert [row for row, _ in second_hop(top, corpus(), QUESTION, every=2, seeds=1, k=4, page_scores=own)][1] == 2
    left_open = second_hop(
        top,
        corpus(),
        QUESTION,
        every=2,
        seeds=1,
        k=4,
        page_scores=own,
        open_part=lambda seeds: np.array([0.0, 1.0, 0.0, 0.0]),
        open_share=0.5,
    )
    assert [row for row, _ in left_open][1] == 1, "what the seeds leave open brings the player's page back"
    boosted = second_hop(
        top, corpus(), QUESTION, every=2, seeds=1, k=4, boost=lambda seeds, weights: np.array([1.0, 1.0, 50.0, 1.0])
    )
    assert [row for row, _ in boosted][1] == 2


def test_second_hop_off_or_finding_nothing_keeps_the_ranking():
    top = [(3, 0.5), (0, 0.4)]
    assert second_hop(top, corpus(), QUESTION, every=0, seeds=1, k=2) == top
    assert second_hop(top, corpus(), QUESTION, every=2, seeds=1, k=1) == top[:1]
    assert second_hop([(2, 1.0)], EntityBridges.build(4, [(2, "Nile")]), "q", every=2, seeds=1, k=3) == [(2, 1.0)]


def test_a_page_the_hop_moves_up_scores_between_its_new_neighbours():
    top = [(0, 0.9), (3, 0.5), (2, 0.4), (1, 0.1)]  # the player's page ranked last
    merged = second_hop(top, corpus(), QUESTION, every=2, seeds=1, k=4)
    assert [row for row, _ in merged] == [0, 1, 3, 2]
    assert merged[1][1] == pytest.approx(0.7), "no longer its own 0.1"
    assert [s for _, s in merged] == sorted((s for _, s in merged), reverse=True)
