"""Recorded-response replay: ordered per stage, keyed, recorded from a live endpoint, cached."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from docgraph.errors import ModelError, ModelOutputError
from docgraph.models.base import system, user
from docgraph.models.chat.replay import read_replay
from docgraph.testing.fixtures import make_hub, replay_hub, stub_settings


class Verdict(BaseModel):
    label: str


def test_replay_serves_replies_in_order_per_stage_through_the_structured_path(tmp_path):
    hub = replay_hub(
        tmp_path,
        [
            ("judge", {"label": "same"}),
            ("extract", "not json at all"),
            ("judge", "```json\n{'label': 'related',}\n```"),  # repaired like a live reply
            ("extract", '{"label": "unrelated"}'),  # served as the re-ask
        ],
    )
    chat = hub.chat("judge")
    assert chat is not None and hub.chat("build") is not None
    assert chat.complete([user("a vs b")], stage="judge", schema=Verdict).parsed.label == "same"
    assert chat.complete([user("c vs d")], stage="judge", schema=Verdict).parsed.label == "related"
    assert chat.complete([user("e")], stage="extract", schema=Verdict).parsed.label == "unrelated"
    usage = hub.meter.snapshot()
    assert usage["judge"].calls == 2 and usage["extract"].calls == 2


def test_replay_goes_through_the_cache(tmp_path):
    hub = replay_hub(tmp_path, [("s", "first")])
    chat = hub.chat("answer")
    assert chat.complete([user("q")], stage="s").text == "first"
    again = chat.complete([user("q")], stage="s")  # the file has nothing left: only the cache can answer
    assert again.cached and again.text == "first"


def test_missing_reply_names_stage_and_file(tmp_path):
    hub = replay_hub(tmp_path, [("other", "x")])
    with pytest.raises(ModelError, match=r"replay file .*no recorded reply for stage 'wanted'") as info:
        hub.chat("build").complete([user("q")], stage="wanted")
    assert "replay.jsonl" in str(info.value)


def test_wildcard_stage_and_invalid_replay_file(tmp_path):
    hub = replay_hub(tmp_path, [{"stage": "*", "text": "anything"}])
    assert hub.chat("build").complete([user("q")], stage="whatever").text == "anything"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"stage": "s", "text": "ok"}\n{"text": "no stage"}\n')
    with pytest.raises(ModelError, match=r"bad.jsonl:2"):
        read_replay(bad)


def test_record_live_replies_then_replay_them_without_the_server(openai_stub, tmp_path):
    openai_stub.reply({"label": "same"}, stage="judge")
    openai_stub.reply("free text answer", stage="answer")
    record = tmp_path / "recorded.jsonl"
    live = make_hub(stub_settings(openai_stub), tmp_path / "live", record_file=record)
    msgs = [system("You judge pairs."), user("Is Rome the same as Roma?")]
    assert live.chat("judge").complete(msgs, stage="judge", schema=Verdict).parsed.label == "same"
    assert live.chat("answer").complete([user("Q?")], stage="answer").text == "free text answer"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [line["stage"] for line in lines] == ["judge", "answer"] and all(len(line["key"]) == 64 for line in lines)
    served = openai_stub.count()

    # a fresh workspace (no cache) replays by request key, in any order, any number of times
    settings = stub_settings(openai_stub, overrides={"models": {"replay_file": str(record)}})
    replay = make_hub(settings, tmp_path / "replayed")
    chat = replay.chat("judge")
    assert chat.complete([user("Q?")], stage="answer").text == "free text answer"
    assert chat.complete(msgs, stage="judge", schema=Verdict).parsed.label == "same"
    assert openai_stub.count() == served  # nothing went over HTTP


def test_replayed_invalid_reply_fails_like_a_live_one(tmp_path):
    hub = replay_hub(tmp_path, [("s", "nope"), ("s", "still nope")])
    with pytest.raises(ModelOutputError) as info:
        hub.chat("build").complete([user("q")], stage="s", schema=Verdict)
    assert info.value.raw == "still nope" and info.value.saved_to
