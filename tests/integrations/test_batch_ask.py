"""``docgraph ask --questions FILE --out OUT``: one line per question, written as it goes,
and a rerun after a kill finishes the file without asking a finished question again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from docgraph.cli import main
from docgraph.cli.batch import finished_ids, read_questions
from docgraph.errors import InputError

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "schemas" / "batch-line.schema.json").read_text(encoding="utf-8")
)
TOPICS = [
    "the license",
    "OpenStax",
    "Rice University",
    "the Mongol Empire",
    "the Black Death",
    "Song China",
    "the Ottomans",
    "Ming China",
    "the steppe peoples",
    "Chinggis Khan",
    "the senior contributing authors",
    "the review process",
    "errata",
    "the appendix of maps",
    "climate change",
    "Christianity and Islam",
    "the Mamluks",
    "gunpowder",
    "famine and migration",
    "the glossary",
]


def questions_file(folder: Path) -> Path:
    path = folder / "questions.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"q{i:02d}", "question": f"What does the book say about {topic}?"}) + "\n"
            for i, topic in enumerate(TOPICS)
        ),
        encoding="utf-8",
    )
    return path


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("DOCGRAPH_")}


def batch(ws: Path, questions: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "docgraph", "ask", "--questions", str(questions), "--out", str(out), "-w", str(ws)],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def comparable(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["result"].pop("timings")
    return rows


def test_killed_and_rerun_gives_every_answer_once(example_ws, tmp_path):
    questions = questions_file(tmp_path)
    whole = tmp_path / "whole.jsonl"
    assert batch(example_ws, questions, whole).wait(timeout=600) == 0
    resumed = tmp_path / "resumed.jsonl"
    run = batch(example_ws, questions, resumed)
    deadline = time.monotonic() + 300
    while run.poll() is None and time.monotonic() < deadline:
        if resumed.exists() and resumed.read_text(encoding="utf-8").count("\n") >= 5:
            break
        time.sleep(0.02)
    assert run.poll() is None, "the run finished before it could be interrupted"
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    cut = resumed.read_text(encoding="utf-8").count("\n")
    assert 5 <= cut < 20
    rerun = batch(example_ws, questions, resumed)
    assert rerun.wait(timeout=600) == 0, rerun.stderr.read()
    assert f"already in {resumed.name}" in rerun.stderr.read()
    lines = resumed.read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(lines) == 20 and sorted(ids) == sorted(set(ids))
    for line in lines:
        jsonschema.validate(json.loads(line), SCHEMA)
    assert comparable(resumed) == comparable(whole)


def test_a_torn_last_line_and_failed_questions_are_asked_again(example_ws, tmp_path, monkeypatch, capsys):
    for name in [n for n in os.environ if n.startswith("DOCGRAPH_")]:
        monkeypatch.delenv(name)
    questions = tmp_path / "questions.txt"
    questions.write_text("# two questions\nWho wrote the book?\n\nUnder what license is it published?\n")
    out = tmp_path / "out.jsonl"
    assert main(["ask", "--questions", str(questions), "--out", str(out), "-m", "hvm", "-w", str(example_ws)]) == 1
    assert "not built yet" in capsys.readouterr().err and not out.exists(), "an unbuilt method writes nothing"
    jsonl = tmp_path / "questions.jsonl"
    jsonl.write_text(
        json.dumps({"id": "a", "question": "Who wrote the book?", "mode": "nosuch"})
        + "\n"
        + json.dumps({"id": "b", "question": "Under what license is it published?"})
        + "\n"
    )
    assert main(["ask", "--questions", str(jsonl), "--out", str(out), "-w", str(example_ws)]) == 1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["id"] == "a" and "nosuch" in rows[0]["error"] and rows[1]["result"]["citations"]
    with out.open("a") as handle:
        handle.write('{"id": "c", "question": "torn')  # what a kill during a write leaves
    assert finished_ids(out) == {"b"}
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["b"]
    jsonl.write_text(
        json.dumps({"id": "a", "question": "Who wrote the book?"})
        + "\n"
        + json.dumps({"id": "b", "question": "Under what license is it published?"})
        + "\n"
    )
    capsys.readouterr()
    assert main(["ask", "--questions", str(jsonl), "--out", str(out), "-w", str(example_ws)]) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["b", "a"]
    assert "1 answered, 0 failed" in capsys.readouterr().err
    assert [q.id for q in read_questions(questions)] == ["2", "4"], "txt ids are line numbers"


def test_bad_question_files_name_the_line(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question": "fine"}\nnot json\n')
    with pytest.raises(InputError, match=r"q.jsonl, line 2: not JSON"):
        read_questions(bad)
    bad.write_text('{"id": 1, "question": "a"}\n{"id": 1, "question": "b"}\n')
    with pytest.raises(InputError, match="the id '1' is used twice"):
        read_questions(bad)
    bad.write_text('{"id": 1}\n')
    with pytest.raises(InputError, match='line 1: needs a "question" string'):
        read_questions(bad)
