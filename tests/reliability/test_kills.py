"""SIGKILL ``docgraph add``, ``docgraph build`` (offline and scripted-model) and ``docgraph eval``
part-way (seeded points of progress: a random number of the rows the work writes, or of its
duration), rerun to completion: the workspace equals an uninterrupted run's (records,
vectors, pages, files; timestamps aside; for eval its records and corpus workspaces), with
nothing duplicated or orphaned (``docgraph check``), and the work reported complete.

A small subset of ``benchmarks/faults.py`` (which kills at ≥ 20 random points per case)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest_paths import OPENSTAX

from docgraph.testing.faults import add_complete, build_complete, eval_check, eval_dump, kill_case
from docgraph.testing.model_faults import point_at_stub
from docgraph.testing.openai_stub import OpenAIStub
from docgraph.testing.scripted_model import scripted_reply

pytestmark = pytest.mark.slow


def assert_survived(result) -> None:
    assert result.kills >= 1, "no kill landed mid-work"
    assert result.failures == [], result.failures
    assert (
        result.survived,
        result.lost,
        result.duplicated,
        result.changed,
        result.check_problems,
        result.incomplete,
    ) == (result.trials, 0, 0, 0, 0, 0)


def test_killed_add_resumes_to_the_uninterrupted_result(_openstax_template, tmp_path):
    result = kill_case(
        "add",
        tmp_path / "none",
        ["add", str(OPENSTAX)],
        tmp_path / "work",
        trials=1,
        kills_per_trial=2,
        seed=15,
        complete=add_complete,
        reference=_openstax_template,
        by="rows",
    )
    assert_survived(result)


def test_killed_dense_build_resumes_to_the_uninterrupted_result(_openstax_template, _dense_template, tmp_path):
    result = kill_case(
        "dense",
        _openstax_template,
        ["build", "--method", "dense"],
        tmp_path / "work",
        trials=1,
        kills_per_trial=1,
        seed=15,
        complete=build_complete("dense"),
        reference=_dense_template,
        by="rows",
    )
    assert_survived(result)


@pytest.mark.parametrize("method", ["hvm", "kg4vd"])
def test_killed_graph_build_resumes_to_the_uninterrupted_result(method, _openstax_template, tmp_path):
    result = kill_case(
        method,
        _openstax_template,
        ["build", "--method", method],
        tmp_path / "work",
        trials=1,
        kills_per_trial=1,
        seed=15,
        complete=build_complete(method),
        by="rows",
    )
    assert_survived(result)


def test_killed_scripted_model_build_resumes_to_the_uninterrupted_result(_openstax_template, tmp_path):
    """The build's every chat role on a loopback stub serving the scripted model (docgraph.toml)."""
    with OpenAIStub(default_reply=scripted_reply) as stub:
        base = point_at_stub(Path(shutil.copytree(_openstax_template, tmp_path / "base")), stub)
        result = kill_case(
            "hvm-scripted",
            base,
            ["build", "--method", "hvm"],
            tmp_path / "work",
            trials=1,
            kills_per_trial=2,
            seed=15,
            complete=build_complete("hvm"),
            by="rows",
        )
        assert stub.count("/chat/completions") > 50  # the model built it, not the offline strategies
    assert_survived(result)


def test_killed_eval_resumes_to_the_uninterrupted_records_and_corpus(tmp_path, shared_data):
    args = [
        "eval",
        "kg4vd_test",
        str(shared_data / "kg4vd_test"),
        "--methods",
        "dense,bm25",
        "--limit",
        "2",
        "--out",
        "{ws}/results",
        "--workspace-root",
        "{ws}/corpora",
    ]
    # kills by time: on a busy machine the run can end before a kill point, so trials go on until one lands
    result = kill_case(
        "eval",
        tmp_path / "none",
        args,
        tmp_path / "work",
        trials=1,
        kills_per_trial=2,
        seed=15,
        dump=eval_dump,
        check=eval_check,
        min_kills=1,
    )
    assert_survived(result)
    reference = eval_dump(tmp_path / "work" / "reference")
    assert len(reference["eval.records"]) == 2 + 2 * 2  # a build record per method, 2 questions each
    assert any(table.endswith("/vectors") and rows for table, rows in reference.items())


def test_the_eval_dump_sees_a_question_recorded_twice(tmp_path):
    import json

    results = tmp_path / "results"
    results.mkdir()
    record = {
        "kind": "question",
        "benchmark": "b",
        "setting": "s",
        "corpus": "c",
        "method": "dense",
        "qid": "q1",
        "run": "answer",
        "answer_model": None,
        "answer": "x",
        "seconds": 1.0,
        "error": None,
    }
    (results / "b-records.jsonl").write_text(
        "\n".join([json.dumps(record), json.dumps({**record, "seconds": 2.0}), '{"kind": "question", "cut sh']) + "\n"
    )
    dump = eval_dump(tmp_path)
    assert len(dump["eval.records"]) == 1 and list(dump["eval.duplicates"].values()) == [1]
    assert eval_check(tmp_path) == [f"no corpus workspace under {tmp_path / 'corpora'}"]


def test_the_comparison_sees_lost_duplicated_and_changed_rows(_dense_template, tmp_path):
    import sqlite3

    from docgraph.testing.faults import canonical_dump, compare_dumps

    root = Path(shutil.copytree(_dense_template, tmp_path / "ws"))
    reference = canonical_dump(_dense_template)
    with sqlite3.connect(root / "docgraph.sqlite") as db:
        db.execute("DELETE FROM records WHERE rowid = (SELECT MIN(rowid) FROM records WHERE namespace = 'dense.chunk')")
        db.execute(
            "INSERT INTO records SELECT namespace, key || '-again', doc_id, value FROM records "
            "WHERE rowid = (SELECT MAX(rowid) FROM records)"
        )
        db.execute("UPDATE vectors SET vec = zeroblob(length(vec)) WHERE rowid = (SELECT MIN(rowid) FROM vectors)")
        db.execute("UPDATE documents SET added_at = '2000-01-01'")  # timestamps are not content
    diff = compare_dumps(reference, canonical_dump(root))
    assert (diff.lost, diff.extra, diff.changed) == ({"records": 1}, {"records": 1}, {"vectors": 1})


def test_resuming_an_add_removes_the_temporary_file_of_a_page_killed_mid_write(openstax_ws):
    """Found by benchmarks/faults.py: a kill during ``save_image`` left ``.p0004.jpg.<pid>.tmp``
    behind, which the resumed add never removed (``docgraph check`` called it dangling)."""
    import sqlite3

    from conftest_paths import OPENSTAX

    from docgraph import Workspace
    from docgraph.store.integrity import check_workspace

    with sqlite3.connect(openstax_ws / "docgraph.sqlite") as db:  # as a kill during page 4 leaves it
        db.execute("UPDATE documents SET status = 'ingesting'")
        db.execute("DELETE FROM pages WHERE number = 4")
    pages = openstax_ws / "pages" / "040fed959f81"
    (pages / "p0004.jpg").rename(pages / ".p0004.jpg.27128.tmp")
    with Workspace(openstax_ws) as ws:
        ws.add([OPENSTAX])
    assert not (pages / ".p0004.jpg.27128.tmp").exists() and (pages / "p0004.jpg").is_file()
    assert check_workspace(openstax_ws).findings == []
