"""``kg4vd.on_model_error`` (issue 19): a page whose model replies stay unusable after the
repair and re-asks is either left for the next build ("retry-later", the default) or built
with the offline strategy and marked so ("offline") — through the real client code path
against the scripted stub server, where page 2's extraction replies are never JSON.
"""

from __future__ import annotations

import json
import re

import pytest

from docgraph import Workspace
from docgraph.cli import main
from docgraph.methods.kg4vd import storage as st
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub

BAD_PAGE = 2
DONE = {"components": [], "gaps": [], "revision_targets": [], "stop_signal": 1}


def _round_and_page(prompt: str) -> tuple[int, int]:
    match = re.search(r"round (\d+) of at most \d+ on page (\d+)", prompt)
    assert match, prompt[:300]
    return int(match.group(1)), int(match.group(2))


def broken_page_script(req):
    """Page ``BAD_PAGE``'s extraction replies are never JSON; the other pages stop after round 1."""
    if req.stage == "kg4vd.judge":
        return {"labels": []}
    if req.stage == "kg4vd.extract":
        return (
            "sorry, I cannot produce JSON <end_of_turn>"
            if _round_and_page(req.prompt)[1] == BAD_PAGE
            else {"nodes": [], "edges": []}
        )
    return DONE


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        server.reply(broken_page_script)
        yield server


def _strategies(ws) -> dict[int, str]:
    return {g.page: g.strategy for g in st.iter_page_graphs(ws.store)}


def test_retry_later_names_the_failed_page(stub, wh_workspace):
    ws = wh_workspace(settings=stub_settings(stub, embeddings=True))
    assert ws.settings.kg4vd.on_model_error == "retry-later"
    report = ws.build("kg4vd")
    assert report.stats["failed_pages"] == 1 and f"page {BAD_PAGE}" in report.stats["failures"][0]
    assert report.stats["offline_fallback_pages"] == 0 and report.pages_built == 4
    assert BAD_PAGE not in _strategies(ws) and set(_strategies(ws).values()) == {"model"}


def test_offline_builds_the_page_offline_marks_and_counts_it(stub, wh_workspace, capsys):
    settings = stub_settings(stub, embeddings=True, overrides={"kg4vd": {"on_model_error": "offline"}})
    ws = wh_workspace(settings=settings)
    report = ws.build("kg4vd")
    assert report.stats["failed_pages"] == 0 and "failures" not in report.stats
    assert report.stats["offline_fallback_pages"] == 1 and report.pages_built == 5
    strategies = _strategies(ws)
    assert strategies.pop(BAD_PAGE) == "offline-fallback"
    assert set(strategies.values()) == {"model"} and len(strategies) == 4
    bad = next(g for g in st.iter_page_graphs(ws.store) if g.page == BAD_PAGE)
    assert bad.entities and "JSON" in bad.fallback_error  # the offline strategy found entities
    assert ws.status()["kg4vd"]["complete"]
    # the model's attempts at the page were made (with re-asks) before it fell back
    assert sum(_round_and_page(r.prompt)[1] == BAD_PAGE for r in stub.seen(stage="kg4vd.extract")) >= 2

    assert main(["--workspace", str(ws.root), "graph", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["pages_by_strategy"] == {"model": 4, "offline-fallback": 1}
    assert stats["offline_fallback_pages"] == [f"{bad.doc_id} page {BAD_PAGE}"]
    assert main(["--workspace", str(ws.root), "graph", "stats"]) == 0
    text = capsys.readouterr().out
    assert "offline-fallback" in text and f"{bad.doc_id} page {BAD_PAGE}" in text

    # changing the setting back rebuilds nothing and calls no model
    ws.close()
    calls = stub.count("/chat/completions")
    with Workspace(ws.root, settings=stub_settings(stub, embeddings=True)) as ws2:
        report = ws2.build("kg4vd")
        assert (report.pages_built, report.pages_skipped) == (0, 5) and "rebuilt" not in report.stats
        assert _strategies(ws2)[BAD_PAGE] == "offline-fallback"
    assert stub.count("/chat/completions") == calls
