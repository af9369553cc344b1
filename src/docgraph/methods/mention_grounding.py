"""Where each node of an entity graph is grounded, as arrays: its mentions' page components,
and — joined once with an evidence layer — the layer's chunk rows they fall in.

A hub entity of a long filing ("stock units", the company's own name) has thousands of
mentions. Reading its record and walking its mentions for every query that reaches it costs
more than the rest of the query, and keeping its mention objects in memory gives the
garbage collector hundreds of thousands of objects to walk. Here the mentions are integers
made once when the graph's view is made: a component is packed (document, page, component)
into one number, each mention is a run of components, each node a run of mentions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

MentionParts = tuple[str, int, Sequence[str]]  # (doc_id, page, component ids)
ChunkOf = Mapping[tuple[str, int, str], int]  # (doc_id, page, component id) -> chunk row

_PAGE_BITS = 24  # pages of a document: < 16.7 million
_COMPONENT_BITS = 20  # distinct component ids of a graph ("P3", "T1", "F2" …): < 1 million
_DOC_SHIFT = _PAGE_BITS + _COMPONENT_BITS


@dataclass(frozen=True)
class ChunkGrounding:
    """Per node, the chunk rows of each of its mentions in turn: a mention's rows sorted and
    without repeats, a row as often as mentions hit it. Node ``i``'s rows are
    ``rows[start[i]:start[i + 1]]``."""

    start: np.ndarray  # (n + 1,) int64
    rows: np.ndarray  # int64

    def of(self, node: int) -> np.ndarray:
        return self.rows[self.start[node] : self.start[node + 1]]

    def counts(self, nodes: np.ndarray) -> np.ndarray:
        """How many rows each of ``nodes`` has."""
        return self.start[nodes + 1] - self.start[nodes] if len(nodes) else np.zeros(0, dtype=np.int64)

    def rows_of(self, nodes: np.ndarray) -> np.ndarray:
        """The rows of ``nodes``, one node's after another's (``counts`` long each)."""
        return np.concatenate([self.of(int(n)) for n in nodes]) if len(nodes) else np.zeros(0, dtype=np.int64)

    def spread(self, nodes: np.ndarray, mass: np.ndarray, n_rows: int) -> np.ndarray:
        """Each node's ``mass`` split evenly over its rows (nodes with no positive mass or no
        rows give nothing); the sum per row, over ``n_rows`` rows."""
        out = np.zeros(n_rows, dtype=np.float64)
        nodes = np.asarray(nodes, dtype=np.int64)
        mass = np.asarray(mass, dtype=np.float64)
        counts = self.counts(nodes)
        keep = (mass > 0) & (counts > 0)
        if keep.any():
            np.add.at(out, self.rows_of(nodes[keep]), np.repeat(mass[keep] / counts[keep], counts[keep]))
        return out

    def mean(self, nodes: np.ndarray, row_values: np.ndarray, default: float = 1.0) -> np.ndarray:
        """Per node, the mean of ``row_values`` over its rows (a row as often as it is listed);
        ``default`` for a node with none."""
        nodes = np.asarray(nodes, dtype=np.int64)
        out = np.full(len(nodes), default, dtype=np.float64)
        counts = self.counts(nodes)
        held = counts > 0
        if held.any():
            values = np.asarray(row_values, dtype=np.float64)[self.rows_of(nodes[held])]
            firsts = np.cumsum(counts[held]) - counts[held]
            out[held] = np.add.reduceat(values, firsts) / counts[held]
        return out


@dataclass(frozen=True)
class MentionGrounding:
    """Every node's mentions as packed component keys (see the module docstring)."""

    docs: tuple[str, ...]  # document ids, by their number in the keys
    components: tuple[str, ...]  # component ids, by their number in the keys
    node_start: np.ndarray  # (n + 1,) into the mentions
    mention_start: np.ndarray  # (m + 1,) into ``keys``
    keys: np.ndarray  # packed (document, page, component) of each mention's components, int64

    @classmethod
    def build(cls, mentions_per_node: Iterable[Iterable[MentionParts]]) -> MentionGrounding:
        """From each node's mentions, in node order."""
        docs: dict[str, int] = {}
        components: dict[str, int] = {}
        node_start: list[int] = [0]
        mention_start: list[int] = [0]
        keys: list[int] = []
        for mentions in mentions_per_node:
            for doc_id, page, component_ids in mentions:
                if not 0 <= page < 1 << _PAGE_BITS:
                    raise ValueError(f"page {page} of {doc_id} is outside what a mention key can hold")
                base = (docs.setdefault(doc_id, len(docs)) << _DOC_SHIFT) | (page << _COMPONENT_BITS)
                keys.extend(base | components.setdefault(cid, len(components)) for cid in component_ids)
                mention_start.append(len(keys))
            node_start.append(len(mention_start) - 1)
        if len(components) >= 1 << _COMPONENT_BITS:
            raise ValueError(f"{len(components)} distinct component ids: more than mention keys can hold")
        return cls(
            docs=tuple(docs),
            components=tuple(components),
            node_start=np.asarray(node_start, dtype=np.int64),
            mention_start=np.asarray(mention_start, dtype=np.int64),
            keys=np.asarray(keys, dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.node_start) - 1

    def chunk_rows(self, chunk_of: ChunkOf, n_rows: int) -> ChunkGrounding:
        """Joined with a layer's ``chunk_of`` (its ``component_chunk``, rows below ``n_rows``):
        components no chunk holds are left out. One dictionary lookup per distinct component."""
        distinct, position = np.unique(self.keys, return_inverse=True)
        row_of = np.fromiter(
            (chunk_of.get(self._unpack(int(key)), -1) for key in distinct), dtype=np.int64, count=len(distinct)
        )
        rows = row_of[position]
        mention = np.repeat(np.arange(len(self.mention_start) - 1, dtype=np.int64), np.diff(self.mention_start))
        held = rows >= 0
        width = max(n_rows, 1)
        pairs = np.unique(mention[held] * width + rows[held])  # by mention, then row; no repeats
        start = np.searchsorted(pairs // width, self.node_start, side="left")  # node i: its mentions' pairs
        return ChunkGrounding(start=start.astype(np.int64), rows=(pairs % width).astype(np.int64))

    def _unpack(self, key: int) -> tuple[str, int, str]:
        doc, rest = divmod(key, 1 << _DOC_SHIFT)
        page, component = divmod(rest, 1 << _COMPONENT_BITS)
        return self.docs[doc], page, self.components[component]
