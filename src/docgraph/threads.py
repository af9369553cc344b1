"""Query-time BLAS threads: answering a query runs the numeric libraries on few threads.

A query multiplies one vector by matrices of at most a few hundred thousand rows. Spread
over several threads such a product gains little on an idle machine and loses much on a
busy one, because OpenBLAS's threads wait for cores a
build or another query holds (measured in docs/results/2026-12-02-queries-on-one-blas-thread.md).

- ``query_threads(n)`` limits the BLAS libraries numpy and scipy loaded to ``n`` threads
  for the duration of a block (``retrieval.blas_threads``; ``Workspace.retrieve`` and
  ``Workspace.ask``). The limit is process-wide, as the libraries keep it; overlapping
  blocks are counted, and the libraries' own setting comes back when the last one ends.
  OpenBLAS honours a limit set from the main thread; set from another thread it may not
  take, so a process answering on worker threads pins it instead:
- ``pin_blas_threads(n)`` sets the limit for the rest of the process (``docgraph serve``
  calls it from the main thread before serving); ``query_threads`` then does nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_active = 0
_limiter: Any = None
_controller: Any = None
_pinned = False


def _blas() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries (made once; None without threadpoolctl)."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - a dependency; a trimmed install runs unlimited
            _controller = False
        else:
            import scipy.sparse  # noqa: F401 - scipy's own BLAS, loaded before the controller looks

            _controller = ThreadpoolController().select(user_api="blas")
    return _controller or None


@contextmanager
def query_threads(n: int) -> Iterator[None]:
    """Run the block with the BLAS libraries on ``n`` threads (``n`` ≤ 0: as they are)."""
    global _active, _limiter
    if n <= 0 or _pinned:
        yield
        return
    with _lock:
        if _active == 0 and (blas := _blas()) is not None:
            _limiter = blas.limit(limits=n)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None


def pin_blas_threads(n: int) -> None:
    """Keep the BLAS libraries on ``n`` threads from now on (``n`` ≤ 0: leave them); call it
    from the main thread."""
    global _pinned
    if n > 0 and (blas := _blas()) is not None:
        blas.limit(limits=n)
        _pinned = True


def blas_threads() -> list[int]:
    """The thread count of each loaded BLAS library now (for tests and diagnostics)."""
    blas = _blas()
    return [] if blas is None else [lib["num_threads"] for lib in blas.info()]
