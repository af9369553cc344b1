"""One writer per workspace: ``add``, ``build``, ``rm`` and ``check --repair`` hold the lock.

SQLite alone keeps each transaction whole, but two writers interleaving *work* on one
workspace (two builds folding the same document, a repair deleting the files an add is
writing) can leave a store no single run would have made. So a writer takes an exclusive
``flock`` on ``<workspace>/.docgraph-write.lock`` and writes who holds it (pid, command,
since) into it; a second writer fails at once with ``WorkspaceBusyError`` naming the
holder. Readers (``ask``, ``retrieve``, ``ls``, the web app's pages) never take it: SQLite's
WAL lets them read while the writer writes.

The kernel drops the lock when its holder exits, however it exits (SIGKILL included), so a
lock is never stale. Within one process the lock is re-entrant for the thread holding it
(``build --rebuild-vectors`` drops vectors inside its build); another thread of the same
process is refused like another process.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import WorkspaceBusyError

LOCK_FILE = ".docgraph-write.lock"

_held: dict[Path, tuple[int, int, int]] = {}  # root -> (thread id, depth, fd)
_guard = threading.Lock()


def holder(root: Path) -> dict[str, Any] | None:
    """Who holds the write lock of ``root`` now ({pid, what, since}), or None when nobody does."""
    path = Path(root) / LOCK_FILE
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(path) or {"pid": None, "what": "another docgraph process", "since": None}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "null")
        return info if isinstance(info, dict) else None
    except (OSError, ValueError):
        return None


def busy_message(root: Path, info: dict[str, Any] | None, what: str) -> str:
    who = "another docgraph process"
    if info:
        who = f"`docgraph {info.get('what')}` (pid {info.get('pid')}, since {info.get('since')})"
    return (
        f"workspace {root} is busy: {who} is writing to it, so `{what}` was not started. Wait for it "
        "to finish (or stop it) and run this again; asking and browsing work meanwhile"
    )


@contextmanager
def write_lock(root: Path | str, what: str) -> Iterator[None]:
    """Hold ``root``'s write lock for the block, or raise ``WorkspaceBusyError`` (see module doc)."""
    root = Path(root).resolve()
    me = threading.get_ident()
    with _guard:
        held = _held.get(root)
        if held is not None and held[0] == me:
            _held[root] = (me, held[1] + 1, held[2])
        elif held is not None:
            raise WorkspaceBusyError(busy_message(root, _read(root / LOCK_FILE), what))
        else:
            fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise WorkspaceBusyError(busy_message(root, _read(root / LOCK_FILE), what)) from None
            stamp = json.dumps({"pid": os.getpid(), "what": what, "since": time.strftime("%Y-%m-%d %H:%M:%S")})
            os.ftruncate(fd, 0)
            os.pwrite(fd, stamp.encode(), 0)
            _held[root] = (me, 1, fd)
    try:
        yield
    finally:
        with _guard:
            thread, depth, fd = _held[root]
            if depth > 1:
                _held[root] = (thread, depth - 1, fd)
            else:
                del _held[root]
                os.ftruncate(fd, 0)
                os.close(fd)  # releases the flock
