"""``benchmarks/scale.py`` end to end on a tiny corpus: the one-page shared document
repeated as re-titled copies until 3 pages, ingested and built, the table printed from
real measurements, the phases recorded in ``state.json``, and a rerun that skips what
finished and only builds what is new.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docgraph import Workspace

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "scale.py"
ONE_PAGE = "acciona_sustainability_report_2020_p1.pdf"
COLUMNS = 14  # backend, phase, wall, pages/min, CPU, RSS, PSS, main, db, files, q, ls, status, load


@pytest.fixture
def tiny_data(tmp_path, shared_data) -> Path:
    """A shared-data folder with one one-page PDF and the MMLongBench-Doc questions."""
    data = tmp_path / "data"
    (data / "documents").mkdir(parents=True)
    (data / "mmlongbench_doc").mkdir()
    (data / "documents" / ONE_PAGE).symlink_to(shared_data / "documents" / ONE_PAGE)
    (data / "mmlongbench_doc" / "samples.json").symlink_to(shared_data / "mmlongbench_doc" / "samples.json")
    return data


def scale(data: Path, work: Path, *args: str) -> str:
    env = {**os.environ, "DOCGRAPH_SHARED_DATA": str(data)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--work", str(work), "--pages", "3", "--questions", "5", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def rows(out: str) -> dict[tuple[str, str], list[str]]:
    table = {}
    for line in out.splitlines():
        cols = line.split()
        if cols and cols[0] in ("sqlite", "postgres"):
            assert len(cols) == COLUMNS, line
            table[cols[0], cols[1]] = cols
    return table


def check_measured(row: list[str], queried: bool) -> None:
    wall, per_min, cpu, rss, pss, main, db = map(float, row[2:9])
    assert wall >= 0 and per_min > 0
    if wall >= 1:
        assert per_min == pytest.approx(60 * 3 / wall, rel=0.05)
    assert rss >= main > 50 and db > 0 and cpu >= 0
    assert 0 < pss <= rss, "shared pages split: the proportional sum is at most the resident one"
    q, ls, status = (cell.split("/") for cell in row[10:13])
    assert float(row[13]) >= 0
    assert len(ls) == 3 and len(status) == 3, "ls and status polled during the phase"
    assert float(ls[0]) <= float(ls[1]) <= float(ls[2])
    if queried:
        assert len(q) == 3 and 0 < float(q[0]) <= float(q[1]) <= float(q[2])


def test_sqlite_run_table_state_and_rerun(tiny_data, tmp_path):
    work = tmp_path / "work"
    out = scale(tiny_data, work, "--backends", "sqlite", "--methods", "bm25")
    assert "corpus assembled: 3 pages in 3 files" in out
    table = rows(out)
    assert set(table) == {("sqlite", "ingest"), ("sqlite", "bm25")}
    check_measured(table["sqlite", "ingest"], queried=False)
    slow = re.search(
        r"^calls over 200 ms: sqlite ingest ls (\d+)/(\d+), status (\d+)/(\d+); "
        r"sqlite bm25 ls \d+/\d+, status \d+/\d+$",
        out,
        re.M,
    )
    assert slow and int(slow[2]) >= 1 and int(slow[1]) <= int(slow[2]), out
    check_measured(table["sqlite", "bm25"], queried=True)

    state = json.loads((work / "state.json").read_text())
    assert state["corpus"]["files"] == [
        "documents__" + ONE_PAGE,
        f"documents__{Path(ONE_PAGE).stem}-copy2.pdf",
        f"documents__{Path(ONE_PAGE).stem}-copy3.pdf",
    ]
    runs = state["runs"]["sqlite"]
    assert set(runs) == {"ingest", "build bm25", "query bm25"}
    assert runs["ingest"]["pss_top"] and all(entry.rsplit(" ", 1)[1].isdigit() for entry in runs["ingest"]["pss_top"])
    assert runs["query bm25"]["questions"] == 5 and len(runs["query bm25"]["q_ms"]) == 3
    with Workspace(work / "sqlite") as ws:
        docs = ws.documents()
        assert len(docs) == 3 and sum(d.page_count for d in docs) == 3, "copies are distinct documents"
        assert len({d.id for d in docs}) == 3

    again = scale(tiny_data, work, "--backends", "sqlite", "--methods", "bm25,dense")
    assert "corpus assembled before" in again
    for phase in ("ingest", "build bm25"):
        assert f"sqlite: {phase} finished before, skipped" in again
    assert "sqlite: build dense done" in again and "sqlite: build bm25 done" not in again
    rerun = rows(again)
    assert rerun["sqlite", "bm25"] == table["sqlite", "bm25"], "finished rows reprinted from state.json"
    assert rerun["sqlite", "ingest"] == table["sqlite", "ingest"]
    check_measured(rerun["sqlite", "dense"], queried=True)
    state = json.loads((work / "state.json").read_text())
    assert state["runs"]["sqlite"]["build bm25"] == runs["build bm25"]
    assert set(state["runs"]["sqlite"]) == {"ingest", "build bm25", "query bm25", "build dense", "query dense"}

    assert "every phase finished before" in scale(tiny_data, work, "--backends", "sqlite", "--methods", "bm25")


@pytest.mark.slow
def test_postgres_with_ray(tiny_data, tmp_path):
    pytest.importorskip("ray")
    pytest.importorskip("pgserver")
    pytest.importorskip("psycopg")
    work = tmp_path / "work"
    out = scale(tiny_data, work, "--backends", "postgres", "--methods", "bm25", "--ray-cpus", "2")
    table = rows(out)
    assert set(table) == {("postgres", "ingest"), ("postgres", "bm25")}
    check_measured(table["postgres", "ingest"], queried=False)
    check_measured(table["postgres", "bm25"], queried=True)
    runs = json.loads((work / "state.json").read_text())["runs"]["postgres"]
    assert runs["build bm25"]["db_mb"] > 0, "pg_total_relation_size of the schema's tables"
    assert (work / "pgdata").is_dir()
    again = scale(tiny_data, work, "--backends", "postgres", "--methods", "bm25")
    assert "postgres: every phase finished before, skipped" in again
    assert rows(again) == table


def test_the_poller_runs_at_the_niceness_asked_for(tmp_path, monkeypatch):
    """``--poller-nice``: the ls/status poller sets its own niceness (raising it needs no
    privilege); without it the poller keeps the benchmark's."""
    import importlib

    psutil = pytest.importorskip("psutil")
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # the poller process imports it by name too
    module = importlib.import_module("scale")
    with Workspace(tmp_path / "ws"):
        pass
    own = os.getpriority(os.PRIO_PROCESS, 0)
    for asked, expected in ((min(own + 7, 19), min(own + 7, 19)), (None, own)):
        poller = module.Poller(tmp_path / "ws", {}, asked)
        try:
            assert psutil.Process(poller.process.pid).nice() == expected
            window = poller.window(lambda: time.sleep(0.6))
            assert set(window) == {"ls_ms", "status_ms", "ls_slow", "status_slow"}
            assert window["status_slow"][1] >= 1 and 0 <= window["status_slow"][0] <= window["status_slow"][1]
        finally:
            poller.close()
