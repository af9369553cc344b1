"""Disk full for the reliability matrix (issue 15 item 5): a workspace on a small tmpfs.

``disk_full_case(case, base, args, reference, work, free_kb)``: for each amount of free space
in ``free_kb``, a copy of ``base`` (missing: an empty workspace) is put on a fresh 16 MB tmpfs
with a ballast file leaving that much free, and ``docgraph --workspace WS ARGS`` runs. When the
disk fills, it must fail with one clear "no space left" error (no traceback) and leave a
workspace ``docgraph check`` finds no error in (an unfinished add is a warning: it resumes);
then the ballast is deleted, the same command runs to completion, and the workspace must
equal ``reference`` (a workspace the same command finished on) and pass ``docgraph check``.

Mounting needs root (CAP_SYS_ADMIN); ``tmpfs_unavailable()`` says why it cannot be done here.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..store.integrity import check_workspace
from .faults import canonical_dump, compare_dumps, docgraph_command, subprocess_env

SIZE_MB = 16
MESSAGE = "no space left on the disk holding workspace"


def tmpfs_unavailable() -> str | None:
    """Why a tmpfs cannot be mounted here, or None when it can."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", folder], capture_output=True, text=True
        )
        if done.returncode != 0:
            return f"cannot mount a tmpfs (needs root with CAP_SYS_ADMIN): {done.stderr.strip() or done.returncode}"
        subprocess.run(["umount", folder], check=True)
    return None


@contextmanager
def tmpfs(path: Path, size_mb: int = SIZE_MB) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path, leave_kb: int) -> Path:
    """A ballast file taking all the free space of ``folder``'s disk but ``leave_kb``."""
    ballast = folder / "ballast"
    free = shutil.disk_usage(folder).free - leave_kb * 1024
    with open(ballast, "wb") as out:
        out.truncate(0)
        chunk = b"\0" * (1 << 20)
        while free > 0:
            out.write(chunk[: min(len(chunk), free)])
            free -= len(chunk)
    return ballast


@dataclass
class DiskFullResult:
    case: str
    command: str
    runs: int = 0
    hit: int = 0  # runs in which the disk filled up (the others had room enough)
    clear_errors: int = 0  # of those, failed with the one clear message and no traceback
    survived: int = 0  # runs whose rerun after freeing space equals the reference
    lost: int = 0
    duplicated: int = 0
    changed: int = 0
    check_problems: int = 0  # errors found by docgraph check, after the failure or after the rerun
    failures: list[str] = field(default_factory=list)


def _run(root: Path, args: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        docgraph_command("--workspace", str(root), *args),
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )


def disk_full_case(
    case: str, base: Path, args: Sequence[str], reference: Path, work: Path, free_kb: Sequence[int]
) -> DiskFullResult:
    result = DiskFullResult(case, "docgraph --workspace WS " + " ".join(args))
    reference_dump = canonical_dump(reference)
    for leave in free_kb:
        result.runs += 1
        with tmpfs(work / f"{case}-{leave}kb") as disk:
            root = disk / "ws"
            if base.exists():
                shutil.copytree(base, root)
            ballast = fill(disk, leave)
            first = _run(root, args)
            problems: list[str] = []
            if first.returncode != 0:
                result.hit += 1
                if first.returncode == 1 and MESSAGE in first.stderr and "Traceback" not in first.stderr:
                    result.clear_errors += 1
                else:
                    problems.append(f"{leave} KB free: exit {first.returncode}: {first.stderr[-600:]}")
                errors = check_workspace(root).errors if (root / "docgraph.sqlite").exists() else []
                result.check_problems += len(errors)
                problems += [f"{leave} KB free, after the failure: {f.message}" for f in errors]
            ballast.unlink()
            second = _run(root, args)
            if second.returncode != 0:
                problems.append(
                    f"{leave} KB free, rerun after freeing space: exit {second.returncode}: {second.stderr[-600:]}"
                )
            diff = compare_dumps(reference_dump, canonical_dump(root))
            findings = check_workspace(root).findings
            result.lost += sum(diff.lost.values())
            result.duplicated += sum(diff.extra.values())
            result.changed += sum(diff.changed.values())
            result.check_problems += len(findings)
            problems += diff.examples + [f.message for f in findings]
            if problems:
                result.failures += problems
            else:
                result.survived += 1
    return result
