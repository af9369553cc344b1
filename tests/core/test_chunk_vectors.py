"""Chunk vectors: the joint recipe embeds what it always did; the separate recipe keys the
cache on the chunk's own text, so the same chunks under another title embed only the title."""

from __future__ import annotations

import hashlib

import numpy as np

from docgraph.config import load_settings
from docgraph.methods.retrieval.chunk_vectors import ContextualChunks
from docgraph.methods.retrieval.evidence_layer import indexed_text
from docgraph.models.embedding.embed_cache import CachedTextEmbedder
from docgraph.store.sqlite import SQLiteStore
from docgraph.types import Chunk


class HashEmbedder:
    """Deterministic 16-d vectors from a text's hash; records every text it computes."""

    model, dim = "hash-16", 16

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def _rows(self, texts):
        self.embedded.extend(texts)
        return np.stack(
            [
                np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8).astype(np.float32) - 127.5
                for t in texts
            ]
        )

    def embed_passages(self, texts):
        return self._rows(list(texts))

    def embed_queries(self, texts):
        return self._rows(list(texts))


def _chunks(title: str) -> list[Chunk]:
    return [
        Chunk(
            id=f"c{i}",
            doc_id="d",
            page=i + 1,
            component_ids=[f"p{i + 1}-c1"],
            modality="text",
            text=f"paragraph {i} about topic {i % 3}",
            section_path=[title, f"Heading {i % 2}"],
        )
        for i in range(6)
    ]


def test_joint_recipe_embeds_the_indexed_text_as_before():
    settings = load_settings(None, overrides={"models": {"embedding": {"chunk_context": "joint"}}}).models.embedding
    chunks = _chunks("Annual report")
    parts = ContextualChunks.of(chunks, settings)
    assert parts.texts() == [indexed_text(c) for c in chunks]
    assert ContextualChunks.of(chunks, settings, max_chars=12).texts() == [indexed_text(c)[:12] for c in chunks]


def test_separate_is_the_default_recipe():
    settings = load_settings(None, environ={}).models.embedding
    assert (settings.chunk_context, settings.context_weight) == ("separate", 0.5)


def test_separate_recipe_adds_the_weighted_mean_of_the_context_elements():
    chunks = _chunks("Annual report")
    parts = ContextualChunks(chunks, 0.5)
    texts = parts.texts()
    assert texts[:6] == [c.text for c in chunks]
    assert texts[6:] == ["Annual report", "Heading 0", "Heading 1"]  # each element once
    rows = HashEmbedder().embed_passages(texts)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    vectors = parts.combine(rows)
    expected = rows[1] + 0.5 * (rows[6] + rows[8]) / 2  # chunk 1: "Annual report" > "Heading 1"
    assert np.allclose(vectors[1], expected / np.linalg.norm(expected), atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    body_only = ContextualChunks(chunks, 0.0)
    assert body_only.texts() == [c.text for c in chunks]


def test_same_chunks_under_another_title_embed_only_the_new_title(tmp_path):
    inner = HashEmbedder()
    embedder = CachedTextEmbedder(inner, SQLiteStore(tmp_path))
    settings = load_settings(None, overrides={"models": {"embedding": {"chunk_context": "separate"}}}).models.embedding
    first = ContextualChunks.of(_chunks("Annual report 2023"), settings)
    first_vectors = first.combine(embedder.embed_passages(first.texts()))
    assert len(inner.embedded) == 6 + 3
    inner.embedded.clear()
    packed = ContextualChunks.of(_chunks("Packed corpus of 24 documents"), settings)
    packed_vectors = packed.combine(embedder.embed_passages(packed.texts()))
    assert inner.embedded == ["Packed corpus of 24 documents"]  # bodies and headings came from the cache
    assert not np.allclose(first_vectors, packed_vectors)  # the title still shapes the vector
    joint_settings = load_settings(None, overrides={"models": {"embedding": {"chunk_context": "joint"}}})
    joint = ContextualChunks.of(_chunks("Packed corpus of 24 documents"), joint_settings.models.embedding)
    inner.embedded.clear()
    embedder.embed_passages(joint.texts())
    assert len(inner.embedded) == 6  # the joint recipe re-embeds every chunk under a new title
