"""Serving files from the workspace only.

Every path the server opens comes from the store (page images, crops) or is made by the
server (uploads, Set-of-Marks images); each is resolved and checked to lie inside the
workspace folder before it is opened, so a tampered record, ``..`` segments, symlinks out of the
folder or absolute paths never reach a file outside it.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from fastapi import HTTPException


def workspace_file(root: Path, relative: str | None) -> Path:
    """The existing regular file ``root/relative``; 404 unless it lies inside ``root``.

    Absolute paths (POSIX or Windows style), paths that climb out with ``..`` and symlinks
    that lead outside the workspace are all refused the same way, without saying why, so
    the response does not reveal what exists outside the workspace.
    """
    if not relative or "\x00" in relative:
        raise HTTPException(status_code=404, detail="file not found in the workspace")
    if (
        PurePosixPath(relative).is_absolute()
        or PureWindowsPath(relative).is_absolute()
        or PureWindowsPath(relative).drive
    ):
        raise HTTPException(status_code=404, detail="file not found in the workspace")
    base = root.resolve()
    candidate = (base / relative).resolve()
    try:
        candidate.relative_to(base)
    except ValueError:
        raise HTTPException(status_code=404, detail="file not found in the workspace") from None
    if not candidate.is_file():
        raise HTTPException(status_code=404, detail="file not found in the workspace")
    return candidate
