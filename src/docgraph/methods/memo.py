"""Per-workspace in-memory tables of a method, kept until the method's data changes.

A method calls ``bump_version(store, name)`` whenever it writes or deletes derived data;
``cached(store, name, what, load)`` returns ``load()`` computed once per (workspace,
method, what) until the next bump. Bounded: an eval run visits many small workspaces,
and the oldest entries are dropped.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

from ..store.base import Store

_CACHE: dict[tuple[str, str, str], tuple[str | None, Any]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 32  # entries


def bump_version(store: Store, name: str) -> None:
    """Mark the method's derived data as changed, so in-memory tables reload."""
    store.set_meta(f"{name}:index_version", uuid.uuid4().hex)


def cached(store: Store, name: str, what: str, load: Any) -> Any:
    """``load()`` computed once per (workspace, method, what) until the method's data changes."""
    version = store.get_meta(f"{name}:index_version")
    key = (str(Path(store.root).resolve()), name, what)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
    value = load()
    with _CACHE_LOCK:
        _CACHE.pop(key, None)
        _CACHE[key] = (version, value)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
    return value
