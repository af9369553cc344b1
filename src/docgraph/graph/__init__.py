"""Graph algorithms shared by the methods: adjacency building, bounded subgraphs,
Personalized PageRank and entity-merging helpers. Pure functions over arrays; no I/O."""

from .adjacency import IdIndex, build_adjacency, degrees
from .merge import MergedRelation, MergeResult, merge_entities
from .ppr import personalization_vector, personalized_pagerank, ppr_for_mode, ppr_on_subgraph
from .subgraph import bounded_subgraph
from .unionfind import UnionFind

__all__ = [
    "IdIndex",
    "build_adjacency",
    "degrees",
    "bounded_subgraph",
    "personalization_vector",
    "personalized_pagerank",
    "ppr_on_subgraph",
    "ppr_for_mode",
    "UnionFind",
    "merge_entities",
    "MergeResult",
    "MergedRelation",
]
