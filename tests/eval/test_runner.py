"""``docgraph eval`` end to end, offline, on a small MMLongBench subset: the first pages of
two real documents with the questions whose evidence lies on them. Embeddings come from
the loopback stub (hashed bag of words), so the test is about the runner, not the
embedder; chat roles stay off (retrieval-only) unless a test scripts them."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from runner_helpers import KEEP_PAGES, METHODS, options

from docgraph.eval.corpora import corpus_settings
from docgraph.eval.corpus import CorpusSpec
from docgraph.eval.loaders import load_hotpotqa
from docgraph.eval.loaders.base import Benchmark
from docgraph.eval.metrics import recall_at_k
from docgraph.eval.records import read_records
from docgraph.eval.report import markdown, summarize
from docgraph.eval.runner import run_eval
from docgraph.testing.fixtures import stub_settings


def test_table_shape(retrieval_run, mini_mmlongbench):
    n_questions = len(json.loads((mini_mmlongbench / "samples.json").read_text()))
    assert n_questions == 7
    lines = retrieval_run.markdown.splitlines()
    assert lines[0] == "## mmlongbench (per-document, page level)"
    header = [c.strip() for c in lines[2].strip("|").split("|")]
    assert header[:6] == ["method", "n", "recall@1", "recall@5", "recall@10", "mrr"]
    assert "build s" in header and "s/question" in header and "answers" not in header
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[4 : 4 + len(METHODS)]]
    assert [r[0] for r in rows] == METHODS and all(r[1] == str(n_questions) for r in rows)
    assert all(len(r) == len(header) for r in rows)
    assert "### recall@5 by evidence_source" in retrieval_run.markdown
    summary = json.loads(retrieval_run.json_path.read_text())
    assert list(summary["methods"]) == METHODS and summary["run"] == "retrieval"
    for row in summary["methods"].values():
        assert 0.0 <= row["recall@1"] <= row["recall@5"] <= row["recall@10"] <= 1.0
        assert row["with_gold_evidence"] == 5 and row["errors"] == 0
        assert row["build_seconds"] > 0 and row["query_calls"] == 0
    assert set(summary["categories"]) >= {"doc_type", "evidence_source"}
    assert retrieval_run.questions_run == n_questions * len(METHODS)


def test_scores_are_computed_from_the_records(retrieval_run, tmp_path):
    summary = json.loads(retrieval_run.json_path.read_text())
    records = read_records(retrieval_run.records_path)
    questions = [r for r in records if r["kind"] == "question"]
    assert len(questions) == 21 and {r["method"] for r in questions} == set(METHODS)
    assert len([r for r in records if r["kind"] == "build"]) == 2 * len(METHODS)
    again = summarize(records, METHODS)
    for method in METHODS:
        for metric in ("recall@1", "recall@5", "recall@10", "mrr"):
            assert again["methods"][method][metric] == pytest.approx(summary["methods"][method][metric])
    bm25 = [r for r in questions if r["method"] == "bm25" and r["gold"]]
    by_hand = sum(recall_at_k(r["retrieved"], r["gold"], 1) for r in bm25) / len(bm25)
    assert summary["methods"]["bm25"]["recall@1"] == pytest.approx(by_hand)

    # change one record: the score moves by exactly that question's share
    target = min(bm25, key=lambda r: recall_at_k(r["retrieved"], r["gold"], 1))
    before = recall_at_k(target["retrieved"], target["gold"], 1)
    edited = tmp_path / "edited.jsonl"
    with open(edited, "w") as fh:
        for r in records:
            if r is target:
                r = dict(r, retrieved=[target["gold"][0]] + [k for k in r["retrieved"] if k != target["gold"][0]])
            fh.write(json.dumps(r) + "\n")
    changed = summarize(read_records(edited), METHODS)["methods"]["bm25"]
    after = 1.0 / len(target["gold"])
    assert changed["recall@1"] == pytest.approx(by_hand + (after - before) / len(bm25))
    assert after > before and changed["mrr"] > summary["methods"]["bm25"]["mrr"]
    assert markdown(summarize(read_records(edited), METHODS)) != markdown(summarize(records, METHODS))


def test_report_only_recomputes_the_table_without_running(retrieval_run, mini_mmlongbench, corpora, stub):
    requests_before = len(stub.requests)
    out = retrieval_run.records_path.parent
    report = run_eval(options(mini_mmlongbench, out, corpora, stub, retrieval_only=True, report_only=True))
    assert report.questions_run == 0 and len(stub.requests) == requests_before  # no query embedded
    assert report.summary == retrieval_run.summary and report.markdown == retrieval_run.markdown
    # methods without records get no invented rows
    more = run_eval(
        options(
            mini_mmlongbench, out, corpora, stub, methods=METHODS + ["hipporag"], retrieval_only=True, report_only=True
        )
    )
    assert more.summary["methods"]["hipporag"]["questions"] == 0
    assert more.summary["methods"]["bm25"] == retrieval_run.summary["methods"]["bm25"]


def test_resume_skips_finished_questions(retrieval_run, mini_mmlongbench, corpora, stub, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(retrieval_run.records_path.parent, out)
    records_file = out / retrieval_run.records_path.name
    again = run_eval(options(mini_mmlongbench, out, corpora, stub, retrieval_only=True))
    assert again.questions_run == 0 and again.questions_skipped == 21
    assert again.markdown == retrieval_run.markdown

    lines = records_file.read_text().splitlines()
    kept = [line for line in lines if '"kind": "question"' in line][:-2]
    others = [line for line in lines if '"kind": "question"' not in line]
    records_file.write_text("\n".join(others + kept) + '\n{"kind": "question", "method": "bm2')  # cut short
    resumed = run_eval(options(mini_mmlongbench, out, corpora, stub, retrieval_only=True))
    assert resumed.questions_run == 2 and resumed.questions_skipped == 19
    scores = ("recall@1", "recall@5", "recall@10", "mrr", "questions")
    for method, row in resumed.summary["methods"].items():
        assert {k: row[k] for k in scores} == {k: retrieval_run.summary["methods"][method][k] for k in scores}
    assert len([r for r in read_records(records_file) if r["kind"] == "question"]) == 21
    # the indexes were built: the resumed run keeps the build records it found, one per corpus and method
    build_lines = [line for line in records_file.read_text().splitlines() if '"kind": "build"' in line]
    assert len(build_lines) == len(others) == len(read_records(records_file)) - 21


def test_packed_setting(retrieval_run, mini_mmlongbench, corpora, stub, tmp_path):
    embedded_before = sum(len(r.texts) for r in stub.seen("/embeddings"))
    result = run_eval(
        options(mini_mmlongbench, tmp_path, corpora, stub, methods=["bm25", "pages"], packed=True, retrieval_only=True)
    )
    # the packed corpus holds the same pages as the per-document ones, and a chunk's text and
    # its title are embedded apart (chunk_context = "separate"): what is new to the eval's
    # shared cache is the packed corpus's title (and a chunk whose text the packing changed)
    packed_texts = [t for r in stub.seen("/embeddings") for t in r.texts][embedded_before:]
    assert (corpora / "embeddings.sqlite").exists()
    assert "packed corpus of 2 documents" in packed_texts
    assert len(packed_texts) <= 3, packed_texts
    packed_db = next(corpora.glob("mmlongbench/packed-2docs-*/docgraph.sqlite"))
    with sqlite3.connect(packed_db) as db:  # the rows were served into the packed workspace itself
        copied = db.execute("SELECT COUNT(*) FROM cache WHERE namespace LIKE 'embed:%'").fetchone()[0]
    assert copied >= 5  # at least the 5 packed pages
    assert result.table_path.name == "mmlongbench-packed-retrieval.md"
    assert result.summary["setting"] == "packed"
    records = [r for r in read_records(result.records_path) if r["kind"] == "question"]
    assert all(g.startswith("packed|") for r in records for g in r["gold"])
    # page 1 of the second document is packed page 4 (the first has 3 pages, sorted by name)
    gold_pages = {int(g.split("|")[1]) for r in records for g in r["gold"]}
    assert gold_pages <= {1, 2, 3, 4, 5} and 4 in gold_pages
    assert list(corpora.glob("mmlongbench/packed-2docs-*/corpus/packed.pdf"))


def test_passage_benchmark_reports_passage_recall(shared_data, corpora, stub, tmp_path):
    full = load_hotpotqa(shared_data / "multihop")
    items = full.items[2:4]
    by_id = full.corpus.by_id()
    ids = [i for item in items for i in item.gold_passages + item.extra["context_titles"][:2] if i in by_id]
    corpus = full.corpus.model_copy(update={"passages": [by_id[i] for i in dict.fromkeys(ids)]})
    bench = Benchmark(name="hotpotqa", items=items, corpus=corpus)
    result = run_eval(
        options(
            None,
            tmp_path,
            corpora,
            stub,
            benchmark="hotpotqa",
            methods=["bm25", "hipporag"],
            loaded=bench,
            retrieval_only=True,
        )
    )
    assert result.summary["level"] == "passage" and result.summary["setting"] == "passages"
    assert result.markdown.splitlines()[2].startswith("| method | n | recall@2 | recall@5 | mrr |")
    for row in result.summary["methods"].values():
        assert row["questions"] == 2 and row["recall@5"] == 1.0, "every passage fits in the top 5"
    records = [r for r in read_records(result.records_path) if r["kind"] == "question"]
    assert all(set(r["retrieved"]) <= set(corpus.ids()) for r in records)


def test_an_eval_on_postgres_keeps_each_corpus_in_its_own_schema_and_ranks_alike(
    retrieval_run, mini_mmlongbench, stub, postgres_url, tmp_path
):
    """Issue 14: the eval's per-document corpora on one PostgreSQL server, one schema each,
    rank every question exactly as the SQLite corpora of ``retrieval_run`` did."""
    import psycopg

    from docgraph.testing.postgres import new_pg_schema

    schema = new_pg_schema()
    settings = stub_settings(
        stub,
        roles=(),
        embeddings=True,
        overrides={"store": {"backend": "postgres", "url": postgres_url, "pg_schema": schema}},
    )
    result = run_eval(
        options(mini_mmlongbench, tmp_path / "out", tmp_path / "corpora", stub, settings=settings, retrieval_only=True)
    )
    with psycopg.connect(postgres_url) as conn:
        schemas = [
            r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (schema + "\\_%",))
        ]
    assert len(schemas) == len(KEEP_PAGES), schemas
    assert not any((tmp_path / "corpora").rglob("docgraph.sqlite")), "the rows live in the server"

    def ranked(path: Path) -> dict[tuple, list[str]]:
        return {
            (r["corpus"], r["method"], r["qid"]): r["retrieved"] for r in read_records(path) if r["kind"] == "question"
        }

    on_postgres, on_sqlite = ranked(result.records_path), ranked(retrieval_run.records_path)
    assert on_postgres and on_postgres == on_sqlite
    passages = [
        CorpusSpec(
            name="passages", setting="passages", folder=tmp_path / bench / "passages-0123456789", files=[], items=[]
        )
        for bench in ("hotpotqa", "musique")
    ]
    assert len({corpus_settings(settings, spec).store.pg_schema for spec in passages}) == 2, (
        "two benchmarks' passage corpora share a name, not a schema"
    )
    for method, row in retrieval_run.summary["methods"].items():
        scores = {k: v for k, v in row.items() if k.startswith("recall@") or k == "mrr"}
        assert scores and {k: result.summary["methods"][method][k] for k in scores} == scores


def test_library_setting_asks_every_question_over_every_document(
    retrieval_run, mini_mmlongbench, corpora, stub, tmp_path
):
    result = run_eval(
        options(
            mini_mmlongbench, tmp_path, corpora, stub, methods=["bm25", "dense"], setting="library", retrieval_only=True
        )
    )
    assert result.table_path.name == "mmlongbench-library-retrieval.md"
    assert result.summary["setting"] == "library"
    folders = list(corpora.glob("mmlongbench/library-2docs-*"))
    assert len(folders) == 1
    from docgraph import Workspace

    with Workspace(folders[0]) as ws:
        assert sorted(Path(d.path).name for d in ws.documents()) == sorted(KEEP_PAGES)
    records = [r for r in read_records(result.records_path) if r["kind"] == "question"]
    assert len(records) == 2 * 7 and {r["corpus"] for r in records} == {"library"}
    for r in records:  # evidence keyed by (document, page); the question's own document is its gold document
        assert len(r["gold_documents"]) == 1 and all(g.startswith(r["gold_documents"][0] + "|") for g in r["gold"])
        assert all(key.rsplit("|", 1)[0] in KEEP_PAGES for key in r["retrieved"])
    # a question's list holds pages of both documents: each is asked over the whole library
    assert any({key.rsplit("|", 1)[0] for key in r["retrieved"]} == set(KEEP_PAGES) for r in records)
    row = result.summary["methods"]["bm25"]
    top_docs = [
        bool(r["retrieved"]) and r["retrieved"][0].rsplit("|", 1)[0] in r["gold_documents"]
        for r in records
        if r["method"] == "bm25"
    ]
    assert row["doc_recall@1"] == pytest.approx(sum(top_docs) / len(top_docs))
    assert row["doc_recall@5"] == pytest.approx(
        sum(
            any(k.rsplit("|", 1)[0] in r["gold_documents"] for k in r["retrieved"][:5])
            for r in records
            if r["method"] == "bm25"
        )
        / 7
    )
    assert result.summary["methods"]["dense"]["doc_recall@5"] == 1.0  # dense ranks all 5 pages: both documents
    assert "doc R@1" in result.markdown and "doc R@5" in result.markdown
    # per document, the table has no document recall (every page is the question's document's)
    assert "doc_recall@1" not in retrieval_run.summary["methods"]["bm25"]


def test_settings_are_checked_and_packed_is_a_setting(mini_mmlongbench, corpora, stub, tmp_path):
    from docgraph.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown setting 'shelf'"):
        options(mini_mmlongbench, tmp_path, corpora, stub, setting="shelf")
    with pytest.raises(ConfigError, match="exclude each other"):
        options(mini_mmlongbench, tmp_path, corpora, stub, setting="library", packed=True)
    assert options(mini_mmlongbench, tmp_path, corpora, stub, packed=True).setting == "packed"
    assert options(mini_mmlongbench, tmp_path, corpora, stub, setting="packed").packed


def test_a_build_killed_before_its_cost_was_kept_reports_the_pages_of_its_index(
    retrieval_run, mini_mmlongbench, corpora, stub, tmp_path
):
    """The kill window between an index's last page and its cost record: the rerun finds the
    index built, and its build record and the kept cost still count the index's pages."""
    from docgraph.eval.runner import BUILD_COST_NAMESPACE
    from docgraph.store import open_store

    out, spaces = tmp_path / "out", tmp_path / "corpora"
    shutil.copytree(retrieval_run.records_path.parent, out)
    shutil.copytree(corpora, spaces)
    records_file = out / retrieval_run.records_path.name
    first = [r for r in read_records(records_file) if r["kind"] == "build" and r["method"] == "bm25"]
    built = {r["corpus"]: r["pages"] for r in first}
    assert built and all(built.values())
    kept = [line for line in records_file.read_text().splitlines() if '"kind": "build"' not in line]
    records_file.write_text("\n".join(kept) + "\n")  # the kill came before the build records
    per_document = sorted(spaces.glob("mmlongbench/doc-*"))  # this run's corpora (others' are packed, library)
    assert len(per_document) == len(built)
    for ws in per_document:  # ... and before the cost
        store = open_store(ws)
        assert store.delete_records(BUILD_COST_NAMESPACE, keys=["bm25"]) == 1
        store.close()
    run_eval(options(mini_mmlongbench, out, spaces, stub, retrieval_only=True))
    again = [r for r in read_records(records_file) if r["kind"] == "build" and r["method"] == "bm25"]
    assert {r["corpus"]: r["pages"] for r in again} == built
    assert all(r["pages_built_now"] == 0 for r in again)
    for ws in per_document:
        store = open_store(ws)
        assert store.get_record(BUILD_COST_NAMESPACE, "bm25")["pages"] in built.values()
        store.close()
