"""HVM shows progress while it embeds a document's chunks (between embedding blocks), not
only when pages finish: a long document is never silent for minutes."""

from __future__ import annotations

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.testing.progress import StatsHistory


def test_chunk_embedding_reports_blocks(openstax_ws, monkeypatch):
    monkeypatch.setattr("docgraph.methods.building.embed_blocks.BLOCK_ITEMS", 4)
    progress = StatsHistory()
    with Workspace(openstax_ws, settings=load_settings(openstax_ws, environ={})) as ws:
        ws.build("hvm", progress=progress)
    embedded = [s["embedded"] for s in progress.history if "embedded" in s]
    chunks = [e for e in embedded if e.endswith(" chunks")]
    assert len(chunks) >= 3, embedded
    done, total = chunks[-1].split()[0].split("/")
    assert done == total and int(total) > 8
    assert progress.done == 5  # pages still count as before
    # the concept graph's names and relation labels, embedded after the documents, show blocks too
    for kind in ("concepts", "relations"):
        lines = [e for e in embedded if e.endswith(" " + kind)]
        assert len(lines) >= 3, (kind, embedded)
        done, total = lines[-1].split()[0].split("/")
        assert done == total
