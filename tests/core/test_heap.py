"""``docgraph.heap.release_free_heap``: freed memory inside a fragmented heap goes back to the
system (glibc), which malloc would otherwise keep as resident memory."""

from __future__ import annotations

import psutil
import pytest

from docgraph.heap import _malloc_trim, release_free_heap


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
    from docgraph.heap import resident_mb

    measured = resident_mb()
    if measured is None:
        pytest.skip("no /proc/self/statm here")
    assert abs(measured - psutil.Process().memory_info().rss / 2**20) < 20
