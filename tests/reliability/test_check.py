"""``docgraph check``: each kind of damage done to a real workspace is found, and ``--repair``
fixes what it can without touching anything else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from docgraph import Workspace
from docgraph.cli import main
from docgraph.store import SQLiteStore
from docgraph.store.integrity import check_workspace

DOC = "040fed959f81"  # the OpenStax excerpt's id (sha256 prefix)


def sql(root: Path, statement: str, params=()) -> None:
    with sqlite3.connect(root / SQLiteStore.DB_NAME) as db:  # foreign keys off, as a foreign tool would
        db.execute(statement, params)


def count(root: Path, statement: str, params=()) -> int:
    with sqlite3.connect(root / SQLiteStore.DB_NAME) as db:
        return db.execute(statement, params).fetchone()[0]


def kinds(root: Path, repair: bool = False) -> set[str]:
    return {f.kind for f in check_workspace(root, repair=repair).findings}


def test_a_clean_workspace_passes(dense_ws, capsys):
    report = check_workspace(dense_ws)
    assert report.ok and report.findings == []
    assert report.stats["documents"] == 1 and report.stats["pages"] == 5 and report.stats["vectors"] > 0
    assert main(["--workspace", str(dense_ws), "check"]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_rows_of_a_document_that_is_gone_are_orphans_and_repair_removes_them(dense_ws, capsys):
    vectors = count(dense_ws, "SELECT COUNT(*) FROM vectors")
    sql(dense_ws, "DELETE FROM documents WHERE id = ?", [DOC])  # no cascade: foreign keys off
    assert main(["--workspace", str(dense_ws), "check"]) == 1
    out = capsys.readouterr().out
    assert "orphan-rows: 5 row(s) of pages" in out and "records/dense.chunk" in out
    assert "vectors/dense.chunk" in out and f"pages/{DOC}" in out and "--repair" in out

    report = check_workspace(dense_ws, repair=True)
    assert report.ok and report.findings == []
    assert f"deleted {vectors} orphan vectors row(s)" in report.repaired
    assert f"removed pages/{DOC}" in report.repaired and f"removed crops/{DOC}" in report.repaired
    for table in ("pages", "records", "vectors"):
        assert count(dense_ws, f"SELECT COUNT(*) FROM {table} WHERE doc_id = ?", [DOC]) == 0
    assert not (dense_ws / "pages" / DOC).exists()


def test_dangling_files_are_removed_and_stored_ones_kept(dense_ws):
    images = sorted((dense_ws / "pages" / DOC).iterdir())
    (dense_ws / "pages" / DOC / ".p0003.jpg.4242.tmp").write_bytes(b"half a jpeg")  # a killed writer's
    (dense_ws / "crops" / "0123456789ab").mkdir()
    (dense_ws / "crops" / "0123456789ab" / "p0001-IM1.png").write_bytes(b"x")
    (dense_ws / "marks" / "0123456789ab").mkdir(parents=True)
    assert kinds(dense_ws) == {"dangling-files"}
    report = check_workspace(dense_ws, repair=True)
    assert report.ok and len(report.repaired) == 3
    assert sorted((dense_ws / "pages" / DOC).iterdir()) == images
    assert not (dense_ws / "crops" / "0123456789ab").exists() and not (dense_ws / "marks" / "0123456789ab").exists()


def test_a_missing_page_image_is_reported_with_the_fix_and_not_repaired_away(dense_ws, capsys):
    (dense_ws / "pages" / DOC / "p0002.jpg").unlink()
    assert main(["--workspace", str(dense_ws), "check", "--repair"]) == 1
    out = capsys.readouterr().out
    assert f"missing-files: document {DOC}" in out and "pages/" + DOC + "/p0002.jpg" in out
    assert f"docgraph rm {DOC} && docgraph add " in out
    assert count(dense_ws, "SELECT COUNT(*) FROM pages") == 5  # nothing deleted


def test_the_fix_for_a_missing_file_works(dense_ws):
    (dense_ws / "crops" / DOC / "p0004-IM1.jpg").unlink()
    assert kinds(dense_ws) == {"missing-files"}
    with Workspace(dense_ws) as ws:
        path = ws.document(DOC).path
        ws.remove(DOC)
        ws.add([path])
        ws.build("dense")
    assert check_workspace(dense_ws).findings == []
    assert count(dense_ws, "SELECT COUNT(*) FROM documents") == 1


def test_mixed_vector_dimensions_are_found_and_the_suggested_rebuild_fixes_them(dense_ws):
    sql(dense_ws, "UPDATE vectors SET dim = 8, vec = zeroblob(32) WHERE rowid = (SELECT MIN(rowid) FROM vectors)")
    report = check_workspace(dense_ws, repair=True)
    assert [f.kind for f in report.findings] == ["vector-dim"] and report.repaired == []
    assert "docgraph build --method dense --rebuild-vectors" in report.findings[0].message
    with Workspace(dense_ws) as ws:
        ws.build("dense", rebuild_vectors=True)
    assert check_workspace(dense_ws).findings == []


def test_vectors_of_the_wrong_size_and_of_two_models(dense_ws):
    sql(dense_ws, "UPDATE vectors SET vec = zeroblob(12) WHERE rowid = (SELECT MIN(rowid) FROM vectors)")
    sql(dense_ws, "UPDATE vectors SET model = 'other-model' WHERE rowid = (SELECT MAX(rowid) FROM vectors)")
    assert kinds(dense_ws) == {"vector-size", "vector-model"}


def test_unparseable_rows(dense_ws):
    sql(dense_ws, "UPDATE records SET value = '{\"cut\": ' WHERE rowid = (SELECT MIN(rowid) FROM records)")
    sql(dense_ws, "UPDATE pages SET data = 'garbage' WHERE number = 3")
    report = check_workspace(dense_ws, repair=True)
    found = report.findings
    assert sorted(f.kind for f in found) == ["bad-json", "bad-json"]  # the page's image is not called dangling
    assert report.repaired == [] and (dense_ws / "pages" / DOC / "p0003.jpg").is_file()
    assert any("pages" in f.message for f in found) and any("docgraph build --method" in f.message for f in found)


def test_a_ready_document_with_a_page_row_missing(dense_ws):
    sql(dense_ws, "DELETE FROM pages WHERE number = 5")
    found = check_workspace(dense_ws).findings
    # its image is now named by no row as well; the document's page count gives it away
    assert {f.kind for f in found} == {"missing-pages", "dangling-files"}
    assert any("has 4 of 5 pages stored" in f.message for f in found)


def test_an_interrupted_add_is_a_warning_not_damage(dense_ws, capsys):
    sql(dense_ws, "UPDATE documents SET status = 'ingesting'")
    report = check_workspace(dense_ws)
    assert report.ok and [(f.kind, f.severity) for f in report.findings] == [("incomplete", "warning")]
    assert main(["--workspace", str(dense_ws), "check"]) == 0
    assert "add the same file again to resume" in capsys.readouterr().out


def test_a_damaged_database_file_is_reported_not_raised(dense_ws, capsys):
    db = dense_ws / SQLiteStore.DB_NAME
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(2 * page, len(data) - page, 3 * page):  # every third b-tree page scrambled
        data[start + 8 : start + 200] = bytes((i * 37) % 256 for i in range(192))
    db.write_bytes(bytes(data))
    report = check_workspace(dense_ws, repair=True)
    assert not report.ok and [f.kind for f in report.findings] == ["sqlite"] and report.repaired == []
    assert main(["--workspace", str(dense_ws), "check"]) == 1
    assert "restore it from a backup" in capsys.readouterr().out


def test_not_a_workspace(tmp_path):
    assert [f.kind for f in check_workspace(tmp_path).findings] == ["no-database"]


def test_json_report(dense_ws, capsys):
    import json

    (dense_ws / "pages" / DOC / "stray.png").write_bytes(b"x")
    assert main(["--workspace", str(dense_ws), "check", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["findings"][0]["kind"] == "dangling-files" and out["findings"][0]["repairable"]


def test_a_postgres_workspace_is_named_as_unsupported_not_as_missing(tmp_path):
    root = tmp_path / "pg-ws"
    root.mkdir()
    (root / "docgraph.toml").write_text('[store]\nbackend = "postgres"\nurl = "postgresql://u:secret@db/x"\n')
    report = check_workspace(root)
    assert not report.ok and [f.kind for f in report.findings] == ["unsupported-backend"]
    assert "postgres" in report.findings[0].message and "secret" not in report.findings[0].message
