"""A full disk, said plainly: ``DiskFullError`` from SQLite's SQLITE_FULL and the OS's ENOSPC.

``is_disk_full(exc)`` recognises both; ``disk_full_error(root)`` is the error to raise in
their place: where, how much is free, that the change in progress was rolled back (SQLite
keeps the last committed state; files are written to a temporary name and renamed), and
that the same command resumes once space is freed.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

from ..errors import DiskFullError


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.OperationalError):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _free(root: Path) -> str:
    try:
        free = shutil.disk_usage(root).free
    except OSError:
        return "unknown"
    return f"{free / (1 << 20):.1f} MB" if free >= 1 << 20 else f"{free // 1024} KB"


def disk_full_error(root: Path | str) -> DiskFullError:
    root = Path(root)
    return DiskFullError(
        f"no space left on the disk holding workspace {root} ({_free(root)} free): the change in "
        "progress was rolled back and nothing half-written is kept; free some space (or move the "
        "workspace to a larger disk) and run the same command again — it resumes where it stopped"
    )
