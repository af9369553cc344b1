"""Union-find and entity merging: groups, canonical choice, redirects, self-loops, duplicates."""

from __future__ import annotations

import pytest

from docgraph.graph import UnionFind, merge_entities


def test_union_find_groups_and_ranks():
    uf = UnionFind(["a", "b", "c", "d", "e"])
    uf.union("a", "b")
    uf.union("d", "c")
    uf.union("b", "d")
    assert uf.connected("a", "c") and not uf.connected("a", "e")
    assert uf.groups() == [["a", "b", "c", "d"], ["e"]]
    assert uf.find("z") == "z" and len(uf) == 6  # unknown items are added on first mention


def test_union_find_long_chain_compresses():
    uf = UnionFind(range(2000))
    for i in range(1999):
        uf.union(i, i + 1)
    root = uf.find(0)
    assert all(uf.find(i) == root for i in range(2000))
    assert len(uf.groups()) == 1


def test_merge_redirects_and_dedupes():
    ids = ["e1", "e2", "e3", "e4"]
    rels = [
        ("e1", "e3", "part_of"),  # 0
        ("e2", "e3", "part_of"),  # 1 duplicate of 0 once e2 → e1
        ("e1", "e2", "same_as"),  # 2 self-loop after merge
        ("e3", "e2", "part_of"),  # 3 reversed direction: kept
        ("e2", "e4", "cites"),  # 4
        ("e2", "e3", "near"),
    ]  # 5 other label: kept
    result = merge_entities(ids, [("e2", "e1")], rels)
    assert result.canonical == {"e1": "e1", "e2": "e1", "e3": "e3", "e4": "e4"}
    assert result.merged_ids == {"e2": "e1"}
    assert result.groups["e1"] == ["e1", "e2"]
    triples = [(r.source, r.target, r.label) for r in result.relations]
    assert triples == [("e1", "e3", "part_of"), ("e3", "e1", "part_of"), ("e1", "e4", "cites"), ("e1", "e3", "near")]
    assert result.relations[0].members == (0, 1)
    assert result.dropped_self_loops == [2]


def test_canonical_choice_by_key_then_id():
    ids = ["x9", "x2", "x5"]
    mentions = {"x9": 4, "x2": 1, "x5": 4}
    pairs = [("x9", "x2"), ("x2", "x5")]
    by_mentions = merge_entities(ids, pairs, [], key=lambda e: -mentions[e])
    assert set(by_mentions.canonical.values()) == {"x5"}  # 4 mentions, tie with x9 → smaller id
    assert set(merge_entities(ids, pairs, []).canonical.values()) == {"x2"}  # default: smallest id
    # the choice does not depend on the order of the pairs
    assert merge_entities(ids, pairs[::-1], [], key=lambda e: -mentions[e]).canonical == by_mentions.canonical


def test_transitive_groups_and_unknown_ids():
    result = merge_entities(["a", "b", "c", "d"], [("a", "b"), ("c", "d"), ("b", "c")], [("a", "d", "r")])
    assert len(result.groups) == 1 and result.relations == [] and result.dropped_self_loops == [0]
    with pytest.raises(ValueError, match="zz"):
        merge_entities(["a"], [("a", "zz")], [])
    with pytest.raises(ValueError, match="zz"):
        merge_entities(["a"], [], [("a", "zz", "r")])
