"""KG4VD's model-driven answer through scripted replies of the loopback OpenAI stub:
the analyzer, the two stages, the page images as data URIs, [n] → citations."""

from __future__ import annotations

import re

import pytest
from query_graph import history_graph, write_graph

from docgraph import Workspace
from docgraph.boundary import strip_fences
from docgraph.methods.kg4vd import query
from docgraph.testing import OpenAIStub
from docgraph.testing.fixtures import stub_settings

QUESTION = "Which dynasty did the grandson of Genghis Khan establish?"
PRELIMINARY = "Kublai Khan, a grandson of Genghis Khan {kublai}, established the Yuan dynasty {yuan}."


def item_number(prompt: str, pattern: str) -> int:
    """The evidence number of the first listed item whose line matches ``pattern``."""
    match = re.search(r"^\[(\d+)\] " + pattern, prompt, re.MULTILINE)
    assert match, f"no evidence line matching {pattern!r} in:\n{prompt}"
    return int(match.group(1))


def preliminary_reply(req) -> str:
    kublai = item_number(req.prompt, r"Kublai Khan \(person\)")
    yuan = item_number(req.prompt, r"Yuan dynasty \(organization\)")
    return PRELIMINARY.format(kublai=f"[{kublai}]", yuan=f"[{yuan}]")


def final_reply(req) -> str:
    page3 = item_number(req.prompt, r"A Short World History, page 3 \(image")
    yuan = item_number(req.prompt, r"Yuan dynasty \(organization\)")
    polo = item_number(req.prompt, r"Marco Polo \(person\)")
    return (
        f"The Yuan dynasty [{yuan}], founded by Kublai Khan in 1271 [{page3}, 999], "
        f"whose court Marco Polo served [{polo}]."
    )


@pytest.fixture
def stub():
    with OpenAIStub(default_reply="unexpected call") as server:
        yield server


def _workspace(tmp_path, stub, **chat):
    settings = stub_settings(stub, roles=("answer",), rerank=True, **chat)
    ws = Workspace(tmp_path / "ws", settings=settings)
    write_graph(ws, history_graph())
    return ws


def test_two_stage_answer_sends_images_and_maps_markers(tmp_path, stub):
    stub.reply({"mode": "multi_hop", "reason": "a chain through the grandson"}, stage="kg4vd.analyze")
    stub.reply(preliminary_reply, stage="kg4vd.answer_preliminary")
    stub.reply(final_reply, stage="kg4vd.answer_final")
    with _workspace(tmp_path, stub) as ws:
        answer = query.answer(ws.context(), QUESTION)

    assert answer.model_used and answer.mode == "multi_hop"
    assert stub.count("/chat/completions", stage="kg4vd.analyze") == 1
    assert stub.count("/rerank") == 1
    [stage1] = stub.seen("/chat/completions", stage="kg4vd.answer_preliminary")
    [stage2] = stub.seen("/chat/completions", stage="kg4vd.answer_final")
    assert stage1.image_urls == []
    # stage 2 got the preliminary answer (with its markers) and every kept page as a data URI
    assert preliminary_reply(stage1) in stage2.prompt
    assert len(answer.evidence.pages) == 6  # more than the 5 images stage two used to get
    assert len(stage2.image_urls) == len(answer.evidence.pages)
    assert all(url.startswith("data:image/png;base64,") for url in stage2.image_urls)
    assert strip_fences(stage2.prompt).rstrip().endswith("Other pages:\n(none)\n\nFinal answer:")
    assert [int(n) for n in re.findall(r"\(image (\d+)\)", stage2.prompt)] == list(range(1, 7))

    # [yuan] → the Yuan entity's mention (page 3, P1+T1); [page3] → the regions of page 3 that
    # the kept entities are grounded on — the same P1+T1, so the same citation; [polo] → page 4
    assert answer.text.startswith(
        "The Yuan dynasty [1], founded by Kublai Khan in 1271 [1], whose court Marco Polo served [2]."
    )
    first, second = answer.citations
    assert (first.doc_id, first.page, first.component_ids) == ("hist0001", 3, ["P1", "T1"])
    assert (second.page, second.component_ids, second.number) == (4, ["P1"], 2)
    page3 = ws_page(tmp_path, 3)
    for citation in answer.citations:
        assert citation.bboxes == [page3.component(c).bbox for c in citation.component_ids]
        assert citation.document_title == "A Short World History"
    assert any("unknown evidence numbers 999" in note for note in answer.evidence.notes)

    assert set(answer.usage) == {"kg4vd.analyze", "kg4vd.answer_preliminary", "kg4vd.answer_final"}
    assert answer.usage["kg4vd.answer_final"].images == len(stage2.image_urls)
    assert answer.usage["kg4vd.answer_final"].input_tokens > 0
    assert {"answer_preliminary", "answer_final", "answer", "analyzer", "rerank"} <= set(answer.timings)


def ws_page(tmp_path, number):
    with Workspace(tmp_path / "ws") as ws:
        return ws.store.get_page("hist0001", number)


def test_max_images_and_text_only_models(tmp_path, stub):
    stub.reply({"mode": "local", "reason": "lookup"}, stage="kg4vd.analyze")
    stub.reply("Genghis Khan founded it [1].", stage="kg4vd.answer_preliminary")
    stub.reply("Genghis Khan [1].", stage="kg4vd.answer_final")
    with _workspace(tmp_path, stub) as ws:
        answer = query.answer(ws.context(), "Who founded the Mongol Empire?", max_images=2)
        final = stub.seen(stage="kg4vd.answer_final")[-1]
        assert len(final.image_urls) == 2
        other = final.prompt.split("Other pages:\n", 1)[1]
        assert (
            len(re.findall(r"^\[\d+\] A Short World History, page \d+: ", other, re.M))
            == len(answer.evidence.pages) - 2
        )  # the rest as text excerpts
    # an endpoint that limits images: the answer endpoint's setting is the default cap
    with _workspace(tmp_path / "limited", stub, max_images=3) as ws:
        answer = query.answer(ws.context(), "Who founded the Mongol Empire?")
        assert len(stub.seen(stage="kg4vd.answer_final")[-1].image_urls) == 3 < len(answer.evidence.pages)
        query.answer(ws.context(), "Who founded the Mongol Empire?", max_images=1)  # the option still wins
        assert len(stub.seen(stage="kg4vd.answer_final")[-1].image_urls) == 1
    stub.reset()
    stub.reply({"mode": "local", "reason": "lookup"}, stage="kg4vd.analyze")
    stub.reply("Genghis Khan [1].", stage="kg4vd.answer_preliminary")
    stub.reply("Genghis Khan [1].", stage="kg4vd.answer_final")
    with _workspace(tmp_path / "blind", stub, supports_vision=False) as ws:
        answer = query.answer(ws.context(), "Who founded the Mongol Empire?")
    [final] = stub.seen(stage="kg4vd.answer_final")
    assert final.image_urls == []
    assert "founded the Mongol Empire in 1206" in final.prompt  # page 2 as a text excerpt
    assert answer.citations and answer.usage["kg4vd.answer_final"].images == 0


def test_uncited_model_answer_points_at_the_best_pages(tmp_path, stub):
    stub.reply({"mode": "local", "reason": "lookup"}, stage="kg4vd.analyze")
    stub.reply("Mansa Musa went to Mecca.", stage="kg4vd.answer_preliminary")
    stub.reply("He went in 1324.", stage="kg4vd.answer_final")
    with _workspace(tmp_path, stub) as ws:
        answer = query.answer(ws.context(), "When did Mansa Musa go to Mecca?")
    assert "the model cited none" in answer.text
    assert answer.citations and answer.citations[0].page == answer.evidence.pages[0].page


def test_analyzer_model_choice_and_fallback(tmp_path, stub):
    stub.reply({"mode": "document", "reason": "needs the whole book"}, stage="kg4vd.analyze")
    with _workspace(tmp_path, stub) as ws:
        ev = query.retrieve(ws.context(), "Where did Marco Polo come from?")
        assert ev.mode == "document"
        assert any("model: needs the whole book" in note for note in ev.notes)
        analyze = stub.seen(stage="kg4vd.analyze")[-1]
        assert "Where did Marco Polo come from?" in analyze.prompt and analyze.image_urls == []
        # an explicit mode skips the analyzer model
        before = stub.count(stage="kg4vd.analyze")
        assert query.retrieve(ws.context(), "Marco Polo?", mode="local").mode == "local"
        assert stub.count(stage="kg4vd.analyze") == before
    stub.reset()
    stub.reply("this is not JSON at all", stage="kg4vd.analyze")
    with _workspace(tmp_path / "bad", stub) as ws:
        ev = query.retrieve(ws.context(), "Compare Genghis Khan and Kublai Khan.")
    assert ev.mode == "multi_hop"
    assert any("analyzer model failed" in note for note in ev.notes)
