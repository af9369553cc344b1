"""HVM query steps 1–2: concept anchors and one step of similarity-based propagation over
E_con (or, for the no-concept-graph ablation, entity anchors), giving the graph's chunk rows
B_graph and the entities and relations the Evidence shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...config import HVMSettings, RetrievalSettings
from ...errors import NotBuiltError
from ...scoring import top_k
from ...types import Entity, Evidence, Relation, ScoredEntity, ScoredRelation
from ..retrieval.hybrid import fuse_scores
from ..retrieval.question import read_question
from ..timing import Timer
from .index import HVMIndex


def anchors(
    scores: np.ndarray, k: int, theta: float, rank_by: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows with score ≥ ``theta``, ranked by ``rank_by`` (hybrid scores) when given,
    else by ``scores``; returns (rows, scores)."""
    if rank_by is None:
        rows, values = top_k(scores, k)
        keep = values >= theta
        return rows[keep], values[keep]
    eligible = np.flatnonzero(scores >= theta)
    rows, _ = top_k(np.asarray(rank_by, dtype=np.float64), k, eligible)
    return rows, scores[rows]


@dataclass
class Propagation:
    """R̂_q cut to ``k_r`` edges: (head row, label, tail row, label score), best first; the
    concepts they bring in (not anchors; row → label that reached it), in order; and the
    number of edges of the chosen labels that touched an anchor (before the cut)."""

    relations: list[tuple[int, str, int, float]]
    reached: dict[int, str]
    anchored: int


def propagate(
    anchor_rows: set[int],
    label_scores: np.ndarray,
    labels: list[str],
    edges: Mapping[str, list[tuple[int, int]]],
    concept_scores: np.ndarray,
    k_r: int,
) -> Propagation:
    """One step of similarity-based propagation (module docstring, step 2): the top-``k_r``
    labels by ``label_scores``, their edges touching ``anchor_rows``, the best ``k_r`` of those."""
    label_rows, top_scores = top_k(label_scores, k_r)
    touching: list[tuple[float, float, int, tuple[int, str, int, float]]] = []
    for row, score in zip(label_rows, top_scores):
        label = labels[int(row)]
        for head, tail in edges.get(label, []):
            if head in anchor_rows or tail in anchor_rows:
                both = (float(concept_scores[head]) + float(concept_scores[tail])) / 2
                touching.append((-float(score), -both, len(touching), (head, label, tail, float(score))))
    kept = [edge for *_, edge in sorted(touching)[: max(0, k_r)]]
    reached: dict[int, str] = {}
    for head, label, tail, _ in kept:
        for other in (head, tail):
            if other not in anchor_rows and other not in reached:
                reached[other] = label
    return Propagation(relations=kept, reached=reached, anchored=len(touching))


def _concept_entity(index: HVMIndex, row: int, score: float, via: str = "") -> ScoredEntity:
    info = index.concept_info[row]
    description = f"concept with {info['entities']} entities, {info['chunks']} supporting chunks"
    return ScoredEntity(
        entity=Entity(
            id=f"concept:{info['name']}",
            name=info["name"],
            type="concept",
            description=description + (f"; reached through {via}" if via else ""),
        ),
        score=float(score),
    )


def concept_evidence(
    index: HVMIndex,
    query: str,
    qvec: np.ndarray,
    settings: HVMSettings,
    rs: RetrievalSettings,
    evidence: Evidence,
    timer: Timer,
) -> np.ndarray:
    """Steps 1–2: anchors A_q (hybrid concept scores among concepts reaching theta), one
    propagation step to Â_q, and the chunk rows of I_con over Â_q (B_graph before its cut).
    Adds the concepts and relations to ``evidence`` (and a note when the cut drops edges)."""
    graph_rows = np.zeros(0, dtype=np.int64)
    concept_scores = index.concept_vectors.scores(qvec) if len(index.concept_vectors) else np.zeros(0)
    a_rows, a_scores = anchors(
        concept_scores,
        settings.k_c,
        settings.theta,
        fuse_scores(index.concept_bm25.scores(read_question(query, rs).tokens), concept_scores, rs)
        if rs.seeds == "hybrid" and len(concept_scores)
        else None,
    )
    evidence.entities = [_concept_entity(index, int(r), s) for r, s in zip(a_rows, a_scores)]
    timer.lap("anchors")
    anchor_set = set(int(r) for r in a_rows)
    expanded = dict.fromkeys(anchor_set)
    if anchor_set and len(index.relation_vectors):
        step = propagate(
            anchor_set,
            index.relation_vectors.scores(qvec),
            index.relation_vectors.keys,
            index.edges,
            concept_scores,
            settings.k_r,
        )
        for head, label, tail, score in step.relations:
            h_name, t_name = index.concept_info[head]["name"], index.concept_info[tail]["name"]
            evidence.relations.append(
                ScoredRelation(
                    relation=Relation(
                        id=f"{h_name}\t{label}\t{t_name}",
                        source=f"concept:{h_name}",
                        target=f"concept:{t_name}",
                        label=label,
                    ),
                    score=score,
                    source_name=h_name,
                    target_name=t_name,
                )
            )
        for other, label in step.reached.items():
            expanded[other] = None
            evidence.entities.append(_concept_entity(index, other, concept_scores[other], label))
        if step.anchored > len(step.relations):
            evidence.notes.append(
                f"propagation: {len(step.relations)} of {step.anchored} relations touching "
                f"the anchors kept (k_r={settings.k_r})"
            )
    if expanded:
        graph_rows = np.unique(np.concatenate([index.icon[c] for c in expanded]))
    timer.lap("propagate")
    if not len(a_rows):
        evidence.notes.append(f"no concept reached theta={settings.theta}; evidence from chunk retrieval only")
    return graph_rows


def entity_evidence(
    index: HVMIndex, qvec: np.ndarray, settings: HVMSettings, evidence: Evidence, timer: Timer
) -> np.ndarray:
    """The no-concept-graph ablation: the top-``k_c`` entities reaching theta as anchors, their
    I_fac chunk rows as B_graph; no propagation."""
    if index.entity_vectors is None:
        raise NotBuiltError(
            "the no-concept-graph ablation needs entity vectors: set hvm.concept_graph = false "
            "in docgraph.toml (or DOCGRAPH_HVM__CONCEPT_GRAPH=false) and run "
            "`docgraph build --method hvm`"
        )
    graph_rows = np.zeros(0, dtype=np.int64)
    e_rows, e_scores = anchors(index.entity_vectors.scores(qvec), settings.k_c, settings.theta)
    for row, score in zip(e_rows, e_scores):
        data = index.entity_rows[int(row)]
        evidence.entities.append(
            ScoredEntity(
                entity=Entity(
                    id=index.entity_vectors.keys[int(row)],
                    name=data["name"],
                    type=data.get("concept", ""),
                    description=data.get("description", ""),
                ),
                score=float(score),
            )
        )
    if len(e_rows):
        graph_rows = np.unique(np.concatenate([index.entity_support[int(r)] for r in e_rows]))
    timer.lap("anchors")
    return graph_rows
