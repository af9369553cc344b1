"""ModelHub: what each setting builds, and the order of the chat wrappers."""

from __future__ import annotations

import pytest

from docgraph.config import load_settings
from docgraph.errors import ConfigError
from docgraph.models.base import ChatModel, ImageEmbedder, OfflineNLP, Reranker, TextEmbedder, user
from docgraph.models.chat.cache import CachedChat
from docgraph.models.chat.openai_chat import OpenAIChat
from docgraph.models.chat.replay import ReplayChat, write_replay
from docgraph.models.chat.structured import StructuredChat
from docgraph.models.hub import ModelHub
from docgraph.models.rerank import FusionReranker
from docgraph.models.transport.limit import LimitedChat
from docgraph.models.transport.retry import RetryingChat
from docgraph.models.usage import MeteredChat
from docgraph.store.sqlite import SQLiteStore
from docgraph.testing.fixtures import make_hub, stub_settings


def _layers(chat) -> list[type]:
    out = []
    while chat is not None:
        out.append(type(chat))
        chat = getattr(chat, "inner", None)
    return out


def test_offline_defaults(tmp_path):
    hub = ModelHub(load_settings(None, environ={}).models, SQLiteStore(tmp_path), tmp_path)
    assert hub.chat("build") is None and hub.chat("answer") is None and hub.chat("judge") is None
    assert isinstance(hub.text_embedder, TextEmbedder) and hub.text_embedder.model == "openvino:multilingual-e5-small"
    assert isinstance(hub.image_embedder, ImageEmbedder) and hub.image_embedder.is_text_fallback
    assert isinstance(hub.reranker, Reranker) and isinstance(hub.reranker, FusionReranker)
    assert isinstance(hub.nlp, OfflineNLP)
    assert hub.text_embedder is hub.text_embedder and hub.meter is hub.meter  # created once
    with pytest.raises(ConfigError, match="unknown model role"):
        hub.chat("writer")


def test_live_stack_order_and_per_role_settings(openai_stub, tmp_path):
    settings = stub_settings(
        openai_stub,
        roles=("build", "judge"),
        overrides={"models": {"judge": {"model": "judge-model", "max_concurrency": 2}}},
    )
    hub = make_hub(settings, tmp_path)
    build = hub.chat("build")
    assert isinstance(build, ChatModel)
    assert _layers(build) == [MeteredChat, CachedChat, StructuredChat, LimitedChat, RetryingChat, OpenAIChat]
    assert hub.chat("answer") is None  # no base_url for that role
    judge = hub.chat("judge")
    assert judge.model == "judge-model" and judge.unwrap(LimitedChat).limit.max_concurrency == 2
    assert hub.chat("build") is build
    judge.complete([user("q")], stage="judge.pair")
    assert openai_stub.seen()[-1].body["model"] == "judge-model"
    assert openai_stub.seen()[-1].stage == "judge.pair"
    assert openai_stub.seen()[-1].body["temperature"] == 0.0


def test_cache_can_be_switched_off(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, overrides={"models": {"cache": False}}), tmp_path)
    chat = hub.chat("build")
    assert CachedChat not in _layers(chat)
    chat.complete([user("q")], stage="s")
    chat.complete([user("q")], stage="s")
    assert openai_stub.count() == 2


def test_replay_file_selects_replay_for_every_role_relative_to_the_workspace(tmp_path):
    write_replay(tmp_path / "replies.jsonl", [("s", "from file")])
    settings = load_settings(None, environ={}, overrides={"models": {"replay_file": "replies.jsonl"}})
    hub = ModelHub(settings.models, SQLiteStore(tmp_path), tmp_path)
    chat = hub.chat("answer")
    assert _layers(chat) == [MeteredChat, CachedChat, StructuredChat, ReplayChat]
    assert chat.complete([user("q")], stage="s").text == "from file"


def test_missing_key_env_is_allowed_for_local_servers(openai_stub, tmp_path, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    hub = make_hub(stub_settings(openai_stub, api_key_env="NO_SUCH_KEY_VAR"), tmp_path)
    hub.chat("build").complete([user("q")], stage="s")
    assert openai_stub.seen()[-1].headers["authorization"] == "Bearer EMPTY"
    monkeypatch.setenv("MY_KEY", "sk-test")
    hub2 = make_hub(stub_settings(openai_stub, api_key_env="MY_KEY"), tmp_path / "b")
    hub2.chat("build").complete([user("q2")], stage="s")
    assert openai_stub.seen()[-1].headers["authorization"] == "Bearer sk-test"


def test_vision_off_refuses_images_clearly(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, supports_vision=False), tmp_path)
    png = tmp_path / "p.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(Exception, match="supports_vision"):
        hub.chat("build").complete([user("look", [png])], stage="v")
    assert openai_stub.count() == 0
