"""``docgraph.memory.release_free_heap``: freed memory inside a fragmented heap goes back to the
system (glibc), which malloc would otherwise keep as resident memory."""

from __future__ import annotations

import psutil
import pytest

from docgraph.memory import _malloc_trim, release_free_heap


@pytest.mark.skipif(_malloc_trim() is None, reason="the C library has no malloc_trim (not glibc)")
def test_freed_holes_in_the_heap_are_returned():
    process = psutil.Process()
    # 100 KB blocks sit in the heap (under malloc's mmap threshold); keeping every tenth
    # leaves the freed ones as holes that freeing alone cannot give back
    blocks = [bytearray(100_000) for _ in range(3000)]
    kept = blocks[::10]
    del blocks
    before = process.memory_info().rss
    assert release_free_heap()
    after = process.memory_info().rss
    assert before - after > 100 * 2**20, (before >> 20, after >> 20)
    assert len(kept) == 300


def test_resident_memory_is_this_processes():
    from docgraph.memory import resident_mb

    measured = resident_mb()
    if measured is None:
        pytest.skip("no /proc/self/statm here")
    assert abs(measured - psutil.Process().memory_info().rss / 2**20) < 20


def test_growth_trim_trims_only_once_memory_has_grown_past_its_allowance(monkeypatch):
    import docgraph.memory as memory

    resident = iter(
        [
            500.0,
            500.0,  # first call: always trims, then reads the level (500)
            540.0,  # +40 MB: within the 64 MB allowance
            600.0,
            520.0,  # +100 MB: trims, the new level is 520
            580.0,
        ]
    )  # +60 MB over 520: within
    trims: list[int] = []
    monkeypatch.setattr(memory, "resident_mb", lambda: next(resident))
    monkeypatch.setattr(memory, "release_free_heap", lambda: trims.append(1) or True)
    trim = memory.GrowthTrim(64.0)
    assert [trim.after_work() for _ in range(4)] == [True, False, True, False]
    assert len(trims) == 2 and trim.level == 520.0


def test_growth_trim_trims_every_time_where_memory_cannot_be_read(monkeypatch):
    import docgraph.memory as memory

    trims: list[int] = []
    monkeypatch.setattr(memory, "resident_mb", lambda: None)
    monkeypatch.setattr(memory, "release_free_heap", lambda: trims.append(1) or True)
    trim = memory.GrowthTrim()
    assert all(trim.after_work() for _ in range(3)) and len(trims) == 3
