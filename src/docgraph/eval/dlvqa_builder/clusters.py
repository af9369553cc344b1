"""Fact clusters across pages: embeddings → HDBSCAN (noise dropped) → the page-span rule.

``hdbscan_labels`` is ``sklearn.cluster.HDBSCAN`` over L2-normalised fact embeddings
(Euclidean distance on unit vectors orders pairs as cosine distance does); fewer facts than
``min_cluster_size`` make no cluster. ``group`` turns labels into ``Cluster`` s (label -1,
the noise, as cluster -1). ``span_verdict`` says why a cluster is not asked about: removed
in review, noise, or gold facts on fewer than ``min_pages`` distinct pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ...models.base import TextEmbedder
from ...models.usage import embedding_stage
from .schemas import Cluster, Fact

NOISE = -1
EMBEDDING_LABEL = "dlvqa facts"  # usage stage embed.dlvqa facts


def embed_facts(embedder: TextEmbedder, facts: Sequence[Fact]) -> np.ndarray:
    """One unit row per fact (the configured text embedder, as passages; cached by content)."""
    if not facts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    with embedding_stage(EMBEDDING_LABEL):
        return np.asarray(embedder.embed_passages([f.text for f in facts]), dtype=np.float32)


def hdbscan_labels(vectors: np.ndarray, min_cluster_size: int, min_samples: int | None = None) -> np.ndarray:
    """A cluster label per row, -1 for noise (deterministic for the same vectors)."""
    n = len(vectors)
    if n < max(2, min_cluster_size):
        return np.full(n, NOISE, dtype=int)
    from sklearn.cluster import HDBSCAN

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors, dtype=np.float64), where=norms > 0)
    model = HDBSCAN(
        min_cluster_size=min_cluster_size,
        min_samples=min(min_samples or min_cluster_size, n),
        metric="euclidean",
        copy=True,
    )
    return model.fit_predict(unit.astype(np.float64)).astype(int)


def group(facts: Sequence[Fact], labels: Iterable[int]) -> list[Cluster]:
    """Clusters in label order (noise, if any, first as cluster -1), fact ids in fact order."""
    members: dict[int, list[str]] = {}
    for fact, label in zip(facts, labels):
        members.setdefault(int(label), []).append(fact.id)
    return [Cluster(cluster=label, fact_ids=ids) for label, ids in sorted(members.items())]


def cluster_pages(cluster: Cluster, facts: Mapping[str, Fact]) -> list[int]:
    """The distinct pages of the cluster's (known) facts, ascending."""
    return sorted({facts[i].page for i in cluster.fact_ids if i in facts})


def span_verdict(cluster: Cluster, facts: Mapping[str, Fact], min_pages: int) -> str | None:
    """None when the cluster gets a question; else why not."""
    if cluster.cluster == NOISE:
        return "noise"
    if not cluster.keep:
        return "removed in review"
    pages = cluster_pages(cluster, facts)
    if len(pages) < min_pages:
        return f"facts on {len(pages)} page(s) < {min_pages}"
    return None
