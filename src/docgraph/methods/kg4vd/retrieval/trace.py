"""What one KG4VD query computed, stage by stage (the Evidence, tests and benchmarks read it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ....config import PPRModeSettings
from ....types import ScoredEntity, ScoredPage, ScoredRelation
from ...retrieval.evidence_layer import PageRanking
from ..graph_view import PageKey

DEFAULT_RERANK_WEIGHT = 0.5
RELATION_POOL = 3  # relations reranked: at most this many times the mode's k_relations


@dataclass
class RetrievalTrace:
    """Everything the retrieval computed, for the Evidence, tests and benchmarks."""

    mode: str
    settings: PPRModeSettings
    anchors: list[tuple[PageKey, float]] = field(default_factory=list)
    seeds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    seed_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    subgraph: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ppr: np.ndarray = field(default_factory=lambda: np.zeros(0))
    candidates: dict[str, int] = field(default_factory=dict)
    pages: list[ScoredPage] = field(default_factory=list)
    entities: list[ScoredEntity] = field(default_factory=list)
    relations: list[ScoredRelation] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ranking: PageRanking | None = None  # every page's flat, diffused and prior score (step 4)
    chunk_seeds: np.ndarray = field(default_factory=lambda: np.zeros(0))  # step 4's entity mass per layer chunk row
