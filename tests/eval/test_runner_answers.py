"""``docgraph eval`` answering: offline extractive answers, a scripted model's answers extracted
and judged (accuracy, FineSurE, pairwise), and answers that fell back to the offline one."""

from __future__ import annotations

import pytest
from runner_helpers import options

from docgraph.eval.loaders.base import Benchmark
from docgraph.eval.records import read_records
from docgraph.eval.report import summarize
from docgraph.eval.runner import run_eval
from docgraph.testing.fixtures import stub_settings


def test_answers_offline_are_marked_extractive(retrieval_run, mini_mmlongbench, corpora, stub, tmp_path):
    result = run_eval(options(mini_mmlongbench, tmp_path, corpora, stub, methods=["bm25", "nodocs"]))
    assert "offline extractive" in result.markdown
    row = result.summary["methods"]["bm25"]
    assert row["answers"] == "offline extractive" and {"em", "f1", "acc", "recall@1"} <= set(row)
    records = [r for r in read_records(result.records_path) if r["kind"] == "question"]
    assert all(r["run"] == "answer" and r["model_used"] is False and r["answer"] for r in records)
    assert "judge_acc" not in row
    # MMLongBench-Doc's own protocol: a short answer in the question's format and its score, kept per record
    bm25 = [r for r in records if r["method"] == "bm25"]
    assert all(isinstance(r["mmlongbench_pred"], str) and 0.0 <= r["mmlongbench_score"] <= 1.0 for r in bm25)
    assert row["mmlb_acc"] == pytest.approx(sum(r["mmlongbench_score"] for r in bm25) / len(bm25))
    assert "Acc (MMLB)" in result.markdown and "F1 (MMLB)" in result.markdown
    assert "### Acc / F1 (MMLB) by question_type" in result.markdown
    by_type = result.summary["categories"]["question_type"]["bm25"]
    assert set(by_type) <= {"single-page", "cross-page", "unanswerable"} and "mmlb_f1" in by_type["single-page"]
    # the claim check, counted per record: offline answers quote their evidence, so every checked
    # sentence is supported (issue 57)
    assert all(r["claims"]["supported"] == sum(r["claims"].values()) for r in bm25 if r.get("claims"))
    assert row["claims_supported"] == 1.0 and row["claims_checked"] > 0 and "claims supported" in result.markdown


def test_answers_with_a_model_are_extracted_and_judged(mini_mmlongbench, corpora, stub, tmp_path):
    settings = stub_settings(stub, roles=("answer", "judge"), embeddings=True)
    stub.reset()
    stub.reply("The answer is 01983 873655 [1].", stage="bm25.answer")
    stub.reply({"answer": "01983 873655"}, stage="eval.extract_answer")
    stub.reply({"answer": "01983 873655"}, stage="eval.extract_answer.formatted")
    stub.reply(lambda r: {"correct": r.body["model"] == "judge-a"}, stage="eval.judge.accuracy")
    result = run_eval(
        options(
            mini_mmlongbench,
            tmp_path,
            corpora,
            stub,
            methods=["bm25"],
            limit=3,
            settings=settings,
            judges=["judge-a", "judge-b"],
        )
    )
    row = result.summary["methods"]["bm25"]
    assert row["questions"] == 3 and row["answers"] == "stub-model"
    assert row["judge_acc"] == pytest.approx(0.5), "one judge always right, one never: averaged"
    records = [r for r in read_records(result.records_path) if r["kind"] == "question"]
    assert all(r["extracted"] == "01983 873655" and r["judges"] == {"judge-a": True, "judge-b": False} for r in records)
    phone = next(r for r in records if r["gold_answer"] == "01983 873655")
    assert phone["usage"]["calls"] == 1, "the answer call is the query cost; judging is kept apart"
    assert row["em"] > 0 and row["query_calls"] == pytest.approx(1.0)
    assert phone["mmlongbench_pred"] == "01983 873655" and phone["mmlongbench_score"] == 1.0
    assert stub.count(stage="eval.extract_answer.formatted") == 3, "one formatted extraction per question"
    assert all(r["mmlongbench_score"] == (r["gold_answer"] == "01983 873655") for r in records), (
        "a phone-like gold must match exactly, so the other questions score 0"
    )


def test_cli_prints_the_table(retrieval_run, mini_mmlongbench, corpora, tmp_path, capsys, monkeypatch):
    from docgraph.cli import main

    for name in [n for n in __import__("os").environ if n.startswith("DOCGRAPH_")]:
        monkeypatch.delenv(name)
    code = main(
        [
            "--workspace",
            str(tmp_path / "ws"),
            "eval",
            "mmlongbench",
            str(mini_mmlongbench),
            "--methods",
            "bm25",
            "--retrieval-only",
            "--out",
            str(tmp_path / "out"),
            "--workspace-root",
            str(corpora),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "| method | n | recall@1 | recall@5 | recall@10 | mrr |" in printed
    assert "| bm25 | 7 |" in printed and "7 question run(s), 0 already done" in printed
    assert (tmp_path / "out" / "mmlongbench-retrieval.json").exists()


def test_long_answers_get_finesure_and_pairwise(mini_mmlongbench, corpora, stub, tmp_path):
    """DLVQA-style questions (reference summary + gold facts): FineSurE labels for each
    answer and for the reference (the oracle), and pairwise verdicts in both orders."""
    from docgraph.eval.loaders import QAItem, load_mmlongbench

    base = load_mmlongbench(mini_mmlongbench)
    doc = "379f44022bb27aa53efd5d322c7b57bf.pdf"
    facts = [{"text": "The Limes is a residential home."}, {"text": "Its telephone number is 01983 873655."}]
    item = QAItem(
        id="dl-1",
        question="Summarise what the report says about The Limes.",
        doc_ids=[doc],
        answer="The Limes is a residential home. Its number is 01983 873655.",
        gold_pages=[(doc, 1)],
        extra={"gt_facts": facts},
    )
    bench = Benchmark(name="mmlongbench", items=[item], documents=base.documents, page_counts=base.page_counts)
    settings = stub_settings(stub, roles=("answer", "judge"), embeddings=True)
    stub.reset()
    stub.reply("The Limes is a residential home [1]. It has a swimming pool [1].", stage="bm25.answer")
    stub.reply("The Limes is a care home.", stage="nodocs.answer")
    stub.reply({"answer": "The Limes"}, stage="eval.extract_answer")
    stub.reply({"correct": True}, stage="eval.judge.accuracy")

    def finesure(request):
        sentences = request.prompt.split("Answer sentences:")[1]
        if request.prompt.startswith("You check which key facts"):
            return {
                "facts": [
                    {"fact": 1, "covered": True, "sentences": [1]},
                    {"fact": 2, "covered": "01983" in sentences, "sentences": [2]},
                ]
            }
        second = "no error" if "01983" in sentences else "out-of-context error"
        return {"sentences": [{"sentence": 1, "category": "no error"}, {"sentence": 2, "category": second}]}

    stub.reply(finesure, stage="eval.judge.finesure")
    stub.reply(
        lambda r: {
            c: {"winner": "1" if "swimming" in r.prompt.split("Answer 2:")[0] else "2"}
            for c in ("comprehensiveness", "diversity", "empowerment", "overall")
        },
        stage="eval.judge.pairwise",
    )
    result = run_eval(
        options(
            None,
            tmp_path,
            corpora,
            stub,
            methods=["bm25", "nodocs"],
            loaded=bench,
            settings=settings,
            pairwise_against="nodocs",
        )
    )
    row = result.summary["methods"]["bm25"]
    # bm25: faithful 1/2, completeness 1/2, concise 1/2; the oracle scores 1 on all three
    assert row["finesure_faithfulness"] == pytest.approx(0.5) and row["finesure_completeness"] == pytest.approx(0.5)
    assert row["finesure_overall"] == pytest.approx(0.5)
    assert result.summary["pairwise"]["bm25 vs nodocs"]["overall"]["win"] == 1.0
    assert "### pairwise: bm25 vs nodocs" in result.markdown and "finesure_overall" in result.markdown
    pairs = [r for r in read_records(result.records_path) if r["kind"] == "pairwise"]
    assert len(pairs) == 1 and pairs[0]["first_order"]["overall"] == "1" and pairs[0]["second_order"]["overall"] == "2"


def test_answers_that_fell_back_are_recorded_with_their_warning(
    retrieval_run, mini_mmlongbench, corpora, stub, tmp_path
):
    """The answer endpoint down (a closed port): every answer is the offline one, each record
    keeps the warning, and the table says the answers are extractive and how many fell back."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    settings = stub_settings(
        stub,
        roles=(),
        embeddings=True,
        overrides={
            "models": {
                "answer": {
                    "base_url": f"http://127.0.0.1:{closed}/v1",
                    "model": "gone",
                    "max_retries": 0,
                    "timeout_s": 1.0,
                }
            }
        },
    )
    result = run_eval(options(mini_mmlongbench, tmp_path, corpora, stub, methods=["bm25"], settings=settings))
    records = [r for r in read_records(result.records_path) if r["kind"] == "question"]
    assert records and all(r["model_used"] is False and r["answer"] for r in records)
    assert all(r["warnings"] and "answer" in r["warnings"][0] for r in records), records[0].get("warnings")
    row = result.summary["methods"]["bm25"]
    assert row["answers"] == "offline extractive" and row["answer_fallbacks"] == len(records)


def test_a_model_run_with_some_fallbacks_names_the_model_and_counts_them():

    base = {
        "kind": "question",
        "method": "kg4vd",
        "run": "answer",
        "answer_model": "qwen",
        "gold": [],
        "retrieved": [],
        "answer": "x",
    }
    records = [
        {**base, "model_used": True},
        {**base, "model_used": True},
        {**base, "model_used": False, "warnings": ["the answer model failed: HTTP 500"]},
    ]
    row = summarize(records)["methods"]["kg4vd"]
    assert row["answers"] == "qwen (1 offline fallbacks)" and row["answer_fallbacks"] == 1
