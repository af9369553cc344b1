"""A very long input for the reliability matrix (issue 15 item 3): ``docgraph add`` of a
generated 5,000-page PDF into a workspace that already holds a document, SIGKILLed part-way
(once ``kill_fraction`` of its pages are stored), then run again to completion.

It must report progress naming the file while it runs, end with every page stored exactly
once (no page lost or duplicated, one page image each), the document ready, ``docgraph
check`` clean and the rest of the workspace unchanged. The workspace's ``docgraph.toml``
picks the parser (``pymupdf-fast`` by default: the scale, not the layout model, is tested;
the default parser takes about 0.2 s of a core per page more).
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import CONFIG_FILE
from ..store import SQLiteStore
from ..store.integrity import check_workspace
from .faults import canonical_dump, compare_dumps, docgraph_command, run_and_kill, subprocess_env
from .files import long_pdf


@dataclass
class LongInputResult:
    case: str
    file: str
    pages: int
    parser: str
    generate_s: float = 0.0
    killed_at_pages: int = 0  # pages stored when the SIGKILL landed (0: it finished first)
    resume_s: float = 0.0  # the second add, to completion
    resumed_pages: int = 0  # pages the second add processed
    progress_lines: int = 0  # progress lines of the second add naming the file
    stored_pages: int = 0
    duplicated: int = 0
    lost: int = 0
    images: int = 0
    status: str = ""
    check_findings: int = 0
    rest_changed: int = 0
    messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.stored_pages == self.pages == self.images
            and not self.duplicated
            and not self.lost
            and self.status == "ready"
            and not self.check_findings
            and not self.rest_changed
            and self.progress_lines > 0
        )

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def _pages(root: Path, doc_id: str) -> tuple[int, int, int, str]:
    """(page rows, distinct page numbers, highest number, document status)."""
    with sqlite3.connect(f"file:{root / SQLiteStore.DB_NAME}?mode=ro", uri=True) as db:
        rows, distinct, top = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT number), COALESCE(MAX(number), 0) FROM pages WHERE doc_id = ?", [doc_id]
        ).fetchone()
        status = db.execute("SELECT status FROM documents WHERE id = ?", [doc_id]).fetchone()
    return rows, distinct, top, status[0] if status else ""


def long_input_case(
    base: Path, work: Path, *, pages: int = 5000, kill_fraction: float = 0.4, parser: str = "pymupdf-fast"
) -> LongInputResult:
    import shutil

    work.mkdir(parents=True, exist_ok=True)
    name = f"long{pages}.pdf"
    result = LongInputResult(f"{pages:,}-page PDF, killed at {kill_fraction:.0%} and added again", name, pages, parser)
    started = time.perf_counter()
    path = long_pdf(work / name, pages)
    result.generate_s = time.perf_counter() - started
    root = Path(shutil.copytree(base, work / "ws"))
    (root / CONFIG_FILE).write_text(f'[ingest]\nparser = "{parser}"\n', encoding="utf-8")
    before = canonical_dump(root)
    before_ids = set(before["documents"])
    command = docgraph_command("--workspace", str(root), "add", str(path))
    base_rows = len(before["pages"]) + len(before["records"]) + len(before["vectors"])
    # each stored page is two rows (the page, its heading sizes until the document is ready)
    if run_and_kill(command, work, at_rows=(root, base_rows + 2 * int(pages * kill_fraction))):
        after_kill = canonical_dump(root)
        result.killed_at_pages = len(after_kill["pages"]) - len(before["pages"])
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, env=subprocess_env(), capture_output=True, text=True, timeout=7200)
    result.resume_s = time.perf_counter() - started
    if done.returncode != 0:
        result.messages.append(f"second add exited {done.returncode}: {done.stderr[-500:]}")
    result.progress_lines = sum(f"doc={name}"[:34] in line for line in done.stderr.splitlines())
    result.resumed_pages = pages - result.killed_at_pages
    after = canonical_dump(root)
    [doc_id] = sorted(set(after["documents"]) - before_ids) or ["?"]
    rows, distinct, top, result.status = _pages(root, doc_id)
    result.stored_pages, result.duplicated, result.lost = distinct, rows - distinct, pages - distinct
    result.images = sum(1 for _ in (root / "pages" / doc_id).glob("p*.*"))
    result.check_findings = len(check_workspace(root).findings)
    for table in ("documents", "pages", "records", "vectors"):
        after[table] = {k: v for k, v in after[table].items() if doc_id not in repr(k) and doc_id not in repr(v)[:200]}
    after["files"] = {k: v for k, v in after["files"].items() if f"/{doc_id}/" not in k}
    diff = compare_dumps(before, after)
    result.rest_changed = sum(diff.lost.values()) + sum(diff.extra.values()) + sum(diff.changed.values())
    result.messages += diff.examples
    return result
