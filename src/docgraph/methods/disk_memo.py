"""In-memory tables kept on disk between processes, so that a fresh process does not
rebuild them.

A one-shot ``docgraph ask`` or ``search`` starts a new process, and before its first
answer it builds the tables every query reads (the structural layer's BM25 indexes,
similarity links and label index). On a library of thousands of pages that costs more
than the query itself by three orders of magnitude. ``load_or_build`` keeps such a table as a
file in the user's cache folder (``DOCGRAPH_TABLE_CACHE``, empty to turn it off; else
``$XDG_CACHE_HOME/docgraph/tables``) and loads it in a later process.

A file is valid for exactly one (workspace folder, table, data version stamp, docgraph
code, dependency files) tuple: the version stamp changes with every write of the data
(``memo.bump_version``), the code fingerprint with any installed source file of the package,
and a dependency file (a user's lexicon) with its size or modification time. Anything
else — a file from another version, a truncated or unreadable one — is ignored and the
table built afresh. Files live in the user's own cache folder, never in a workspace, so
a workspace received from someone else cannot bring one. Writes go through a temporary
file and a rename, so concurrent processes never read half a file; the folder is kept
under its size budget by dropping the files used least recently.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import time
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from ..user_cache import user_cache_dir

log = logging.getLogger(__name__)

T = TypeVar("T")
CACHE_ENV = "DOCGRAPH_TABLE_CACHE"
BUDGET_ENV = "DOCGRAPH_TABLE_CACHE_MB"  # the folder's size budget in MiB
DEFAULT_BUDGET_MB = 4096
MIN_BUILD_SECONDS = 0.5  # tables built faster than this are not worth a file
_SUFFIX = ".table"


def load_or_build(
    root: str,
    key: Hashable,
    version: str | None,
    build: Callable[[], T],
    *,
    depends_on: Sequence[str | Path] = (),
    min_seconds: float | None = None,
) -> T:
    """The table ``key`` of the workspace at ``root`` (an absolute path) at data ``version``:
    read from its file when one is valid, else ``build()`` — written to a file when it took at
    least ``min_seconds`` (default ``MIN_BUILD_SECONDS``). Without a version stamp (no data
    written yet) or a cache folder it is ``build()``."""
    folder = user_cache_dir("tables", CACHE_ENV)
    if folder is None or version is None:
        return build()
    path = folder / f"{_name(root, key)}{_SUFFIX}"
    header = {
        "root": root,
        "key": repr(key),
        "version": version,
        "code": code_fingerprint(),
        "files": _stats(depends_on),
    }
    found = _read(path, header)
    if found is not None:
        return found[0]
    started = time.perf_counter()
    value = build()
    if time.perf_counter() - started >= (MIN_BUILD_SECONDS if min_seconds is None else min_seconds):
        _write(path, header, value)
        _trim(folder, _budget_bytes())
    return value


def _name(root: str, key: Hashable) -> str:
    return hashlib.sha256(f"{root}\0{key!r}".encode()).hexdigest()[:40]


def _stats(files: Sequence[str | Path]) -> list[list[Any]]:
    """Each dependency file as (path, size, mtime); a missing file as (path, None, None)."""
    out: list[list[Any]] = []
    for name in files:
        try:
            st = os.stat(name)
            out.append([str(name), st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([str(name), None, None])
    return out


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of every file of the installed docgraph package (path, size, mtime): any change
    to the code or its bundled data makes the files written before it invalid."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        st = path.stat()
        digest.update(f"{path.relative_to(package)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _read(path: Path, header: dict[str, Any]) -> tuple[Any] | None:
    """``(value,)`` from ``path`` when its header equals ``header``; None otherwise."""
    try:
        with open(path, "rb") as fh:
            if json.loads(fh.readline()) != header:
                return None
            value = pickle.load(fh)
        os.utime(path)  # recently used: trimmed last
        return (value,)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - any unreadable file only means "build it again"
        log.debug("table cache: ignoring %s (%s)", path, exc)
        return None


def _write(path: Path, header: dict[str, Any], value: Any) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(json.dumps(header).encode() + b"\n")
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception as exc:  # noqa: BLE001 - a cache that cannot be written is only slower
        log.debug("table cache: cannot write %s (%s)", path, exc)
        tmp.unlink(missing_ok=True)


def _budget_bytes() -> int:
    try:
        return int(float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET_MB)) * 2**20)
    except ValueError:
        return DEFAULT_BUDGET_MB * 2**20


def _trim(folder: Path, budget: int) -> None:
    """Drop the least recently used table files until the folder is within ``budget`` bytes."""
    files = []
    for path in folder.glob(f"*{_SUFFIX}"):
        try:
            st = path.stat()
        except OSError:
            continue
        files.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files, key=lambda f: f[0]):
        if total <= budget:
            break
        path.unlink(missing_ok=True)
        total -= size
