"""Embedding blocks: consecutive, covering, bounded by characters and count."""

from __future__ import annotations

from docgraph.methods.building.embed_blocks import blocks


def test_blocks_cover_in_order_within_limits():
    lengths = [100] * 10 + [5000] + [10] * 300
    ranges = list(blocks(lengths, max_chars=1000, max_items=128))
    assert ranges[0] == (0, 10)  # ten texts of 100 characters fill one block
    assert ranges[1] == (10, 11)  # a long text is a block of its own
    assert [e - s for s, e in ranges[2:]] == [100, 100, 100]  # short texts: bounded by characters
    assert [i for s, e in ranges for i in range(s, e)] == list(range(len(lengths)))
    assert list(blocks([10] * 300, max_chars=10**6, max_items=128)) == [(0, 128), (128, 256), (256, 300)]
    assert list(blocks([])) == []
