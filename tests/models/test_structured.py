"""JSON extraction/repair (pure) and the structured-output wrapper (repair, re-ask, saved failures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from docgraph.errors import ModelOutputError
from docgraph.models.base import user
from docgraph.models.chat.jsonrepair import JSONNotFound, extract_json, repair_json
from docgraph.models.chat.structured import parse_reply


class Entity(BaseModel):
    name: str
    type: str


class Extraction(BaseModel):
    entities: list[Entity]
    done: bool = False


@pytest.mark.parametrize(
    "reply, expected",
    [
        ('```json\n{"a": 1}\n```\nHope this helps!', {"a": 1}),
        ('Sure, here it is: {"a": [1, 2]} — let me know.', {"a": [1, 2]}),
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ("{'name': 'Rome', 'note': \"it's old\"}", {"name": "Rome", "note": "it's old"}),
        ('{name: "Rome", count: 3}', {"name": "Rome", "count": 3}),
        ('{"ok": True, "missing": None, "no": False}', {"ok": True, "missing": None, "no": False}),
        ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
        (
            '{"entities": [{"name": "Caesar", "type": "person"}, {"name": "Ga',
            {"entities": [{"name": "Caesar", "type": "person"}, {"name": "Ga"}]},
        ),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": "x", "b":', {"a": "x", "b": None}),
        ('{"a": 1, // a comment\n "b": 2}', {"a": 1, "b": 2}),
        ("[1, 2, 3] and some prose [4]", [1, 2, 3]),
    ],
)
def test_extract_and_repair(reply, expected):
    assert extract_json(reply) == expected


def test_repair_outputs_strict_json_and_nothing_found_raises():
    assert json.loads(repair_json("{'a': (1)}")) == {"a": 1}
    with pytest.raises(JSONNotFound):
        extract_json("I cannot answer that.")


def test_parse_reply_validates_and_wraps_a_bare_list():
    parsed = parse_reply('[{"name": "Rome", "type": "location"}]', Extraction)
    assert parsed == Extraction(entities=[Entity(name="Rome", type="location")])
    with pytest.raises(ValueError, match=r"entities.0.type"):
        parse_reply('{"entities": [{"name": "Rome"}]}', Extraction)


def test_malformed_json_reply_is_repaired_without_a_second_call(openai_stub, stub_hub):
    openai_stub.reply(
        "Here you go:\n```json\n{'entities': [{'name': 'Rome', 'type': 'location',},], 'done': True}\n```"
    )
    result = stub_hub.chat("build").complete([user("extract")], stage="x", schema=Extraction)
    assert result.parsed == Extraction(entities=[Entity(name="Rome", type="location")], done=True)
    assert openai_stub.count() == 1


def test_invalid_reply_is_re_asked_once_with_the_validation_error(openai_stub, stub_hub):
    openai_stub.reply('{"entities": [{"name": "Rome"}]}', times=1)
    openai_stub.reply('{"entities": [{"name": "Rome", "type": "location"}]}')
    result = stub_hub.chat("build").complete([user("extract")], stage="x", schema=Extraction)
    assert result.parsed.entities[0].type == "location"
    second = openai_stub.seen("/chat/completions")[1].body["messages"]
    assert second[-2] == {"role": "assistant", "content": '{"entities": [{"name": "Rome"}]}'}
    assert "entities.0.type" in second[-1]["content"] and '"properties"' in second[-1]["content"]
    usage = stub_hub.meter.snapshot()["x"]
    assert usage.calls == 2 and usage.failures == 0
    assert usage.input_tokens == openai_stub.usage["prompt_tokens"]


def test_still_invalid_after_re_ask_raises_with_raw_reply_saved(openai_stub, stub_hub):
    openai_stub.reply("I would rather not answer in JSON.")
    with pytest.raises(ModelOutputError) as info:
        stub_hub.chat("build").complete([user("extract")], stage="kg4vd.extract", schema=Extraction)
    err = info.value
    assert err.raw == "I would rather not answer in JSON."
    assert err.saved_to and Path(err.saved_to).parent == stub_hub.root / "model_errors"
    saved = json.loads(Path(err.saved_to).read_text())
    assert saved["stage"] == "kg4vd.extract" and saved["schema"] == "Extraction"
    assert saved["replies"] == ["I would rather not answer in JSON."] * 2
    assert openai_stub.count() == 2
    usage = stub_hub.meter.snapshot()["kg4vd.extract"]
    assert usage.failures == 1 and usage.calls == 2  # the failed attempts' usage is still counted
    # failures are not cached: the next call asks again
    openai_stub.reset()
    openai_stub.reply('{"entities": []}', stage="kg4vd.extract")
    ok = stub_hub.chat("build").complete([user("extract")], stage="kg4vd.extract", schema=Extraction)
    assert ok.parsed == Extraction(entities=[]) and not ok.cached


def test_changed_schema_misses_the_cache(openai_stub, stub_hub):
    class V1(BaseModel):
        name: str

    class V2(BaseModel):
        name: str
        extra: int = 0

    chat = stub_hub.chat("build")
    openai_stub.reply('{"name": "x"}')
    chat.complete([user("q")], stage="s", schema=V1)
    assert not chat.complete([user("q")], stage="s", schema=V2).cached
    assert chat.complete([user("q")], stage="s", schema=V1).cached
