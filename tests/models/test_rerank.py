"""BM25, the offline fusion reranker and the rerank endpoint."""

from __future__ import annotations

import numpy as np
import pytest

from docgraph.errors import ModelError
from docgraph.models.bm25 import BM25, bm25_scores
from docgraph.models.rerank import EndpointReranker, FusionReranker, scores_from_response
from docgraph.scoring import minmax
from docgraph.testing.fixtures import make_hub, stub_settings


def test_bm25_prefers_rare_matching_terms_and_shorter_documents():
    docs = [
        "the mongol empire expanded across the steppe",
        "the empire of the ming dynasty",
        "chinggis khan united the mongol tribes of the steppe " + "and many other words " * 20,
        "a recipe for bread",
    ]
    index = BM25(docs)
    scores = index.scores("mongol steppe")
    assert scores[3] == 0 and scores[1] == 0
    assert scores[0] > 0 and scores[2] > 0
    assert scores[0] > scores[2]  # same terms, much shorter document (length normalisation)
    assert index.top_k("mongol steppe", 10) == [(0, scores[0]), (2, scores[2])]
    assert BM25(docs).scores("ming")[1] > BM25(docs).scores("empire")[1]  # rarer term weighs more
    assert np.allclose(bm25_scores("bread", docs), BM25(docs).scores(["bread"]))
    assert BM25([]).scores("x").shape == (0,)


def test_minmax_edge_cases():
    assert minmax(np.array([2.0, 4.0])).tolist() == [0.0, 1.0]
    assert minmax(np.array([3.0, 3.0])).tolist() == [1.0, 1.0]
    assert minmax(np.array([0.0, 0.0])).tolist() == [0.0, 0.0]


def test_fusion_reranker_on_real_paragraphs(paragraph, e5):
    docs = [
        paragraph("rigorous review process"),
        paragraph("Julie C. Tatlock"),
        paragraph("Creative Commons Attribution"),
    ]
    reranker = FusionReranker(e5, bm25_weight=0.3)
    scores = reranker.rerank("Who chairs the history department at Mount Mary University?", docs)
    assert len(scores) == 3 and int(np.argmax(scores)) == 1
    assert reranker.rerank("q", []) == []
    bm25_only = FusionReranker(e5, bm25_weight=1.0)
    assert bm25_only.rerank("errata suggestions", docs)[0] == pytest.approx(1.0)


def test_fusion_reranker_takes_stored_vectors_and_embeds_only_the_rest(paragraph, e5):
    docs = [
        paragraph("rigorous review process"),
        paragraph("Julie C. Tatlock"),
        paragraph("Creative Commons Attribution"),
    ]
    question = "Who chairs the history department at Mount Mary University?"
    reranker = FusionReranker(e5, bm25_weight=0.3)
    stored = e5.embed_passages(docs)
    calls = []

    class Counting:
        model, dim = e5.model, e5.dim

        def embed_passages(self, texts):
            calls.append(list(texts))
            return e5.embed_passages(texts)

    counted = FusionReranker(Counting(), bm25_weight=0.3)
    qvec = e5.embed_queries([question])[0]
    with_vectors = counted.rerank_with_vectors(question, qvec, docs, [stored[0], None, stored[2]])
    assert calls == [[docs[1]]], "only the document without a stored vector is embedded"
    assert with_vectors == pytest.approx(reranker.rerank(question, docs), abs=1e-5)


def test_rerank_endpoint_maps_scores_back_to_input_order(openai_stub, tmp_path):
    hub = make_hub(stub_settings(openai_stub, rerank=True), tmp_path / "ws")
    reranker = hub.reranker
    assert isinstance(reranker, EndpointReranker) and reranker.model == "stub-rerank"
    reranker.policy.backoff_base_s = 0.01
    openai_stub.fault("500", times=1, path="/rerank")
    docs = ["bread and butter", "the mongol empire", "mongol empire steppe history"]
    scores = reranker.rerank("mongol empire history", docs)
    assert scores == pytest.approx([0.0, 2 / 3, 1.0])
    body = openai_stub.seen("/rerank")[-1].body
    assert body == {"model": "stub-rerank", "query": "mongol empire history", "documents": docs}
    assert openai_stub.count("/rerank") == 2


def test_rerank_reply_shapes():
    assert scores_from_response([{"index": 1, "score": 0.5}, {"index": 0, "score": 0.1}], 2, "e") == [0.1, 0.5]
    assert scores_from_response({"results": [{"index": 0, "relevance_score": 2}]}, 2, "e") == [2.0, float("-inf")]
    with pytest.raises(ModelError):
        scores_from_response({"results": [{"index": 5, "relevance_score": 1}]}, 2, "e")


def test_one_shot_bm25_gives_the_index_scores_exactly(shared_data):
    """The reranker's one-shot ``bm25_scores`` skips indexing terms the query lacks; its scores
    must stay those of a full ``BM25`` index, bit for bit (repeated query terms, empty texts,
    texts without any query term included)."""
    import random

    import numpy as np
    import pymupdf

    from docgraph.models.bm25 import BM25, bm25_scores

    with pymupdf.open(shared_data / "documents" / "grammar_matters_textbook.pdf") as doc:
        words = " ".join(page.get_text() for page in doc).split()
    texts = [" ".join(words[i : i + 80]) for i in range(0, len(words), 80)]
    rng = random.Random(7)
    queries = ["What is a verb phrase?", "noun noun clause", "the", "", "subject-verb agreement in 3.5 cases"]
    for query in queries:
        docs = rng.sample(texts, 60) + ["", "noun"]
        expected = BM25(docs).scores(query)
        assert np.array_equal(bm25_scores(query, docs), expected)
    assert bm25_scores("verb", texts[:40]).max() > 0
