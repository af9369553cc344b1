"""The KG4VD entity graph as query-time arrays, cached in memory per graph version.

Built from the canonical records the build writes (``kg4vd.entity`` and
``kg4vd.relation``, read with ``storage.load_entities`` / ``load_relations``): node ``i`` is an entity, every relation is an
undirected edge of weight 1 and parallel relations between the same pair add up
(``build_adjacency(combine="sum")``). Also kept: which entities are grounded on each
page, the relations incident to each node, and the row of each entity in the entity
vector index.

The view is rebuilt only when the graph changes, detected on every query by a few meta
lookups (O(1); counting the records instead costs ~0.2 s at 500k records): the version
stamps that ``vector_index.write_vectors`` / ``delete_vectors`` bump for the page, entity
and relation vectors — the build rewrites the vectors of every entity and relation it
adds or changes and deletes those of the ones it drops, and removing a document deletes
its page vectors — plus the build's own ``kg4vd.graph_version`` meta value if it sets one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...graph import IdIndex, build_adjacency
from ...store.base import Store
from ...types import Entity, Relation
from ..memo import StoreCache
from ..vector_index import VectorIndex
from ...models.bm25 import BM25
from .storage import VEC_ENTITY, VEC_PAGE, VEC_RELATION, entity_text, load_entities, load_relations

GRAPH_VERSION_META = "kg4vd.graph_version"

PageKey = tuple[str, int]


@dataclass
class GraphView:
    """Arrays over the entity graph; node order is ``ids`` order."""

    version: tuple
    ids: IdIndex
    entities: list[Entity]
    relations: list[Relation]
    adjacency: sp.csr_matrix
    endpoints: np.ndarray  # (m, 2) node indices of each relation
    page_nodes: dict[PageKey, np.ndarray]
    node_relations: list[np.ndarray]
    degree: np.ndarray
    _vector_rows: dict[int, np.ndarray] = field(default_factory=dict)
    _bm25: BM25 | None = None

    def __len__(self) -> int:
        return len(self.entities)

    def nodes_on_pages(self, pages: list[PageKey]) -> np.ndarray:
        """Nodes grounded on any of ``pages`` (sorted, unique)."""
        parts = [self.page_nodes[p] for p in pages if p in self.page_nodes]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(parts))

    def relations_within(self, nodes: np.ndarray) -> np.ndarray:
        """Indices of relations whose two endpoints are both in ``nodes``."""
        if not len(self.relations) or not len(nodes):
            return np.zeros(0, dtype=np.int64)
        inside = np.zeros(len(self.entities), dtype=bool)
        inside[nodes] = True
        incident = np.unique(np.concatenate([self.node_relations[int(n)] for n in nodes]))
        if not len(incident):
            return incident
        ends = self.endpoints[incident]
        return incident[inside[ends[:, 0]] & inside[ends[:, 1]]]

    def affinity(self, index: VectorIndex, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with every node's entity vector (0 for nodes without one)."""
        rows = self._rows(index)
        out = np.zeros(len(self.entities), dtype=np.float64)
        if len(index):
            scores = index.scores(query)
            have = rows >= 0
            out[have] = scores[rows[have]]
        return out

    def lexical(self, query: str) -> np.ndarray:
        """BM25 of the query against every node's indexed text ("name, type, description";
        the index is made on first use)."""
        if self._bm25 is None:
            self._bm25 = BM25([entity_text(e) for e in self.entities])
        return self._bm25.scores(query) if len(self.entities) else np.zeros(0)

    def _rows(self, index: VectorIndex) -> np.ndarray:
        rows = self._vector_rows.get(id(index))
        if rows is None:
            rows = np.fromiter((index.position.get(e.id, -1) for e in self.entities), dtype=np.int64,
                               count=len(self.entities))
            self._vector_rows.clear()  # one live index at a time; the old one is stale
            self._vector_rows[id(index)] = rows
        return rows


def graph_version(store: Store) -> tuple:
    """Cheap stamp that changes whenever the graph's vectors (hence records) change."""
    return tuple(store.get_meta(key) for key in (
        f"vectors_version:{VEC_PAGE}", f"vectors_version:{VEC_ENTITY}", f"vectors_version:{VEC_RELATION}",
        GRAPH_VERSION_META))


def build_view(entities: list[Entity], relations: list[Relation], version: tuple = ()) -> GraphView:
    """The arrays of a graph; relations with an unknown endpoint or a self-loop are skipped."""
    entities = sorted(entities, key=lambda e: e.id)
    ids = IdIndex(e.id for e in entities)
    kept: list[Relation] = []
    pairs: list[tuple[int, int]] = []
    for rel in sorted(relations, key=lambda r: r.id):
        s, t = ids.get(rel.source), ids.get(rel.target)
        if s is None or t is None or s == t:
            continue
        kept.append(rel)
        pairs.append((s, t))
    n = len(entities)
    endpoints = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    adjacency = build_adjacency(n, endpoints, combine="sum")
    pages: dict[PageKey, set[int]] = defaultdict(set)
    for i, entity in enumerate(entities):
        for mention in entity.mentions:
            pages[(mention.doc_id, mention.page)].add(i)
    incident: list[list[int]] = [[] for _ in range(n)]
    for r, (s, t) in enumerate(pairs):
        incident[s].append(r)
        incident[t].append(r)
    return GraphView(
        version=version, ids=ids, entities=entities, relations=kept, adjacency=adjacency,
        endpoints=endpoints,
        page_nodes={k: np.fromiter(sorted(v), dtype=np.int64) for k, v in pages.items()},
        node_relations=[np.asarray(x, dtype=np.int64) for x in incident],
        degree=np.diff(adjacency.indptr).astype(np.float64))


def load_view_from_store(store: Store, version: tuple = ()) -> GraphView:
    """Read every entity and relation record and build the view (no caching)."""
    return build_view(list(load_entities(store).values()), list(load_relations(store).values()), version)


_VIEWS = StoreCache(8)


def load_view(store: Store) -> GraphView:
    """The cached view of the store's graph, rebuilt when :func:`graph_version` changes (``memo``)."""
    version = graph_version(store)
    return _VIEWS.get(store, "view", version, lambda: load_view_from_store(store, version))
