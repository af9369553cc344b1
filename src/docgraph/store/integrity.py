"""``check_workspace``: an integrity check of an embedded (SQLite + files) workspace.

What it checks:
- the SQLite file itself (``PRAGMA integrity_check``) and its foreign keys;
- orphan rows: pages, records and vectors owned by a document that is gone;
- JSON that does not parse in page and record rows;
- vectors: one dimension and one embedding model per namespace, blobs of ``4 × dim`` bytes;
- documents: ``ready`` ones with every page stored; ``ingesting`` ones (an interrupted
  ``add``) are reported as resumable, not as damage;
- files vs rows: every page image and crop a page row names exists; files under
  ``pages/``, ``crops/`` and ``marks/`` that no row names (a removed document's, a killed
  writer's temporary files) are dangling.

``repair=True`` removes what can be removed without losing anything a rebuild could not
restore: orphan rows, foreign-key violations and dangling files. Everything else is
reported with the command that fixes it. ``--repair`` takes the workspace's write lock
(``writelock``), so it never runs beside an ``add``/``build`` (a page in flight has its
image written before its row); a plain check while one writes says so first (``busy``).

Reads the database with ``sqlite3`` directly (not through ``SQLiteStore``), so a workspace
too damaged to open is still checked.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .writelock import holder, write_lock

DB_NAME = "docgraph.sqlite"
PAGE_DIR, CROP_DIR, MARKS_DIR = "pages", "crops", "marks"
DERIVED_CROP_PREFIX = "kg4vd-"  # crops KG4VD draws on demand for visual entities (regenerated when missing)
OWNED_TABLES = ("pages", "records", "vectors")
UNKNOWN = "*"  # in a document's named files: a page row that does not parse (its files are kept)

Severity = Literal["error", "warning"]


@dataclass
class Finding:
    """One problem: ``kind`` (a stable tag), ``message`` (what and how to fix), whether
    ``--repair`` can fix it, and the rows/files it concerns."""

    kind: str
    message: str
    severity: Severity = "error"
    repairable: bool = False
    count: int = 1


@dataclass
class CheckReport:
    root: Path
    findings: list[Finding] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # what --repair did, one line each
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "ok": self.ok,
            "findings": [asdict(f) for f in self.findings],
            "repaired": self.repaired,
            "stats": self.stats,
        }


def check_workspace(root: Path | str, *, repair: bool = False) -> CheckReport:
    """Check the workspace at ``root``; with ``repair``, remove what can safely be removed and
    check again (the report then lists what remains, and ``repaired`` what was done)."""
    root = Path(root)
    if repair and (root / DB_NAME).is_file():  # never delete what a running add or build is writing
        with write_lock(root, "check --repair"):
            return _check_and_repair(root)
    report = _check(root)
    writer = holder(root) if (root / DB_NAME).is_file() else None
    if writer:
        report.findings.insert(
            0,
            Finding(
                "busy",
                f"`docgraph {writer.get('what')}` (pid {writer.get('pid')}) is "
                "writing to this workspace now: files and rows it has in flight "
                "may show below; check again when it is done",
                severity="warning",
            ),
        )
    return report


def _check_and_repair(root: Path) -> CheckReport:
    report = _check(root)
    if any(f.repairable for f in report.findings):
        done = _repair(root)
        report = _check(root)
        report.repaired = done
    return report


# ---------------------------------------------------------------------------- checking
def _configured_backend(root: Path) -> str:
    """The store backend the workspace's settings name (docgraph.toml, DOCGRAPH_* env)."""
    from ..config import load_settings
    from ..errors import ConfigError

    try:
        return load_settings(root).store.backend
    except ConfigError:
        return "sqlite"  # unreadable settings: check the folder as it is


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _check(root: Path) -> CheckReport:
    report = CheckReport(root)
    add = report.findings.append
    db_path = root / DB_NAME
    backend = _configured_backend(root)
    if backend != "sqlite":
        add(
            Finding(
                "unsupported-backend",
                f"{root} keeps its rows in {backend} (store.backend); docgraph check "
                "reads SQLite workspaces only — check that database with its own tools",
            )
        )
        return report
    if not db_path.is_file():
        add(
            Finding(
                "no-database",
                f"{db_path} does not exist; this is not a docgraph workspace "
                "(add documents to create one: docgraph add FILE... --workspace DIR)",
            )
        )
        return report
    try:
        conn = _connect(db_path)
        try:
            _check_database(conn, root, report)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        add(
            Finding(
                "sqlite",
                f"{db_path}: the database cannot be read ({exc}); restore it from a backup, "
                "or move the workspace away and add the documents again",
            )
        )
    return report


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _check_database(conn: sqlite3.Connection, root: Path, report: CheckReport) -> None:
    add = report.findings.append
    problems = [r[0] for r in conn.execute("PRAGMA integrity_check(20)")]
    if problems != ["ok"]:
        add(
            Finding(
                "sqlite",
                f"{root / DB_NAME} is damaged: {'; '.join(problems[:5])}"
                f"{' …' if len(problems) > 5 else ''}; restore it from a backup, or move the workspace "
                "away and add the documents again",
                count=len(problems),
            )
        )
        return
    missing = {"documents", *OWNED_TABLES} - _tables(conn)
    if missing:
        add(
            Finding(
                "schema",
                f"{root / DB_NAME} has no table(s) {', '.join(sorted(missing))}; it is not a "
                "docgraph workspace database",
            )
        )
        return
    report.stats = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("documents", *OWNED_TABLES)}

    violations: dict[str, int] = {}
    for table, _rowid, parent, _fk in conn.execute("PRAGMA foreign_key_check"):
        if table not in OWNED_TABLES:  # owned tables are reported as orphans below
            violations[f"{table} -> {parent}"] = violations.get(f"{table} -> {parent}", 0) + 1
    for link, n in sorted(violations.items()):
        add(Finding("foreign-key", f"{n} row(s) of {link} point to rows that are gone", repairable=True, count=n))

    for table in OWNED_TABLES:
        group = "'pages'" if table == "pages" else "namespace"
        rows = conn.execute(
            f"SELECT {group}, COUNT(*) FROM {table} WHERE doc_id IS NOT NULL AND doc_id NOT IN "
            f"(SELECT id FROM documents) GROUP BY 1 ORDER BY 1"
        ).fetchall()
        for name, n in rows:
            where = table if table == "pages" else f"{table}/{name}"
            add(
                Finding(
                    "orphan-rows",
                    f"{n} row(s) of {where} belong to a document that is no longer in the workspace",
                    repairable=True,
                    count=n,
                )
            )

    for table, column, fix in (
        ("pages", "data", "remove the document and add it again"),
        ("records", "value", "rebuild the method: docgraph build --method NAME"),
    ):
        label = "'pages'" if table == "pages" else "namespace"
        for name, n in conn.execute(
            f"SELECT {label}, COUNT(*) FROM {table} WHERE json_valid({column}) = 0 GROUP BY 1 ORDER BY 1"
        ):
            add(Finding("bad-json", f"{n} {name} row(s) hold data that does not parse; {fix}", count=n))

    for ns, dims, models, bad_len in conn.execute(
        "SELECT namespace, GROUP_CONCAT(DISTINCT dim), GROUP_CONCAT(DISTINCT model), "
        "SUM(length(vec) != 4 * dim) FROM vectors GROUP BY namespace ORDER BY namespace"
    ):
        method = ns.split(".")[0]
        fix = f"rebuild them: docgraph build --method {method} --rebuild-vectors"
        dim_list = sorted({int(d) for d in str(dims).split(",")})
        if len(dim_list) > 1:
            add(Finding("vector-dim", f"vectors of {ns} have mixed dimensions {dim_list}; {fix}"))
        if "," in str(models):
            add(Finding("vector-model", f"vectors of {ns} come from several embedding models ({models}); {fix}"))
        if bad_len:
            add(
                Finding(
                    "vector-size", f"{bad_len} vector(s) of {ns} do not hold dim × 4 bytes; {fix}", count=int(bad_len)
                )
            )

    docs = {
        doc_id: (status, page_count, path)
        for doc_id, status, page_count, path in conn.execute("SELECT id, status, page_count, path FROM documents")
    }
    stored = dict(conn.execute("SELECT doc_id, COUNT(*) FROM pages GROUP BY doc_id").fetchall())
    for doc_id, (status, page_count, path) in sorted(docs.items()):
        have = stored.get(doc_id, 0)
        if status == "ready" and have != page_count:
            add(
                Finding(
                    "missing-pages",
                    f"document {doc_id} ({path}) is ready but has {have} of {page_count} "
                    f"pages stored; remove and add it again: docgraph rm {doc_id} && docgraph add {path}",
                )
            )
        elif status != "ready":
            add(
                Finding(
                    "incomplete",
                    f"document {doc_id} ({path}) was not fully added ({have}/{page_count} "
                    f"pages, status {status}); add the same file again to resume: docgraph add {path}",
                    severity="warning",
                )
            )
    _check_files(conn, root, docs, report)


def _page_files(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """doc id → workspace-relative files its page rows name (page images and crops)."""
    named: dict[str, set[str]] = {}
    for doc_id, data in conn.execute("SELECT doc_id, data FROM pages"):
        files = named.setdefault(doc_id, set())
        try:
            page = json.loads(data)
        except ValueError:  # reported as bad-json; which files it names is unknown, so keep them all
            files.add(UNKNOWN)
            continue
        if page.get("image_path"):
            files.add(page["image_path"])
        files.update(c["crop_path"] for c in page.get("components") or [] if c.get("crop_path"))
    return named


def _dangling(root: Path, docs: dict[str, Any], named: dict[str, set[str]]) -> list[Path]:
    """Files and folders under pages/, crops/, marks/ that no document row or page row names."""
    out: list[Path] = []
    for folder in (PAGE_DIR, CROP_DIR, MARKS_DIR):
        base = root / folder
        if not base.is_dir():
            continue
        for sub in sorted(base.iterdir()):
            if sub.name not in docs or not sub.is_dir():
                out.append(sub)
                continue
            if folder == MARKS_DIR or UNKNOWN in named.get(sub.name, set()):
                continue  # drawn on demand for the web app; any of a present document is fine
            for path in sorted(sub.rglob("*")):
                if path.is_dir():
                    continue
                rel = path.relative_to(root).as_posix()
                derived = folder == CROP_DIR and path.name.startswith(DERIVED_CROP_PREFIX) and path.suffix == ".png"
                if rel not in named.get(sub.name, set()) and not derived:
                    out.append(path)
    return out


def _check_files(conn: sqlite3.Connection, root: Path, docs: dict[str, Any], report: CheckReport) -> None:
    add = report.findings.append
    named = _page_files(conn)
    for doc_id, files in sorted(named.items()):
        missing = sorted(f for f in files - {UNKNOWN} if not (root / f).is_file())
        if missing and doc_id in docs:
            path = docs[doc_id][2]
            add(
                Finding(
                    "missing-files",
                    f"document {doc_id}: {len(missing)} page image/crop file(s) are missing "
                    f"(e.g. {missing[0]}); remove and add it again: docgraph rm {doc_id} && docgraph add {path}",
                    count=len(missing),
                )
            )
    dangling = _dangling(root, docs, named)
    if dangling:
        shown = ", ".join(p.relative_to(root).as_posix() for p in dangling[:3])
        add(
            Finding(
                "dangling-files",
                f"{len(dangling)} file(s)/folder(s) belong to no stored page or document "
                f"({shown}{' …' if len(dangling) > 3 else ''})",
                repairable=True,
                count=len(dangling),
            )
        )


# ---------------------------------------------------------------------------- repairing
def _repair(root: Path) -> list[str]:
    """Delete orphan rows, foreign-key violations and dangling files; returns what was done."""
    done: list[str] = []
    conn = _connect(root / DB_NAME)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table in OWNED_TABLES:
                n = conn.execute(
                    f"DELETE FROM {table} WHERE doc_id IS NOT NULL AND doc_id NOT IN (SELECT id FROM documents)"
                ).rowcount
                if n:
                    done.append(f"deleted {n} orphan {table} row(s)")
            for table, rowid, _parent, _fk in conn.execute("PRAGMA foreign_key_check").fetchall():
                conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', [rowid])
                done.append(f"deleted {table} row {rowid} (foreign key to a row that is gone)")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        docs = {doc_id: None for (doc_id,) in conn.execute("SELECT id FROM documents")}
        named = _page_files(conn)
    finally:
        conn.close()
    for path in _dangling(root, docs, named):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        done.append(f"removed {path.relative_to(root).as_posix()}")
    return done
