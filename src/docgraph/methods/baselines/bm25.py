"""``bm25``: Okapi BM25 over the text chunks (``models.bm25``, the project's one BM25).

Build stores the chunks; the inverted index is made in memory from them on the first
query and reused until the index changes (tokenising ~10k chunks takes about a second).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...models.bm25 import BM25
from ...scoring import ranked
from ...types import Chunk
from ..base import MethodContext, register
from ..retrieval.evidence_layer import indexed_text
from .common import ChunkBaseline, cached
from .settings import BaselineSettings


@register("bm25")
class BM25Baseline(ChunkBaseline):
    name = "bm25"
    label = "BM25 (baseline)"
    order = 10

    def rank(
        self, ctx: MethodContext, query: str, chunks: list[Chunk], settings: BaselineSettings
    ) -> Iterator[tuple[int, float]]:
        index = cached(ctx.store, self.name, "bm25", lambda: BM25([indexed_text(c) for c in chunks]), persist=True)
        return ranked(index.scores(query), positive=True)
