"""HippoRAG's indexing of one document moves the progress line while it extracts and
embeds (offline OpenIE and fact/phrase embeddings in blocks), not only when it ends."""

from __future__ import annotations

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.testing.progress import StatsHistory


def test_openie_and_embedding_report_blocks(openstax_ws, monkeypatch):
    monkeypatch.setattr("docgraph.methods.baselines.hipporag.OFFLINE_BLOCK", 8)
    monkeypatch.setattr("docgraph.methods.building.embed_blocks.BLOCK_ITEMS", 16)
    progress = StatsHistory()
    with Workspace(openstax_ws, settings=load_settings(openstax_ws, environ={})) as ws:
        ws.build("hipporag", progress=progress)
        assert ws.retrieve("Mongol Empire", method="hipporag").pages
    openie = [s["openie"] for s in progress.history if "openie" in s]
    embedded = [s["embedded"] for s in progress.history if "embedded" in s]
    assert len(openie) >= 3 and openie[-1].split()[0].split("/")[0] == openie[-1].split()[0].split("/")[1]
    assert any(e.endswith("facts") for e in embedded) and any(e.endswith("phrases") for e in embedded)
    assert len(embedded) >= 3
    assert progress.done == 5
