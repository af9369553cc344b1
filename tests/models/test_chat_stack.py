"""The chat stack against the loopback stub: cache, retries and faults, limit, usage, images."""

from __future__ import annotations

import base64
import io
import threading
import time

import pytest
from PIL import Image
from pydantic import BaseModel

from docgraph.errors import ModelError
from docgraph.models.base import ImagePart, user
from docgraph.models.transport.retry import RetriesExhausted
from docgraph.models.usage import total
from docgraph.testing.fixtures import make_hub, stub_settings


class City(BaseModel):
    name: str
    country: str


def _png(color: str = "red") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(buf, format="PNG")
    return buf.getvalue()


def test_cache_hit_makes_no_http_call_and_returns_equal_result(openai_stub, stub_hub):
    openai_stub.reply({"name": "Paris", "country": "France"}, stage="geo")
    chat = stub_hub.chat("build")
    first = chat.complete([user("capital of France?")], stage="geo", schema=City)
    assert openai_stub.count("/chat/completions") == 1 and not first.cached
    second = chat.complete([user("capital of France?")], stage="geo", schema=City)
    assert openai_stub.count("/chat/completions") == 1  # no HTTP call
    assert second.cached and second.text == first.text and second.parsed == first.parsed
    assert isinstance(second.parsed, City) and second.model == first.model
    # a different parameter or message is a different request
    chat.complete([user("capital of France?")], stage="geo", schema=City, temperature=0.5)
    chat.complete([user("capital of Spain?")], stage="geo", schema=City)
    assert openai_stub.count("/chat/completions") == 3
    usage = stub_hub.meter.snapshot()["geo"]
    assert (usage.calls, usage.cache_hits) == (3, 1)
    assert stub_hub.store.usage()["geo"].cache_hits == 1  # persisted in the workspace


def test_cache_survives_a_new_hub_on_the_same_workspace(openai_stub, tmp_path):
    settings = stub_settings(openai_stub)
    hub = make_hub(settings, tmp_path / "ws")
    hub.chat("answer").complete([user("q")], stage="a")
    hub.store.close()
    again = make_hub(settings, tmp_path / "ws")
    assert again.chat("answer").complete([user("q")], stage="a").cached
    assert openai_stub.count() == 1


def test_image_cache_key_uses_content_not_path(openai_stub, stub_hub, tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    a.write_bytes(_png("red"))
    b.write_bytes(_png("red"))
    chat = stub_hub.chat("build")
    chat.complete([user("describe", [a])], stage="img")
    assert chat.complete([user("describe", [b])], stage="img").cached  # same bytes, other file
    b.write_bytes(_png("blue"))
    assert not chat.complete([user("describe", [b])], stage="img").cached


def test_images_arrive_as_valid_png_data_uris(openai_stub, stub_hub, tmp_path):
    page = tmp_path / "page.png"
    page.write_bytes(_png("green"))
    stub_hub.chat("build").complete(
        [user("what is on this page?", [page, ImagePart(data=_png("blue"))])], stage="vision"
    )
    urls = openai_stub.seen("/chat/completions")[-1].image_urls
    assert len(urls) == 2
    for url in urls:
        head, payload = url.split(",", 1)
        assert head == "data:image/png;base64"
        raw = base64.b64decode(payload, validate=True)
        assert raw.startswith(b"\x89PNG\r\n\x1a\n")
        assert Image.open(io.BytesIO(raw)).size == (8, 6)
    assert stub_hub.meter.snapshot()["vision"].images == 2


def test_usage_matches_what_the_server_saw(openai_stub, stub_hub, tmp_path):
    img = tmp_path / "i.png"
    img.write_bytes(_png())
    openai_stub.reply("a reply of six words here", stage="s1")
    chat = stub_hub.chat("build")
    chat.complete([user("one two three")], stage="s1")
    chat.complete([user("four five", [img])], stage="s2")
    chat.complete([user("four five", [img])], stage="s2")  # cache hit: the server sees nothing
    used = stub_hub.meter.snapshot()
    assert used["s1"].calls == 1 and used["s2"].calls == 1 and used["s2"].cache_hits == 1
    everything = total(used)
    assert everything.calls == openai_stub.count("/chat/completions") == 2
    assert everything.input_tokens == openai_stub.usage["prompt_tokens"]
    assert everything.output_tokens == openai_stub.usage["completion_tokens"]
    assert everything.images == openai_stub.usage["images"] == 1
    assert total(stub_hub.store.usage()) == everything


def test_meter_track_reports_one_piece_of_work(stub_hub):
    chat = stub_hub.chat("answer")
    chat.complete([user("before")], stage="x")
    with stub_hub.meter.track() as used:
        chat.complete([user("inside")], stage="y")
        chat.complete([user("before")], stage="x")  # hit
    assert set(used) == {"x", "y"}
    assert used["y"].calls == 1 and used["x"].calls == 0 and used["x"].cache_hits == 1


@pytest.mark.parametrize("kind", ["500", "503", "malformed", "disconnect"])
def test_transient_faults_are_retried(openai_stub, stub_hub, kind):
    openai_stub.fault(kind, times=2)
    result = stub_hub.chat("build").complete([user(f"q {kind}")], stage="f")
    assert result.text == "OK"
    assert openai_stub.count("/chat/completions") == 3  # two faults, then success


def test_429_honours_retry_after(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, backoff_max_s=1.0), tmp_path / "ws")
    openai_stub.fault("429", times=1, retry_after=0.4)
    start = time.perf_counter()
    assert hub.chat("build").complete([user("q")], stage="r").text == "OK"
    assert time.perf_counter() - start >= 0.4  # backoff alone would be ~0.01 s
    assert openai_stub.count() == 2


def test_hang_past_the_timeout_is_retried(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, timeout_s=0.3), tmp_path / "ws")
    openai_stub.fault("hang", times=1)
    start = time.perf_counter()
    assert hub.chat("build").complete([user("q")], stage="h").text == "OK"
    assert 0.3 <= time.perf_counter() - start < 3.0
    assert openai_stub.count() == 2


def test_persistent_faults_surface_a_clear_error_after_the_configured_attempts(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, max_retries=3), tmp_path / "ws")
    openai_stub.fault("500", times=100)
    with pytest.raises(RetriesExhausted) as info:
        hub.chat("judge").complete([user("q")], stage="judge.pair")
    message = str(info.value)
    assert openai_stub.count() == 4  # 1 + max_retries
    assert openai_stub.url in message and "4 attempt" in message and "HTTP 500" in message
    assert "check" in message
    assert hub.meter.snapshot()["judge.pair"].failures == 1


def test_timeouts_exhausted_name_the_endpoint_and_the_setting(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, timeout_s=0.2, max_retries=1), tmp_path / "ws")
    openai_stub.fault("hang", times=10)
    with pytest.raises(ModelError, match=r"timed out.*timeout_s"):
        hub.chat("build").complete([user("q")], stage="t")
    assert openai_stub.count() == 2


def test_connection_refused_is_reported_with_the_base_url(tmp_path):
    from docgraph.config import load_settings
    from docgraph.models.hub import ModelHub
    from docgraph.store.sqlite import SQLiteStore

    url = "http://127.0.0.1:9/v1"  # discard port: nothing listens
    settings = load_settings(
        None,
        environ={},
        overrides={"models": {"build": {"base_url": url, "max_retries": 1, "backoff_base_s": 0.01, "timeout_s": 1}}},
    )
    hub = ModelHub(settings.models, SQLiteStore(tmp_path), tmp_path)
    with pytest.raises(ModelError, match="connection failed.*base_url") as info:
        hub.chat("build").complete([user("q")], stage="c")
    assert url in str(info.value)


@pytest.mark.parametrize("status, hint", [("401", "api_key_env"), ("404", "base_url"), ("400", "parameters")])
def test_client_errors_are_not_retried(openai_stub, stub_hub, status, hint):
    openai_stub.fault(status, times=5)
    with pytest.raises(ModelError, match=f"HTTP {status}") as info:
        stub_hub.chat("build").complete([user("q")], stage="e")
    assert hint in str(info.value)
    assert openai_stub.count() == 1


def test_truncated_output_is_re_asked_with_a_larger_limit(openai_stub, stub_hub):
    openai_stub.reply({"name": "Lisbon", "country": "Portugal"})
    openai_stub.fault("truncated", times=1)
    result = stub_hub.chat("build").complete([user("capital of Portugal?")], stage="trunc", schema=City, max_tokens=50)
    assert result.parsed == City(name="Lisbon", country="Portugal")
    bodies = [r.body for r in openai_stub.seen("/chat/completions")]
    assert len(bodies) == 2  # the cut JSON repairs to {"name": "Lisbon"}: invalid, so re-asked
    assert bodies[0]["max_tokens"] == 50 and bodies[1]["max_tokens"] == 100
    assert "cut off" in bodies[1]["messages"][-1]["content"]
    # the cut reply is not sent back (it would only lengthen the prompt): original question + note
    assert [m["role"] for m in bodies[1]["messages"]] == ["user", "user"]


def test_concurrency_limit_holds_under_20_parallel_calls(openai_stub, tmp_path):
    openai_stub.delay_s = 0.2
    hub = make_hub(stub_settings(openai_stub, max_concurrency=3), tmp_path / "ws")
    chat = hub.chat("build")
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            chat.complete([user(f"question {i}")], stage="par")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert openai_stub.count() == 20
    assert openai_stub.max_in_flight == 3  # never more, and the limit is actually used
    assert hub.meter.snapshot()["par"].calls == 20
