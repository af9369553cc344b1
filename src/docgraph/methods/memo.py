"""In-memory tables derived from a workspace's store: one bounded, versioned cache policy.

Every table a method keeps in memory (``cached`` below, the vector indexes of
``vector_index.load_index``, KG4VD's graph view) is a ``StoreCache``: entries are keyed by
the workspace folder and a name, carry the version stamp they were computed at (a value
the store keeps in its meta table, changed by every write of the data), are reloaded when
the stamp changes, and the least recently used are dropped past the table's size (an eval
run visits many small workspaces). ``forget_store(store)`` drops every table's entries of
a workspace; ``Workspace.close`` calls it.

A loaded table is moved out of the cyclic garbage collector's reach (``gc.freeze``): a
workspace's tables hold millions of small objects (chunks, postings, graph ids) that live
as long as the workspace, and a full collection walking them all stalled one query in
twenty by a quarter of a second on the 4,071-page FinanceBench library. Frozen objects are
still freed by reference counting when their table is dropped.

A method calls ``bump_version(store, name)`` whenever it writes or deletes derived data;
``cached(store, name, what, load)`` returns ``load()`` computed once per (workspace,
method, what) until the next bump.
"""

from __future__ import annotations

import gc
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..store.base import Store
from .disk_memo import load_or_build

_TABLES: list[StoreCache] = []


def store_root(store: Store) -> str:
    """The workspace folder of ``store``, absolute and symlink-free (the key of its tables)."""
    return _resolved(str(store.root))


@lru_cache(maxsize=256)
def _resolved(root: str) -> str:
    """The absolute, symlink-free form of a workspace folder (resolving it costs ~0.2 ms of
    system calls, and every cached-table lookup of every query needs it)."""
    return str(Path(root).resolve())


class StoreCache:
    """A bounded LRU table of values computed from stores, each valid for one version stamp."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[tuple[str, Hashable], tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()
        _TABLES.append(self)

    def get(self, store: Store, key: Hashable, version: Any, load: Callable[[], Any]) -> Any:
        """The value of ``key`` for this store at ``version``: cached, or ``load()`` (then kept)."""
        full = (store_root(store), key)
        with self._lock:
            hit = self._items.get(full)
            if hit is not None and hit[0] == version:
                self._items.move_to_end(full)
                return hit[1]
        value = load()
        gc.freeze()  # see the module docstring: the tables live long, collections need not walk them
        with self._lock:
            self._items[full] = (version, value)
            self._items.move_to_end(full)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def drop(self, store: Store, key: Hashable, value: Any) -> None:
        """Forget ``key``'s entry for this store if it still holds ``value`` (found stale by its user)."""
        full = (store_root(store), key)
        with self._lock:
            hit = self._items.get(full)
            if hit is not None and hit[1] is value:
                del self._items[full]

    def keys_of(self, store: Store) -> list[Hashable]:
        root = store_root(store)
        with self._lock:
            return [key for r, key in self._items if r == root]

    def forget(self, root: str) -> None:
        with self._lock:
            for full in [k for k in self._items if k[0] == root]:
                del self._items[full]


def forget_store(store: Store) -> None:
    """Drop every in-memory table of this workspace (``Workspace.close``)."""
    root = store_root(store)
    for table in _TABLES:
        table.forget(root)


_METHOD_TABLES = StoreCache(32)


def bump_version(store: Store, name: str) -> None:
    """Mark the method's derived data as changed, so in-memory tables reload."""
    store.set_meta(f"{name}:index_version", uuid.uuid4().hex)


def cached(
    store: Store, name: str, what: str, load: Any, *, persist: bool = False, depends_on: Sequence[str] = ()
) -> Any:
    """``load()`` computed once per (workspace, method, what) until the method's data changes;
    with ``persist`` also kept on disk for later processes (``disk_memo.load_or_build``; its
    ``depends_on`` files, such as a user's lexicons, invalidate it when they change)."""
    version = store.get_meta(f"{name}:index_version")
    if persist:
        build = load

        def load() -> Any:
            return load_or_build(store_root(store), (name, what), version, build, depends_on=depends_on)

    return _METHOD_TABLES.get(store, (name, what), version, load)
