"""Eval counts the claim check per method (issue 57): the share of checked sentences that
were supported, and a sentence dropped by ``answers.verify = drop`` is not a fallback."""

from __future__ import annotations

import pytest

from docgraph.eval.report import markdown, summarize


def record(qid: str, claims: dict[str, int] | None, warnings: list[str] | None = None) -> dict:
    out = {
        "kind": "question",
        "benchmark": "mini",
        "setting": "per-document",
        "corpus": "c",
        "method": "bm25",
        "qid": qid,
        "run": "answer",
        "answer_model": "m",
        "model_used": True,
        "answer": "a",
        "seconds": 1.0,
    }
    if claims is not None:
        out["claims"] = claims
    if warnings:
        out["warnings"] = warnings
    return out


def test_share_of_supported_sentences_per_method():
    records = [
        record("q1", {"supported": 3, "partly": 0, "unsupported": 1, "uncited": 0}),
        record(
            "q2",
            {"supported": 1, "partly": 1, "unsupported": 0, "uncited": 2},
            warnings=["the claim check removed 1 unsupported sentence(s): …"],
        ),
        record("q3", None),
    ]
    row = summarize(records, ["bm25"])["methods"]["bm25"]
    assert row["claims_supported"] == pytest.approx(4 / 8) and row["claims_checked"] == 8
    assert row["answer_fallbacks"] == 0, "a drop warning on a model answer is not an offline fallback"
    assert "claims supported" in markdown(summarize(records, ["bm25"]))
    assert "claims_supported" not in summarize([record("q3", None)], ["bm25"])["methods"]["bm25"]
