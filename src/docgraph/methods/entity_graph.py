"""The entity graph a method lets people browse (``capabilities.GraphBrowse``), as arrays.

``EntityGraph`` is what the web app's graph panel reads: node ``i`` is an entity (``ids``,
``names``, ``aliases``, ``degree``), ``adjacency`` its undirected edges, relation ``r`` an
edge between ``endpoints[r]``; entity and relation objects come from ``entities_of`` /
``relations_of`` (a view may read them from the store). KG4VD's query-time view is one;
``MemoryEntityGraph`` is one over objects held in memory, for a method whose browsable
graph is made from its records on request (HVM's). The helpers below are the array work
both share: which nodes each page grounds, which relations touch each node, and which
relations lie inside a set of nodes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from ..graph import IdIndex, build_adjacency
from ..store.base import Store
from ..types import Entity, PageKey, Relation


@runtime_checkable
class EntityGraph(Protocol):
    """What a browsable entity graph offers (``GraphBrowse.graph_view`` returns one)."""

    @property
    def ids(self) -> IdIndex: ...

    @property
    def names(self) -> Sequence[str]: ...

    @property
    def aliases(self) -> Mapping[int, list[str]]: ...

    @property
    def adjacency(self) -> sp.csr_matrix: ...

    @property
    def degree(self) -> np.ndarray: ...

    def __len__(self) -> int: ...

    def entities_of(self, store: Store, nodes: Iterable[int]) -> list[Entity]:
        """The entity objects of ``nodes``, in order."""

    def relations_of(self, store: Store, rels: Iterable[int]) -> list[Relation]:
        """The relation objects of relation indices ``rels``, in order."""

    def relations_within(self, nodes: np.ndarray) -> np.ndarray:
        """Indices of relations whose two endpoints are both in ``nodes``."""

    def nodes_on_pages(self, pages: list[PageKey]) -> np.ndarray:
        """Nodes grounded on any of ``pages`` (sorted, unique)."""


def grounded_nodes(grounded: Iterable[Iterable[PageKey]]) -> dict[PageKey, np.ndarray]:
    """Page → the nodes grounded on it (sorted), given each node's pages in node order."""
    pages: dict[PageKey, set[int]] = defaultdict(set)
    for node, keys in enumerate(grounded):
        for key in keys:
            pages[key].add(node)
    return {k: np.fromiter(sorted(v), dtype=np.int64) for k, v in pages.items()}


def incident_relations(n_nodes: int, endpoints: np.ndarray) -> list[np.ndarray]:
    """Per node, the indices of the relations (rows of ``endpoints``) that touch it."""
    incident: list[list[int]] = [[] for _ in range(n_nodes)]
    for r, (s, t) in enumerate(endpoints.tolist()):
        incident[s].append(r)
        incident[t].append(r)
    return [np.asarray(x, dtype=np.int64) for x in incident]


def nodes_on(page_nodes: Mapping[PageKey, np.ndarray], pages: list[PageKey]) -> np.ndarray:
    """Nodes grounded on any of ``pages`` (sorted, unique)."""
    parts = [page_nodes[p] for p in pages if p in page_nodes]
    if not parts:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(parts))


def relations_inside(endpoints: np.ndarray, node_relations: Sequence[np.ndarray], nodes: np.ndarray) -> np.ndarray:
    """Indices of relations whose two endpoints are both in ``nodes``."""
    if not len(endpoints) or not len(nodes):
        return np.zeros(0, dtype=np.int64)
    inside = np.zeros(len(node_relations), dtype=bool)
    inside[nodes] = True
    incident = np.unique(np.concatenate([node_relations[int(n)] for n in nodes]))
    if not len(incident):
        return incident
    ends = endpoints[incident]
    return incident[inside[ends[:, 0]] & inside[ends[:, 1]]]


class MemoryEntityGraph:
    """An ``EntityGraph`` over entity and relation objects kept in memory; relations with an
    unknown endpoint or a self-loop are left out, parallel ones add up in ``adjacency``."""

    def __init__(self, entities: list[Entity], relations: Iterable[Relation]):
        self.entities = entities
        self.ids = IdIndex(e.id for e in entities)
        self.relations = [
            r for r in relations if r.source in self.ids and r.target in self.ids and r.source != r.target
        ]
        self.names = [e.name for e in self.entities]
        self.aliases = {i: list(e.aliases) for i, e in enumerate(self.entities) if e.aliases}
        pairs = [(self.ids.index(r.source), self.ids.index(r.target)) for r in self.relations]
        self.endpoints = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self.adjacency = build_adjacency(len(self.entities), self.endpoints, combine="sum")
        self.degree = np.diff(self.adjacency.indptr).astype(np.float64)
        self.page_nodes = grounded_nodes([(m.doc_id, m.page) for m in e.mentions] for e in self.entities)
        self.node_relations = incident_relations(len(self.entities), self.endpoints)

    def __len__(self) -> int:
        return len(self.entities)

    def entities_of(self, store: Store, nodes: Iterable[int]) -> list[Entity]:
        return [self.entities[int(n)] for n in nodes]

    def relations_of(self, store: Store, rels: Iterable[int]) -> list[Relation]:
        return [self.relations[int(r)] for r in rels]

    def relations_within(self, nodes: np.ndarray) -> np.ndarray:
        return relations_inside(self.endpoints, self.node_relations, nodes)

    def nodes_on_pages(self, pages: list[PageKey]) -> np.ndarray:
        return nodes_on(self.page_nodes, pages)
