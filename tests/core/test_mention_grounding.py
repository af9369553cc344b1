"""Mention grounding as arrays: each node's mentions joined with a layer's chunks."""

import numpy as np
import pytest

from docgraph.config import RetrievalSettings
from docgraph.methods.mention_grounding import MentionGrounding
from docgraph.methods.retrieval.evidence_layer import EvidenceLayer
from docgraph.types import Chunk


def _layer() -> EvidenceLayer:
    chunks = [
        Chunk(id="d:1:P0", doc_id="d", page=1, component_ids=["P0", "P1"], text="alpha"),
        Chunk(id="d:2:P0", doc_id="d", page=2, component_ids=["P0"], text="beta"),
        Chunk(id="e:2:T1", doc_id="e", page=2, component_ids=["T1"], text="gamma"),
    ]
    return EvidenceLayer.build(chunks, np.eye(3, dtype=np.float32), RetrievalSettings())


def test_each_mention_gives_its_chunks_once_and_a_chunk_counts_per_mention():
    layer = _layer()
    grounding = MentionGrounding.build(
        [
            [("d", 1, ["P1"]), ("d", 2, ["P0"]), ("d", 1, ["P0", "P1"]), ("d", 3, ["P0"])],
            [],
            [("e", 2, ["T1"]), ("e", 2, ["P0"])],
        ]
    )
    rows = grounding.chunk_rows(layer.component_chunk, len(layer.chunks))
    row = {c.id: i for i, c in enumerate(layer.chunks)}
    d1, d2, e2 = row["d:1:P0"], row["d:2:P0"], row["e:2:T1"]
    assert rows.of(0).tolist() == [d1, d2, d1], "two components of one chunk count once; page 3 has no chunk"
    assert rows.of(1).tolist() == [], "a node without mentions"
    assert rows.of(2).tolist() == [e2], "a component no chunk holds is left out"


def test_spread_splits_each_nodes_mass_evenly_over_its_rows():
    layer = _layer()
    grounding = MentionGrounding.build([[("d", 1, ["P0"]), ("d", 2, ["P0"])], [("d", 2, ["P0"])], [("x", 9, ["P0"])]])
    rows = grounding.chunk_rows(layer.component_chunk, len(layer.chunks))
    row = {c.id: i for i, c in enumerate(layer.chunks)}
    out = rows.spread(np.array([0, 1, 2]), np.array([0.5, 0.25, 1.0]), len(layer.chunks))
    assert out[row["d:1:P0"]] == pytest.approx(0.25)
    assert out[row["d:2:P0"]] == pytest.approx(0.5), "half of node 0's mass and all of node 1's"
    assert out.sum() == pytest.approx(0.75), "node 2's mentions ground on no chunk: its mass goes nowhere"
    assert not rows.spread(np.array([0]), np.array([0.0]), len(layer.chunks)).any(), "no mass, nothing spread"


def test_mean_weighs_each_row_as_often_as_a_mention_lands_on_it():
    layer = _layer()
    grounding = MentionGrounding.build([[("d", 1, ["P0"]), ("d", 1, ["P1"]), ("e", 2, ["T1"])], [], [("e", 2, ["T1"])]])
    rows = grounding.chunk_rows(layer.component_chunk, len(layer.chunks))
    row = {c.id: i for i, c in enumerate(layer.chunks)}
    values = np.zeros(len(layer.chunks))
    values[row["d:1:P0"]], values[row["e:2:T1"]] = 1.0, 0.25
    means = rows.mean(np.array([0, 1, 2]), values, default=0.5)
    assert means.tolist() == pytest.approx([(1.0 + 1.0 + 0.25) / 3, 0.5, 0.25]), "a node without rows takes the default"
    assert rows.mean(np.array([], dtype=np.int64), values).tolist() == []


def test_a_page_beyond_what_a_key_holds_is_refused():
    with pytest.raises(ValueError, match="page"):
        MentionGrounding.build([[("d", 1 << 30, ["P0"])]])
