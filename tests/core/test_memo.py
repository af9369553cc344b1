"""One bounded cache policy for the in-memory tables of a workspace, cleared by
``Workspace.close`` (issue 16)."""

from __future__ import annotations

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.methods import memo
from docgraph.methods.retrieval.vector_index import _INDEXES


class _Store:
    def __init__(self, root):
        self.root = root


def test_store_cache_is_bounded_versioned_and_forgets_a_workspace(tmp_path):
    table = memo.StoreCache(2)
    a, b = _Store(tmp_path / "a"), _Store(tmp_path / "b")
    loads = []
    get = lambda store, key, version: table.get(store, key, version, lambda: loads.append(key) or key)  # noqa: E731
    get(a, "x", 1), get(a, "x", 1), get(a, "y", 1), get(b, "z", 1)
    assert loads == ["x", "y", "z"] and table.keys_of(a) == ["y"]  # "x" was the least recently used
    get(a, "y", 2)
    assert loads[-1] == "y"  # a new version reloads
    memo.forget_store(a)
    assert table.keys_of(a) == [] and table.keys_of(b) == ["z"]


def test_closing_a_workspace_drops_its_vector_indexes(openstax_ws):
    ws = Workspace(openstax_ws, settings=load_settings(openstax_ws, environ={}))
    ws.build("dense")
    ws.retrieve("Mongol Empire", method="dense")
    assert _INDEXES.keys_of(ws.store)
    ws.close()
    assert not _INDEXES.keys_of(ws.store)


def test_a_loaded_table_is_out_of_the_cyclic_collectors_reach_and_still_freed(tmp_path):
    import gc
    import weakref

    class Table:
        pass

    cache, store = memo.StoreCache(1), _Store(tmp_path / "a")
    before = gc.get_freeze_count()
    table = cache.get(store, "t", 1, Table)
    assert gc.get_freeze_count() > before
    assert not any(o is table for o in gc.get_objects())  # frozen: full collections do not walk it
    gone = weakref.ref(table)
    del table
    cache.get(store, "u", 1, Table)  # the table of size 1 drops "t": reference counting frees it
    assert gone() is None
