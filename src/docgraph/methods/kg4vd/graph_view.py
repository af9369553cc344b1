"""The KG4VD entity graph as query-time arrays, cached in memory per graph version.

Built from the canonical records the build writes (``kg4vd.entity`` and
``kg4vd.relation``): node ``i`` is an entity, every relation is an undirected edge of
weight 1 and parallel relations between the same pair add up
(``build_adjacency(combine="sum")``). Also kept: each entity's name, type, aliases and
indexed text, which entities are grounded on each page and on which page components
(``mention_grounding``: the chunks a query's entity mass moves to, without reading a hub's
thousands of mentions), the relations incident to each node, and the row of each entity
in the entity vector index.

The view holds arrays and names, not the records: an entity or relation object (its
description, every mention) is read from the store when a query needs it —
``entities_of(store, nodes)`` / ``relations_of(store, rels)``, one batched read, the
recently read ones kept in a bounded cache: a 10,000-page graph's records would otherwise
be gigabytes of objects per process. Building the view decodes the records as plain dicts
and keeps only the fields above, much faster than validating every record into a model.

The view is rebuilt only when the graph changes, detected on every query by a few meta
lookups (O(1); counting the records instead costs ~0.2 s at 500k records): the version
stamps that ``vector_index.write_vectors`` / ``delete_vectors`` bump for the page, entity
and relation vectors — the build rewrites the vectors of every entity and relation it
adds or changes and deletes those of the ones it drops, and removing a document deletes
its page vectors — plus the build's own ``kg4vd.graph_version`` meta value if it sets one.
A record read after the view was made that is gone from the store (a build merged or
dropped it in between) raises :class:`GraphChanged`; the caller reloads the view.
"""

from __future__ import annotations

import json
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import scipy.sparse as sp

from ... import errors
from ...graph import IdIndex, build_adjacency
from ...models.bm25 import BM25
from ...store.base import Store
from ...types import Entity, Relation
from ..disk_memo import load_or_build
from ..entity_graph import PageKey, grounded_nodes, incident_relations, nodes_on, relations_inside
from ..memo import StoreCache, store_root
from ..mention_grounding import ChunkGrounding, MentionGrounding
from ..retrieval.vector_index import VectorIndex
from .storage import NS_ENTITY, NS_RELATION, VEC_ENTITY, VEC_PAGE, VEC_RELATION, entity_text_of

if TYPE_CHECKING:
    from ..retrieval.evidence_layer import EvidenceLayer

GRAPH_VERSION_META = "kg4vd.graph_version"
RECORD_CACHE = 8192  # entity and relation objects a view keeps, each kind, least recently used dropped

T = TypeVar("T", Entity, Relation)


class GraphChanged(errors.GraphChanged):
    """A record the view lists is gone from the store: the graph changed since the view was
    made. ``view`` is that view (``load_view(store, stale=view)`` replaces it)."""

    view: GraphView | None = None


class _RecordCache(Generic[T]):
    """Objects of one record namespace by view position, read in batches, LRU-bounded."""

    def __init__(self, namespace: str, keys: list[str], parse: Callable[[Any], T], size: int = RECORD_CACHE):
        self.namespace, self.keys, self.size = namespace, keys, size
        self.parse: Callable[[Any], T] = parse
        self._items: OrderedDict[int, T] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, store: Store, positions: Iterable[int]) -> list[T]:
        wanted = [int(p) for p in positions]
        with self._lock:
            found = {p: self._items[p] for p in wanted if p in self._items}
            for p in found:
                self._items.move_to_end(p)
        missing = sorted(set(wanted) - found.keys())
        if missing:
            values = store.get_records(self.namespace, [self.keys[p] for p in missing])
            gone = [self.keys[p] for p in missing if self.keys[p] not in values]
            if gone:
                raise GraphChanged(f"{self.namespace} record {gone[0]!r} is gone: the graph changed during the query")
            fresh = {p: self.parse(values[self.keys[p]]) for p in missing}
            found.update(fresh)
            with self._lock:
                self._items.update(fresh)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return [found[p] for p in wanted]


@dataclass(eq=False)
class GraphView:
    """Arrays over the entity graph; node order is ``ids`` order, relation order ``relation_ids``."""

    version: tuple
    ids: IdIndex
    names: list[str]
    types: list[str]
    aliases: dict[int, list[str]]
    relation_ids: list[str]
    adjacency: sp.csr_matrix
    endpoints: np.ndarray  # (m, 2) node indices of each relation
    page_nodes: dict[PageKey, np.ndarray]
    node_relations: list[np.ndarray]
    degree: np.ndarray
    texts: list[str]  # each node's indexed text, "name, type, description" (``storage.entity_text``)
    grounding: MentionGrounding
    _bm25: BM25 | None = None
    _vector_rows: dict[int, np.ndarray] = field(default_factory=dict)
    _chunk_grounding: tuple[Callable[[], object], ChunkGrounding] | None = None
    _entities: _RecordCache[Entity] = field(init=False)
    _relations: _RecordCache[Relation] = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._entities = _RecordCache(NS_ENTITY, list(self.ids), Entity.model_validate)
        self._relations = _RecordCache(NS_RELATION, self.relation_ids, Relation.model_validate)

    def __getstate__(self) -> dict[str, Any]:
        """What a pickle keeps (``disk_memo``): the arrays and the lexical index, made now;
        locks and the per-process record caches are made afresh on load."""
        self.lexical(())
        return {k: v for k, v in self.__dict__.items() if k not in _PER_PROCESS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._vector_rows, self._lock, self._chunk_grounding = {}, threading.Lock(), None
        self.__post_init__()

    def __len__(self) -> int:
        return len(self.names)

    def entities_of(self, store: Store, nodes: Iterable[int]) -> list[Entity]:
        """The entity objects of ``nodes``, in order (read from ``store`` unless cached)."""
        return self._read(self._entities, store, nodes)

    def relations_of(self, store: Store, rels: Iterable[int]) -> list[Relation]:
        """The relation objects of relation indices ``rels``, in order."""
        return self._read(self._relations, store, rels)

    def _read(self, records: _RecordCache[T], store: Store, positions: Iterable[int]) -> list[T]:
        try:
            return records.read(store, positions)
        except GraphChanged as changed:
            changed.view = self
            raise

    def nodes_on_pages(self, pages: list[PageKey]) -> np.ndarray:
        """Nodes grounded on any of ``pages`` (sorted, unique)."""
        return nodes_on(self.page_nodes, pages)

    def node_pages(self) -> Iterator[tuple[int, PageKey]]:
        """Every (node, page it is grounded on), in node order."""
        pairs = [(int(n), key) for key, nodes in self.page_nodes.items() for n in nodes]
        pairs.sort(key=lambda pair: pair[0])
        return iter(pairs)

    def relations_within(self, nodes: np.ndarray) -> np.ndarray:
        """Indices of relations whose two endpoints are both in ``nodes``."""
        return relations_inside(self.endpoints, self.node_relations, nodes)

    def affinity(self, index: VectorIndex, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with every node's entity vector (0 for nodes without one)."""
        rows = self._rows(index)
        out = np.zeros(len(self), dtype=np.float64)
        if len(index):
            scores = index.scores(query)
            have = rows >= 0
            out[have] = scores[rows[have]]
        return out

    def affinity_of(self, index: VectorIndex, query: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """:meth:`affinity` of ``nodes`` only (a cost in proportion to them, not the graph)."""
        rows = self._rows(index)[np.asarray(nodes, dtype=np.int64)]
        out = np.zeros(len(rows), dtype=np.float64)
        have = rows >= 0
        if have.any():
            out[have] = index.matrix[rows[have]] @ np.asarray(query, dtype=np.float32).reshape(-1)
        return out

    @property
    def max_degree(self) -> float:
        return float(self.degree.max()) if len(self.degree) else 0.0

    def lexical(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 of the query (text, or its terms already read) against every node's indexed
        text (``texts``; the index is made on first use)."""
        with self._lock:
            if self._bm25 is None:
                self._bm25 = BM25(self.texts)
        return self._bm25.scores(query) if len(self) else np.zeros(0)

    def chunk_grounding(self, layer: EvidenceLayer) -> ChunkGrounding:
        """The chunk rows of ``layer`` each node's mentions fall in (joined on first use for
        this layer; one layer is remembered at a time, as the layer the queries read)."""
        with self._lock:
            held = self._chunk_grounding
            if held is None or held[0]() is not layer:
                held = (weakref.ref(layer), self.grounding.chunk_rows(layer.component_chunk, len(layer.chunks)))
                self._chunk_grounding = held
            return held[1]

    def _rows(self, index: VectorIndex) -> np.ndarray:
        rows = self._vector_rows.get(id(index))
        if rows is None:
            rows = np.fromiter((index.position.get(i, -1) for i in self.ids), dtype=np.int64, count=len(self))
            self._vector_rows.clear()  # one live index at a time; the old one is stale
            self._vector_rows[id(index)] = rows
        return rows


_PER_PROCESS = ("_vector_rows", "_entities", "_relations", "_lock", "_chunk_grounding")


def graph_version(store: Store) -> tuple:
    """Cheap stamp that changes whenever the graph's vectors (hence records) change."""
    return tuple(
        store.get_meta(key)
        for key in (
            f"vectors_version:{VEC_PAGE}",
            f"vectors_version:{VEC_ENTITY}",
            f"vectors_version:{VEC_RELATION}",
            GRAPH_VERSION_META,
        )
    )


def build_view(
    entities: Iterable[Mapping[str, Any]], relations: Iterable[Mapping[str, Any]], version: tuple = ()
) -> GraphView:
    """The view of entity and relation records (``Entity`` / ``Relation`` dumps, read once,
    in any order, not kept); relations with an unknown endpoint or a self-loop are skipped."""
    slim = sorted(
        (
            e["id"],
            e["name"],
            sys.intern(e["type"]),
            list(e.get("aliases") or ()),
            [(m["doc_id"], m["page"], m.get("component_ids") or ()) for m in e.get("mentions") or ()],
            entity_text_of(e["name"], e["type"], e.get("description", "")),
        )
        for e in entities
    )
    ids = IdIndex(e[0] for e in slim)
    kept: list[str] = []
    pairs: list[tuple[int, int]] = []
    for rid, source, target in sorted((r["id"], r["source"], r["target"]) for r in relations):
        s, t = ids.get(source), ids.get(target)
        if s is None or t is None or s == t:
            continue
        kept.append(rid)
        pairs.append((s, t))
    n = len(slim)
    endpoints = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    adjacency = build_adjacency(n, endpoints, combine="sum")
    return GraphView(
        version=version,
        ids=ids,
        names=[e[1] for e in slim],
        types=[e[2] for e in slim],
        aliases={i: e[3] for i, e in enumerate(slim) if e[3]},
        relation_ids=kept,
        adjacency=adjacency,
        endpoints=endpoints,
        page_nodes=grounded_nodes([(d, p) for d, p, _ in e[4]] for e in slim),
        node_relations=incident_relations(n, endpoints),
        degree=np.diff(adjacency.indptr).astype(np.float64),
        texts=[e[5] for e in slim],
        grounding=MentionGrounding.build(e[4] for e in slim),
    )


def load_view_from_store(store: Store, version: tuple = ()) -> GraphView:
    """Read every entity and relation record and build the view (no caching)."""
    return build_view(
        (value for _, value in store.iter_records(NS_ENTITY)),
        (value for _, value in store.iter_records(NS_RELATION)),
        version,
    )


_VIEWS = StoreCache(8)


def load_view(store: Store, stale: GraphView | None = None) -> GraphView:
    """The cached view of the store's graph, rebuilt when :func:`graph_version` changes
    (``memo``) or when ``stale`` — a view that met :class:`GraphChanged` — is the cached one."""
    version = graph_version(store)
    if stale is not None:
        _VIEWS.drop(store, "view", stale)
    stamp = json.dumps(version) if any(v is not None for v in version) else None
    return _VIEWS.get(
        store,
        "view",
        version,
        lambda: load_or_build(
            store_root(store), ("kg4vd", "view"), stamp, lambda: load_view_from_store(store, version)
        ),
    )
