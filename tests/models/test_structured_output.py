"""Schema-constrained output, downgrades, cut replies and server slots, through the real HTTP
client against the loopback stub (issue 19)."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import BaseModel, Field

from docgraph.models.base import user
from docgraph.models.chat.capabilities import META_PREFIX
from docgraph.models.chat.response_format import bound_arrays, json_schema_format, rejects_format
from docgraph.models.chat.structured import ModelOutputTruncated, StructuredChat
from docgraph.models.transport.limit import LimitedChat
from docgraph.testing.fixtures import make_hub, stub_settings
from docgraph.testing.openai_stub import OpenAIStub


class Item(BaseModel):
    name: str
    tags: list[str] = Field(default_factory=list)


class Listing(BaseModel):
    items: list[Item] = Field(default_factory=list)
    notes: list[str] | None = None


GOOD = {"items": [{"name": "Rome", "tags": ["city"]}]}


def test_bound_arrays_caps_every_array_and_honours_named_bounds():
    schema = bound_arrays(Listing.model_json_schema(), 7, {"items": 3})
    assert schema["properties"]["items"]["maxItems"] == 3
    assert schema["$defs"]["Item"]["properties"]["tags"]["maxItems"] == 7
    notes = [s for s in schema["properties"]["notes"]["anyOf"] if s.get("type") == "array"][0]
    assert notes["maxItems"] == 7
    assert "maxItems" not in Listing.model_json_schema()["properties"]["items"]  # a copy, not in place


def test_rejection_is_recognised_only_for_the_parameter():
    assert rejects_format(400, "HTTP 400 {'error': 'response_format type json_schema is not supported'}")
    assert not rejects_format(400, "HTTP 400 stub fault 400")
    assert not rejects_format(500, "response_format crashed the server")


def test_every_structured_call_sends_its_schema_bounded(openai_stub, tmp_path):
    openai_stub.reply(GOOD)
    hub = make_hub(stub_settings(openai_stub, schema_max_items=5), tmp_path / "ws")
    result = hub.chat("build").complete([user("list")], stage="s", schema=Listing)
    assert result.parsed == Listing.model_validate(GOOD)
    fmt = openai_stub.seen("/chat/completions")[0].response_format
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Listing"
    sent = fmt["json_schema"]["schema"]
    assert sent["properties"]["items"]["maxItems"] == 5
    assert sent["$defs"]["Item"]["properties"]["tags"]["maxItems"] == 5
    hub.chat("build").complete([user("plain")], stage="t")  # no schema: no response_format
    assert openai_stub.seen("/chat/completions")[-1].response_format is None


def test_a_call_s_own_bounds_win(openai_stub, stub_hub):
    openai_stub.reply(GOOD)
    fmt = json_schema_format(Listing, max_items={"items": 2})
    stub_hub.chat("judge").complete([user("list")], stage="s", schema=Listing, response_format=fmt)
    sent = openai_stub.seen("/chat/completions")[0].response_format["json_schema"]["schema"]
    assert sent["properties"]["items"]["maxItems"] == 2


def test_rejected_json_schema_downgrades_once_and_is_remembered(tmp_path, caplog):
    with OpenAIStub(reject_formats={"json_schema"}) as stub:
        stub.reply(GOOD)
        hub = make_hub(stub_settings(stub, roles=("build",)), tmp_path / "ws")
        with caplog.at_level(logging.WARNING, logger="docgraph.models.chat.capabilities"):
            first = hub.chat("build").complete([user("a")], stage="s", schema=Listing)
            hub.chat("build").complete([user("b")], stage="s", schema=Listing)
        assert first.parsed == Listing.model_validate(GOOD)
        sent = [r.response_format for r in stub.seen("/chat/completions")]
        assert [f["type"] for f in sent] == ["json_schema", "json_object", "json_object"]
        assert [r.status for r in stub.seen("/chat/completions")] == [400, 200, 200]
        assert len([r for r in caplog.records if "rejected response_format" in r.getMessage()]) == 1
        assert hub.meter.snapshot()["s"].calls == 2 and hub.meter.snapshot()["s"].failures == 0
        hub.store.close()
        # a new process on the same workspace starts from the downgraded mode: no failed request
        again = make_hub(stub_settings(stub, roles=("build",)), tmp_path / "ws")
        again.chat("build").complete([user("c")], stage="s", schema=Listing)
        assert stub.seen("/chat/completions")[-1].response_format == {"type": "json_object"}
        assert stub.seen("/chat/completions")[-1].status == 200
        again.store.close()


def test_server_refusing_any_format_falls_back_to_none(tmp_path):
    with OpenAIStub(reject_formats={"json_schema", "json_object"}) as stub:
        stub.reply(GOOD)
        hub = make_hub(stub_settings(stub, roles=("build",)), tmp_path / "ws")
        assert hub.chat("build").complete([user("a")], stage="s", schema=Listing).parsed is not None
        sent = [r.response_format for r in stub.seen("/chat/completions")]
        assert [f and f["type"] for f in sent] == ["json_schema", "json_object", None]
        hub.store.close()


def test_structured_output_none_sends_no_format(openai_stub, tmp_path):
    openai_stub.reply(GOOD)
    hub = make_hub(stub_settings(openai_stub, structured_output="none"), tmp_path / "ws")
    hub.chat("build").complete([user("a")], stage="s", schema=Listing)
    assert openai_stub.seen("/chat/completions")[0].response_format is None


def test_cut_reply_is_its_own_error_and_the_limit_grows_boundedly(openai_stub, stub_hub):
    openai_stub.reply(GOOD)
    openai_stub.fault("truncated", times=10)
    stub_hub.chat("build").unwrap(StructuredChat).reasks = 3
    with pytest.raises(ModelOutputTruncated, match="cut off at the token limit") as info:
        stub_hub.chat("build").complete([user("a")], stage="cut", schema=Listing, max_tokens=40)
    assert "max_output_tokens" in str(info.value)
    limits = [r.body["max_tokens"] for r in openai_stub.seen("/chat/completions")]
    assert limits == [40, 80, 80, 80]  # at most twice the original, however many re-asks


def test_slots_from_props_clamp_concurrency_shared_by_roles(tmp_path, caplog):
    with OpenAIStub(slots=1, vision=False, delay_s=0.2) as stub:
        stub.reply(GOOD)
        hub = make_hub(stub_settings(stub, max_concurrency=4), tmp_path / "ws")
        with caplog.at_level(logging.WARNING, logger="docgraph.models.hub"):
            build, judge = hub.chat("build"), hub.chat("judge")
        assert stub.gets == ["/props"]  # probed once for the server, not per role
        assert any("lowered to 1" in r.getMessage() for r in caplog.records)
        lb, lj = build.unwrap(LimitedChat), judge.unwrap(LimitedChat)
        assert lb.limit is lj.limit and lb.limit.max_concurrency == 1
        assert build.supports_vision is False  # /props says no vision: text-only
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(6) as pool:
            list(
                pool.map(
                    lambda i: (build if i % 2 else judge).complete([user(f"q{i}")], stage="p", schema=Listing), range(6)
                )
            )
        assert stub.max_in_flight == 1
        hub.store.close()
        cached = make_hub(stub_settings(stub, max_concurrency=4), tmp_path / "ws")
        assert cached.chat("build").unwrap(LimitedChat).limit.max_concurrency == 1
        assert stub.gets == ["/props"]  # remembered in the workspace: not probed again
        record = json.loads(cached.store.get_meta(f"{META_PREFIX}{stub.url}|stub-model"))
        assert record["slots"] == 1 and record["vision"] is False
        cached.store.close()


def test_server_without_props_keeps_the_configured_concurrency(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, max_concurrency=3), tmp_path / "ws")
    assert hub.chat("build").unwrap(LimitedChat).limit.max_concurrency == 3
    assert openai_stub.gets == ["/props"]


def test_configured_slots_skip_the_probe(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, max_concurrency=3, slots=2), tmp_path / "ws")
    assert hub.chat("build").unwrap(LimitedChat).limit.max_concurrency == 2
    assert openai_stub.gets == []
