"""Tables kept on disk between processes (``methods.disk_memo``): a file is used only for the
workspace, data version, code and dependency files it was made from; anything else, or a
damaged file, is built again; the folder stays within its budget."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import pytest

from docgraph.methods import disk_memo
from docgraph.methods.disk_memo import load_or_build


class Builds:
    """A build function that counts its calls and returns a fresh value each time."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, object]:
        self.calls += 1
        return {"call": self.calls, "rows": list(range(1000))}


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tables"
    monkeypatch.setenv(disk_memo.CACHE_ENV, str(folder))
    return folder


def test_a_table_built_once_is_read_back_by_a_later_call(cache: Path):
    build = Builds()
    first = load_or_build("/ws/a", ("kg4vd", "layer"), "v1", build, min_seconds=0)
    again = load_or_build("/ws/a", ("kg4vd", "layer"), "v1", build, min_seconds=0)
    assert build.calls == 1 and again == first
    assert len(list(cache.glob("*.table"))) == 1


@pytest.mark.parametrize(
    "changed",
    [
        {"root": "/ws/b"},
        {"key": ("kg4vd", "other")},
        {"version": "v2"},
    ],
)
def test_another_workspace_table_or_data_version_is_built_again(cache: Path, changed: dict):
    build = Builds()
    call = {"root": "/ws/a", "key": ("kg4vd", "layer"), "version": "v1"} | changed
    load_or_build("/ws/a", ("kg4vd", "layer"), "v1", build, min_seconds=0)
    value = load_or_build(call["root"], call["key"], call["version"], build, min_seconds=0)
    assert build.calls == 2 and value["call"] == 2


def test_a_changed_dependency_file_or_code_makes_the_file_invalid(cache: Path, tmp_path: Path, monkeypatch):
    lexicon = tmp_path / "mine.toml"
    lexicon.write_text("[measures]\n")
    build = Builds()
    load_or_build("/ws/a", "t", "v1", build, depends_on=[lexicon], min_seconds=0)
    lexicon.write_text("[measures]\nx = 1\n")
    load_or_build("/ws/a", "t", "v1", build, depends_on=[lexicon], min_seconds=0)
    assert build.calls == 2
    monkeypatch.setattr(disk_memo, "code_fingerprint", lambda: "another docgraph")
    load_or_build("/ws/a", "t", "v1", build, depends_on=[lexicon], min_seconds=0)
    assert build.calls == 3


def test_a_damaged_file_is_built_again_and_replaced(cache: Path):
    build = Builds()
    load_or_build("/ws/a", "t", "v1", build, min_seconds=0)
    (path,) = cache.glob("*.table")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # truncated mid-pickle
    assert load_or_build("/ws/a", "t", "v1", build, min_seconds=0)["call"] == 2
    assert load_or_build("/ws/a", "t", "v1", build, min_seconds=0)["call"] == 2  # the rewritten file
    path.write_bytes(b"not a header\n" + pickle.dumps("x"))
    assert load_or_build("/ws/a", "t", "v1", build, min_seconds=0)["call"] == 3


def test_nothing_is_kept_when_turned_off_unversioned_or_quick(cache: Path, monkeypatch):
    build = Builds()
    load_or_build("/ws/a", "t", None, build, min_seconds=0)  # no data version stamp yet
    load_or_build("/ws/a", "quick", "v1", build)  # built faster than MIN_BUILD_SECONDS
    assert not list(cache.glob("*.table"))
    monkeypatch.setenv(disk_memo.CACHE_ENV, "")
    load_or_build("/ws/a", "t", "v1", build, min_seconds=0)
    load_or_build("/ws/a", "t", "v1", build, min_seconds=0)
    assert build.calls == 4 and not list(cache.glob("*.table"))


def test_the_folder_keeps_to_its_budget_dropping_the_least_recently_used(cache: Path, monkeypatch):
    build = Builds()
    for name in ("old", "used", "new"):
        load_or_build("/ws/a", name, "v1", build, min_seconds=0)
    size = next(cache.glob("*.table")).stat().st_size
    paths = {p.stat().st_mtime_ns: p for p in cache.glob("*.table")}
    assert len(paths) == 3
    past = time.time() - 100
    for age, name in enumerate(("old", "used", "new")):
        os.utime(cache / f"{disk_memo._name('/ws/a', name)}.table", (past + age, past + age))
    load_or_build("/ws/a", "used", "v1", build, min_seconds=0)  # read: now the most recent
    monkeypatch.setenv(disk_memo.BUDGET_ENV, str(2.5 * size / 2**20))
    load_or_build("/ws/a", "newest", "v1", build, min_seconds=0)
    left = {p.name for p in cache.glob("*.table")}
    assert left == {f"{disk_memo._name('/ws/a', n)}.table" for n in ("used", "newest")}


SURVEY = "2312.10997v5.pdf"  # a survey paper of MMLongBench-Doc: three real pages
QUESTION = "Which retrieval augmentation methods fine-tune the retriever?"


@pytest.fixture(scope="module")
def survey_workspace(mmlongbench_excerpt) -> Path:
    return mmlongbench_excerpt(SURVEY, (5, 6, 7))


def _ranked(root: Path, method: str) -> list[tuple[str, int, float]]:
    from docgraph import Workspace

    with Workspace(root) as ws:  # closing drops the in-memory tables: the next open is a new "process"
        return [(p.document_id, p.page, round(p.score, 9)) for p in ws.search(QUESTION, method, top_pages=3).pages]


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_later_session_ranks_from_the_tables_on_disk_until_the_data_changes(
    survey_workspace: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, method: str
):
    from docgraph import Workspace
    from docgraph.methods.hvm import index as hvm_index
    from docgraph.methods.kg4vd import graph_view
    from docgraph.methods.kg4vd.storage import LAYER
    from docgraph.methods.memo import bump_version
    from docgraph.methods.retrieval.evidence_layer import EvidenceLayer

    monkeypatch.setattr(disk_memo, "MIN_BUILD_SECONDS", 0.0)
    builds: list[str] = []
    for owner, name in ((graph_view, "load_view_from_store"), (hvm_index, "load_hvm_index")):
        original = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, _f=original, _n=name, **k: builds.append(_n) or _f(*a, **k))
    layer_build = EvidenceLayer.build.__func__
    monkeypatch.setattr(
        EvidenceLayer, "build", classmethod(lambda cls, *a, **k: builds.append("layer") or layer_build(cls, *a, **k))
    )

    first = _ranked(survey_workspace, method)
    assert builds and list(cache.glob("*.table"))
    built = list(builds)
    assert _ranked(survey_workspace, method) == first
    assert builds == built, "the second session built a table again instead of reading it"

    with Workspace(survey_workspace) as ws:
        bump_version(ws.store, LAYER if method == "kg4vd" else "hvm")  # what a build writing chunks does
    assert _ranked(survey_workspace, method) == first
    assert len(builds) > len(built), "a table of an older data version was used"
