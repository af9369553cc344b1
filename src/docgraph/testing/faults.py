"""Fault injection for the reliability matrix (tests/reliability, benchmarks/faults.py).

- ``canonical_dump(root)``: a workspace's stored content in a comparable form — documents
  (without ``added_at``), pages, records (without timestamps and the model usage a record
  keeps), vectors (as arrays), meta (without the cache-version stamps, fresh uuids at every
  write, and the capabilities probed of an endpoint, keyed by its URL), and the page/crop
  files with content hashes; the model cache and usage (memos and meters, which a resumed
  run legitimately fills differently) are left out.
- ``compare_dumps(reference, run)``: rows lost, extra (duplicated under another key) and
  changed, per table.
- ``kill_case(...)``: run a ``docgraph`` command in a subprocess, SIGKILL it (its whole
  process group: page workers too) at seeded random points, rerun it to completion, and
  compare the workspace with an uninterrupted run; ``docgraph check`` must find nothing.
- ``eval_dump(root)`` / ``eval_check(root)``: the same for ``docgraph eval`` run with
  ``--out ROOT/results --workspace-root ROOT/corpora``: its records (the latest per key,
  run-specific fields aside; a question or build recorded twice is a duplicate) and every
  corpus workspace's dump; every corpus workspace passes ``docgraph check``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..store.integrity import check_workspace

DB_NAME = "docgraph.sqlite"
VOLATILE_KEYS = frozenset(
    {"added_at", "seconds", "elapsed_s", "built_at", "updated_at", "timings", "usage"}
)  # a stored record's model usage is a meter: a resumed run has cache hits
VECTOR_ATOL = 1e-4  # embedding in other block compositions may move float32 sums in the last bits


def _volatile_meta(key: str) -> bool:
    """Cache-version stamps (a fresh uuid at every write of a method's tables or vectors) and
    what a model endpoint was probed to serve (keyed by its URL: another port, another key)."""
    return key.startswith(("vectors_version:", "endpoint_caps:")) or key.endswith("index_version")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _json(text: str) -> Any:
    try:
        return _strip(json.loads(text))
    except ValueError:
        return ("unparseable", text)


def canonical_dump(root: Path) -> dict[str, dict]:
    """table → {row key → comparable value} (see the module docstring)."""
    root = Path(root)
    db = sqlite3.connect(f"file:{root / DB_NAME}?mode=ro", uri=True)
    try:
        out: dict[str, dict] = {
            "documents": {
                r[0]: r[1:]
                for r in db.execute("SELECT id, sha256, title, path, kind, page_count, status FROM documents")
            },
            "pages": {(d, n): _json(data) for d, n, data in db.execute("SELECT doc_id, number, data FROM pages")},
            "records": {
                (ns, k): (doc, _json(v))
                for ns, k, doc, v in db.execute("SELECT namespace, key, doc_id, value FROM records")
            },
            "vectors": {
                (ns, k): (doc, model, dim, np.frombuffer(vec, dtype=np.float32))
                for ns, k, doc, model, dim, vec in db.execute(
                    "SELECT namespace, key, doc_id, model, dim, vec FROM vectors"
                )
            },
            "meta": {k: v for k, v in db.execute("SELECT key, value FROM meta") if not _volatile_meta(k)},
        }
    finally:
        db.close()
    out["files"] = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in ("pages", "crops")
        if (root / folder).is_dir()
        for p in sorted((root / folder).rglob("*"))
        if p.is_file()
    }
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.allclose(a, b, atol=VECTOR_ATOL))
        )
    return a == b


@dataclass
class Diff:
    lost: dict[str, int] = field(default_factory=dict)  # table → rows of the reference missing
    extra: dict[str, int] = field(default_factory=dict)  # table → rows the reference has not (duplicates)
    changed: dict[str, int] = field(default_factory=dict)  # table → same key, other value
    examples: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not (self.lost or self.extra or self.changed)


def compare_dumps(reference: dict[str, dict], run: dict[str, dict], *, examples: int = 5) -> Diff:
    diff = Diff()
    for table in sorted(set(reference) | set(run)):
        ref, got = reference.get(table, {}), run.get(table, {})
        lost = [k for k in ref if k not in got]
        extra = [k for k in got if k not in ref]
        changed = [k for k in ref if k in got and not _same(ref[k], got[k])]
        for name, keys in (("lost", lost), ("extra", extra), ("changed", changed)):
            if keys:
                getattr(diff, name)[table] = len(keys)
                diff.examples += [f"{name} {table} {k!r}" for k in sorted(keys, key=repr)[:examples]]
    return diff


# ---------------------------------------------------------------------------- running and killing
def docgraph_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "docgraph", *args]


def subprocess_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCGRAPH_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_to_completion(command: Sequence[str], cwd: Path, timeout: float = 1800) -> float:
    """Run ``command``; raise with its output when it fails; the seconds it took."""
    started = time.perf_counter()
    done = subprocess.run(list(command), cwd=cwd, env=subprocess_env(), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return time.perf_counter() - started


def _rows(root: Path) -> int:
    """Rows written so far (pages + records + vectors); 0 while there is no database yet."""
    try:
        db = sqlite3.connect(f"file:{root / DB_NAME}?mode=ro", uri=True, timeout=1)
        try:
            return sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("pages", "records", "vectors"))
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def run_and_kill(
    command: Sequence[str], cwd: Path, *, after_s: float | None = None, at_rows: tuple[Path, int] | None = None
) -> bool:
    """Start ``command`` and SIGKILL its process group (page workers too) after ``after_s``
    seconds, or once the workspace ``at_rows[0]`` holds ``at_rows[1]`` rows or more (a point of
    progress, whatever the machine's speed). Whether it was killed (False: it finished first,
    and must have succeeded)."""
    proc = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    started = time.perf_counter()
    try:
        while proc.poll() is None:
            if (after_s is not None and time.perf_counter() - started >= after_s) or (
                at_rows is not None and _rows(at_rows[0]) >= at_rows[1]
            ):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.02)
        err = proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]  # started with stderr=PIPE
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {proc.returncode} before the kill:\n{err}")
        return False
    finally:
        proc.stderr.close()  # type: ignore[union-attr]  # started with stderr=PIPE


@dataclass
class KillResult:
    case: str
    command: str
    trials: int = 0
    kills: int = 0  # SIGKILLs that landed (the others found the run finished)
    survived: int = 0  # trials whose resumed workspace equals the reference and passes check
    lost: int = 0
    duplicated: int = 0
    changed: int = 0
    check_problems: int = 0
    incomplete: int = 0
    reference_s: float = 0.0
    failures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def kill_case(
    case: str,
    base: Path,
    args: Sequence[str],
    work: Path,
    *,
    trials: int,
    kills_per_trial: int,
    seed: int,
    complete: Callable[[Path], str | None] | None = None,
    reference: Path | None = None,
    by: str = "time",
    dump: Callable[[Path], dict[str, dict]] = canonical_dump,
    check: Callable[[Path], list[str]] | None = None,
    min_kills: int = 0,
) -> KillResult:
    """Kill ``docgraph --workspace WS ARGS`` (``{ws}`` in an argument stands for WS)
    ``kills_per_trial`` times per trial on a fresh copy of ``base`` (missing: an empty
    workspace), then run it to completion and compare with the
    reference: ``reference`` (a workspace the same work finished on) or an uninterrupted run
    made here. Kill points are seeded: ``by="time"`` the first at a random fraction of the
    reference run's duration, each next one at a random fraction of what is left of it (needs
    the run made here); ``by="rows"`` once a random number of the rows the work adds is
    written. ``complete(ws_root)`` returns a reason when the finished workspace is not
    complete, else None. ``dump``/``check``: what is compared and checked
    (default: the workspace's ``canonical_dump`` and ``docgraph check``'s findings).
    ``min_kills``: run more trials (up to four times ``trials``) until that many kills have
    landed — a resumed run is shorter, so later kill points often find it finished."""
    rng = random.Random(seed)
    check = check or (lambda root: [f.message for f in check_workspace(root).findings])
    work.mkdir(parents=True, exist_ok=True)
    result = KillResult(case, "docgraph --workspace WS " + " ".join(args).replace("{ws}", "WS"), trials=trials)

    def command_for(root: Path) -> list[str]:
        return docgraph_command("--workspace", str(root), *[a.replace("{ws}", str(root)) for a in args])

    def copy_base(dest: Path) -> Path:
        if base.exists():
            shutil.copytree(base, dest)
        else:
            dest.mkdir(parents=True)
        return dest

    if reference is None:
        reference = copy_base(work / "reference")
        result.reference_s = run_to_completion(command_for(reference), work)
    elif by == "time":
        raise ValueError("kills by time need the reference run made here (reference=None)")
    reference_dump = dump(reference)
    base_rows = _rows(base) if base.exists() else 0
    added_rows = _rows(reference) - base_rows
    trial = 0
    while trial < trials or (result.kills < min_kills and trial < 4 * trials):
        result.trials = trial + 1
        root = copy_base(work / f"trial{trial}")
        command = command_for(root)
        if by == "rows":  # later kills at later points: each run gets past the last one's
            points = sorted(base_rows + rng.randint(1, max(1, added_rows - 1)) for _ in range(kills_per_trial))
        left = result.reference_s  # by time: what is left of the work, as the reference run took it
        for k in range(kills_per_trial):
            if by == "time":
                after = rng.uniform(0.05, 0.95) * left
                landed = run_and_kill(command, work, after_s=after)
                left -= after  # a resumed run also starts Python again: what is left is more than this
            else:
                landed = run_and_kill(command, work, at_rows=(root, points[k]))
            result.kills += landed
            if not landed:  # the run finished: the next points would find it finished too
                break
        run_to_completion(command, work)
        diff = compare_dumps(reference_dump, dump(root))
        findings = check(root)
        reason = complete(root) if complete else None
        result.lost += sum(diff.lost.values())
        result.duplicated += sum(diff.extra.values())
        result.changed += sum(diff.changed.values())
        result.check_problems += len(findings)
        result.incomplete += reason is not None
        if diff.equal and not findings and reason is None:
            result.survived += 1
            shutil.rmtree(root)
        else:
            result.failures.append(
                f"trial {trial} ({root}): " + "; ".join(diff.examples + findings + ([reason] if reason else []))
            )
        trial += 1
    return result


def build_complete(method: str):
    """``complete`` for ``kill_case``: the method's status says every page is built."""

    def check(root: Path) -> str | None:
        from ..api import Workspace

        with Workspace(root, create=False) as ws:
            status = ws.status()[method]
        if status.get("built_pages") != status.get("total_pages") or status.get("complete") is False:
            return f"{method} status after the rerun: {status}"
        return None

    return check


def add_complete(root: Path) -> str | None:
    db = sqlite3.connect(f"file:{root / DB_NAME}?mode=ro", uri=True)
    try:
        bad = db.execute("SELECT id, status FROM documents WHERE status != 'ready'").fetchall()
    finally:
        db.close()
    return f"documents not ready after the rerun: {bad}" if bad else None


# ---------------------------------------------------------------------------- docgraph eval
EVAL_VOLATILE = frozenset({"pages_built_now"})  # what this run built, not what the corpus holds


def _corpus_workspaces(root: Path) -> list[Path]:
    return sorted(p.parent for p in (root / "corpora").rglob(DB_NAME))


def eval_dump(root: Path) -> dict[str, dict]:
    """``docgraph eval``'s output under ``root`` (see the module docstring) as dump tables:
    ``eval.records`` (key → record), ``eval.duplicates`` (key → lines beyond the first of a
    finished record) and ``<corpus>/<table>`` for every corpus workspace."""
    from ..eval.records import record_key

    records: dict[Any, Any] = {}
    lines: dict[Any, int] = {}
    for path in sorted((root / "results").glob("*-records.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # a line cut short by the kill: the rerun writes the record again
                continue
            key = (path.name, *map(repr, record_key(record)))
            records[key] = {k: v for k, v in _strip(record).items() if k not in EVAL_VOLATILE}
            lines[key] = lines.get(key, 0) + (not record.get("error"))
    out: dict[str, dict] = {"eval.records": records, "eval.duplicates": {k: n - 1 for k, n in lines.items() if n > 1}}
    for ws in _corpus_workspaces(root):
        name = ws.relative_to(root / "corpora").as_posix()
        out.update({f"{name}/{table}": rows for table, rows in canonical_dump(ws).items()})
    return out


def eval_check(root: Path) -> list[str]:
    """``docgraph check`` findings of every corpus workspace (none at all is a finding)."""
    spaces = _corpus_workspaces(root)
    if not spaces:
        return [f"no corpus workspace under {root / 'corpora'}"]
    return [f"{ws.name}: {f.message}" for ws in spaces for f in check_workspace(ws).findings]
