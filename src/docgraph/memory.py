"""Process memory: its resident size, and giving freed heap memory back to the operating system.

glibc's malloc keeps memory a process has freed for its own later use, so a long-lived
process that handles many large, short-lived buffers (page images, OCR and layout network
tensors) holds its peak usage, fragmented, as resident memory. ``release_free_heap`` asks
malloc to return what it can (``malloc_trim(0)``).
Elsewhere (musl, macOS, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from functools import lru_cache


@lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_heap() -> bool:
    """Return the heap's free memory to the system; True when some was returned."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def resident_mb() -> float | None:
    """This process's resident memory in MB (Linux ``/proc/self/statm``); None elsewhere."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class GrowthTrim:
    """``release_free_heap`` when it can matter: after a unit of work (a page), trim only once
    resident memory has grown ``growth_mb`` past where the last trim left it. Trimming after
    every page handed back memory the next page faulted in again, costing CPU and page faults
    (docs/results, 2026-12-04 "page workers that trim less often"). Where resident memory
    cannot be read, every call trims."""

    def __init__(self, growth_mb: float = 64.0):
        self.growth_mb = growth_mb
        self.level: float | None = None  # resident MB right after the last trim

    def after_work(self) -> bool:
        """Trim if grown past the allowance; True when it trimmed."""
        resident = resident_mb()
        if resident is not None and self.level is not None and resident <= self.level + self.growth_mb:
            return False
        release_free_heap()
        self.level = resident_mb()
        return True
