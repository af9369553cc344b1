"""Cross-page connection: page-level entities join the canonical, document-level graph.

``connect(...)`` takes the page graphs not yet connected and the canonical graph so far,
read by id (``canonical.CanonicalGraph``: every entity's vector, but only the entities and
relations that steps 2–4 look at or change):
1. every page-local entity becomes an *instance* ``"<doc>:<page>:<local id>"``, every
   page-local relation a relation between instances;
2. with a judge (the "no cross-page connection" ablation passes none): each instance's
   top-``top_k`` most similar entities by embedding — other instances and canonical
   entities — that lie on OTHER pages are its candidates, judged ``same`` / ``related`` /
   ``unrelated`` in one judge call per instance. How candidates are chosen is the
   judge's (``candidate_policy``):
   - the model judge (the paper's): every instance against its own top ``top_k``, so a
     pair may be judged from both sides (a ``same`` from either merges), less the
     candidates under its similarity floor that share no normalised name or alias with
     it — a cosine calibrated by the pool's median (``scoring.calibrated_cut``), applied
     once the pool has ``FLOOR_MIN_POOL`` entities (the median of a few pairs calibrates
     nothing, and a small pool costs little to judge in full);
   - the offline judge: its candidate sets as its rules were tuned on — each unordered
     pair judged once (for the first instance that lists it), no floor;
3. ``same`` pairs are unioned (``graph.merge.merge_entities``): one canonical node per
   group — an existing canonical id when the group has one, else the instance id of its
   first page-local member; relations are redirected to canonical ids, self-loops and
   duplicate edges (same source, label, target) removed; every mention is kept, and the
   other names become aliases;
4. ``related`` pairs become ``related_to`` edges with ``cross_page=True`` between the two
   canonical entities, unless such an edge already links them.
The result says which canonical entities and relations to write and which ids to
delete; nothing is written here (build.py does, in one transaction).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...graph.merge import merge_entities
from ...scoring import calibrated_cut
from ...types import Entity, Mention, Relation, Usage
from .canonical import CanonicalGraph
from .judge import Judge, JudgeItem, candidate_policy, entity_names
from .storage import StoredPageGraph

CROSS_PAGE_LABEL = "related_to"
FLOOR_MIN_POOL = 100  # entities the pool needs before the model judge's similarity floor applies
EmbedFn = Callable[[Sequence[Entity]], np.ndarray]
"""L2-normalised entity-index rows for entities (same space as the stored entity vectors)."""


@dataclass
class ConnectResult:
    entities: dict[str, Entity] = field(default_factory=dict)  # canonical entities to (re)write
    deleted_entities: list[str] = field(default_factory=list)
    relations: dict[str, Relation] = field(default_factory=dict)  # canonical relations to (re)write
    deleted_relations: list[str] = field(default_factory=list)
    canonical: dict[str, str] = field(default_factory=dict)  # instance id → canonical id
    pages: int = 0  # page graphs connected
    verdicts: Counter = field(default_factory=Counter)  # label → number of judged (entity, candidate) pairs
    below_floor: int = 0  # top-k candidates not sent to the judge: under its similarity floor
    usage: Usage = field(default_factory=Usage)
    merged_earlier: int = 0  # instances merged away in batches absorbed before (``absorb``)
    names: dict[str, str] = field(default_factory=dict)  # id → name of every entity read or merged here

    @property
    def merged_instances(self) -> int:
        """Page-local entities that were merged into another entity."""
        return self.merged_earlier + len(self.canonical) - len(set(self.canonical.values()))

    def absorb(self, later: ConnectResult) -> ConnectResult:
        """The totals of this batch's result and a later batch's, for reporting (what to write
        is each batch's own: the later one already saw this one's graph)."""
        return ConnectResult(
            pages=self.pages + later.pages,
            verdicts=self.verdicts + later.verdicts,
            below_floor=self.below_floor + later.below_floor,
            usage=self.usage.add(later.usage),
            merged_earlier=self.merged_instances + later.merged_instances,
        )


def page_instances(graphs: Iterable[StoredPageGraph]) -> tuple[list[Entity], list[Relation], int]:
    """Step 1: the instances and instance relations of ``graphs``, and the number of page
    graphs. They share their nested values (mentions, aliases) with the page graphs, which
    nothing changes afterwards, so ``graphs`` may be a generator: a page graph need not
    outlive its instances."""
    entities: list[Entity] = []
    relations: list[Relation] = []
    pages = 0
    for g in graphs:
        pages += 1
        entities += [e.model_copy(update={"id": g.instance_id(e.id)}) for e in g.entities]
        relations += [
            r.model_copy(
                update={"id": g.instance_id(r.id), "source": g.instance_id(r.source), "target": g.instance_id(r.target)}
            )
            for r in g.relations
        ]
    return entities, relations, pages


class RowStack:
    """Consecutive row blocks read as one matrix, without copying them into one: what
    ``candidate_pairs`` and ``scoring.median_cosine`` ask of the pool's vectors (``shape``,
    rows by an index array, ``@``). The stored pool's block is the entity index's own matrix."""

    def __init__(self, parts: Sequence[np.ndarray]):
        self.parts = [p for p in parts if len(p)]
        self.starts = np.cumsum([0] + [len(p) for p in self.parts])
        self.shape = (int(self.starts[-1]), self.parts[0].shape[1] if self.parts else 0)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows)
        part = np.searchsorted(self.starts, rows, side="right") - 1
        out = np.empty((len(rows), self.shape[1]), dtype=np.float32)
        for p, block in enumerate(self.parts):
            mine = part == p
            out[mine] = block[rows[mine] - self.starts[p]]
        return out

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        out = np.empty((self.shape[0], other.shape[1]), dtype=np.float32)
        for p, block in enumerate(self.parts):
            np.matmul(block, other, out=out[self.starts[p] : self.starts[p + 1]])
        return out


def _single_page(entity: Entity) -> tuple[str, int] | None:
    pages = {(m.doc_id, m.page) for m in entity.mentions}
    return next(iter(pages)) if len(pages) == 1 else None


def candidate_pairs(
    instances: Sequence[Entity],
    instance_vectors: np.ndarray,
    pool: Sequence[Entity],
    pool_vectors: np.ndarray | RowStack,
    top_k: int,
    *,
    pair_once: bool = True,
    min_cosine: float = -np.inf,
    stored: int = 0,
    read: Callable[[Sequence[int]], None] = lambda rows: None,
) -> tuple[list[tuple[int, list[tuple[int, float]]]], int]:
    """For each instance (index into ``instances``), its top-``top_k`` pool entries (index into
    ``pool``, cosine) on other pages, best first, less those with a cosine under
    ``min_cosine`` that share no normalised name or alias with it; with ``pair_once`` a pair
    already listed for an earlier instance is not listed again. ``pool`` contains the
    instances themselves. An instance lies on one page; a pool entity is on another page
    unless all its mentions are on the instance's page. Also returns the number of
    top-``top_k`` candidates left out for the floor.

    The first ``stored`` pool entries are read lazily: only those that make an instance's
    top ``top_k`` are looked at (``read(rows)`` is told first, so a lazy ``pool`` can fetch
    them at once), and one found on the instance's page makes way for the next best."""
    if not len(instances) or not len(pool) or top_k <= 0:
        return [], 0
    names: dict[str, set[str]] = {}

    def same_name(a: Entity, b: Entity) -> bool:
        for e in (a, b):
            if e.id not in names:
                names[e.id] = entity_names(e)
        return bool(names[a.id] & names[b.id])

    page_ids: dict[tuple[str, int] | None, int] = {None: -1}
    pool_page = np.full(len(pool), -2, dtype=np.int64)  # -2: not looked at yet (a stored entry)
    pool_page[stored:] = [page_ids.setdefault(_single_page(pool[j]), len(page_ids)) for j in range(stored, len(pool))]

    def top_of(sims: np.ndarray, page: int) -> np.ndarray:
        while True:
            k = min(top_k, int(np.isfinite(sims).sum()))
            if k <= 0:
                return np.zeros(0, dtype=np.int64)
            top = np.argpartition(-sims, k - 1)[:k]
            unread = top[pool_page[top] == -2]
            if len(unread):
                read(unread)
                pool_page[unread] = [page_ids.setdefault(_single_page(pool[j]), len(page_ids)) for j in unread]
            here = top[pool_page[top] == page]
            if not len(here):
                return top[np.lexsort((top, -sims[top]))]
            sims[here] = -np.inf

    codes: dict[str, int] = {}  # entity id → small int: a pair is one int (10k pages: ~300k pairs)
    seen: set[int] = set()
    out: list[tuple[int, list[tuple[int, float]]]] = []
    below = 0
    for start in range(0, len(instances), 256):
        block = np.asarray(pool_vectors @ instance_vectors[start : start + 256].T, dtype=np.float32)
        for col in range(block.shape[1]):
            i = start + col
            sims = block[:, col].copy()
            page = page_ids.get(_single_page(instances[i]), -3)
            sims[pool_page == page] = -np.inf
            chosen = []
            for j in top_of(sims, page):
                if sims[j] < min_cosine and not same_name(instances[i], pool[j]):
                    below += 1
                    continue
                if pair_once:
                    a, b = sorted(
                        (codes.setdefault(instances[i].id, len(codes)), codes.setdefault(pool[j].id, len(codes)))
                    )
                    pair = a << 32 | b
                    if pair in seen:
                        continue
                    seen.add(pair)
                chosen.append((int(j), float(sims[j])))
            if chosen:
                out.append((i, chosen))
    return out, below


def _merge_group(head: str, members: list[Entity]) -> Entity:
    lead = next(m for m in members if m.id == head)
    seen = {lead.name.casefold()}
    aliases: list[str] = []
    for name in (n for m in members for n in (m.name, *m.aliases)):
        if name.casefold() not in seen:
            seen.add(name.casefold())
            aliases.append(name)
    mentions: list[Mention] = []
    for m in members:
        mentions += [x for x in m.mentions if x not in mentions]
    description = lead.description or next((m.description for m in members if m.description), "")
    return lead.model_copy(
        update={"id": head, "aliases": aliases, "mentions": mentions, "description": description}, deep=True
    )


def _merge_relation(rid: str, source: str, target: str, members: list[Relation]) -> Relation:
    mentions: list[Mention] = []
    for r in members:
        mentions += [x for x in r.mentions if x not in mentions]
    lead = next(r for r in members if r.id == rid)
    return lead.model_copy(
        update={
            "source": source,
            "target": target,
            "mentions": mentions,
            "description": lead.description or next((r.description for r in members if r.description), ""),
            "cross_page": any(r.cross_page for r in members),
        },
        deep=True,
    )


def _instance_rank(entity_id: str) -> tuple:
    doc, page, local = entity_id.rsplit(":", 2)
    digits = "".join(ch for ch in local if ch.isdigit())
    return (doc, int(page), int(digits) if digits else 0, local)


class _Pool(Sequence[Entity]):
    """The candidate pool: the canonical graph's entities (read on first use; the graph keeps
    what it has read) then the instances."""

    def __init__(self, canonical: CanonicalGraph, instances: list[Entity]):
        self.canonical, self.ids, self.instances = canonical, canonical.entity_ids(), instances
        self.stored = len(self.ids)

    def __len__(self) -> int:
        return self.stored + len(self.instances)

    def __getitem__(self, j):  # int indexes only; no slices are taken
        if j >= self.stored:
            return self.instances[j - self.stored]
        return self.canonical.entities([self.ids[j]])[self.ids[j]]

    def fetch(self, rows: Sequence[int]) -> None:
        """Read the stored entries of ``rows`` at once."""
        self.canonical.entities([self.ids[j] for j in rows if j < self.stored])


def _stored_vectors(
    pool: _Pool,
    embed: EmbedFn,
    existing_vectors: Callable[[str], np.ndarray | None],
    existing_matrix: np.ndarray | None,
) -> np.ndarray:
    """The stored pool's vectors in pool order: ``existing_matrix`` as it is, else each stored
    vector, with those missing embedded now."""
    if existing_matrix is not None:
        return existing_matrix
    stored = [existing_vectors(eid) for eid in pool.ids]
    missing = [j for j, v in enumerate(stored) if v is None]
    pool.fetch(missing)
    fresh = iter(embed([pool[j] for j in missing])) if missing else iter(())
    rows = [v if v is not None else next(fresh) for v in stored]
    return np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def connect(
    graphs: Iterable[StoredPageGraph],
    canonical: CanonicalGraph,
    embed: EmbedFn,
    existing_vectors: Callable[[str], np.ndarray | None],
    judge: Judge | None,
    top_k: int,
    crop: Callable[[Entity], Path | None] = lambda e: None,
    workers: int = 1,
    on_judged: Callable[[int], None] | None = None,
    existing_matrix: np.ndarray | None = None,
) -> ConnectResult:
    """Connect the page graphs ``graphs`` to the canonical graph (see the module docstring).
    ``canonical`` is read by id (``canonical.CanonicalGraph``): every entity's vector, but only
    the candidates, the merged entities and the relations around them; ``existing_vectors(id)``
    gives a stored entity vector (None → embedded now); ``existing_matrix``, when given, is
    every stored vector in ``canonical.entity_ids()`` order (the entity index's own matrix,
    used as it is: at 10k pages a copy was ~100 MB); ``crop`` gives a visual entity's crop
    image for the judge; ``workers`` judge calls run at once (results are used in a fixed
    order, so the outcome does not depend on timing); ``on_judged(n)`` is told after each
    judged anchor with its number of candidates. ``graphs`` is read once (``page_instances``)."""
    instances, inst_relations, pages = page_instances(graphs)
    result = ConnectResult(pages=pages)
    pool = _Pool(canonical, instances)
    existing = set(pool.ids)
    same: list[tuple[str, str]] = []
    related: list[tuple[Entity, Entity, str]] = []
    if judge is not None and instances:
        inst_vectors = embed(instances)
        pool_vectors = RowStack([_stored_vectors(pool, embed, existing_vectors, existing_matrix), inst_vectors])
        pair_once, floor = candidate_policy(judge)
        min_cosine = (
            calibrated_cut(pool_vectors, floor) if floor is not None and len(pool) >= FLOOR_MIN_POOL else -np.inf
        )
        pairs, result.below_floor = candidate_pairs(
            instances,
            inst_vectors,
            pool,
            pool_vectors,
            top_k,
            pair_once=pair_once,
            min_cosine=min_cosine,
            stored=pool.stored,
            read=pool.fetch,
        )

        def ask(entry: tuple[int, list[tuple[int, float]]]):
            anchor = instances[entry[0]]
            items = [(JudgeItem(pool[j].id, pool[j], crop(pool[j])), sim) for j, sim in entry[1]]
            verdicts, usage = judge.judge(JudgeItem(anchor.id, anchor, crop(anchor)), items)
            if on_judged is not None:
                on_judged(len(items))
            return anchor, items, verdicts, usage

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool_exec:
            # one answer at a time: all of them at once held every candidate and verdict (10k pages: ~100 MB)
            answers = pool_exec.map(ask, pairs) if workers > 1 else map(ask, pairs)
            for anchor, items, verdicts, usage in answers:
                result.usage = result.usage.add(usage)
                for (item, _), verdict in zip(items, verdicts):
                    result.verdicts[verdict.label] += 1
                    if verdict.label == "same":
                        same.append((anchor.id, item.id))
                    elif verdict.label == "related":
                        related.append((anchor, item.entity, verdict.reason))

    # Only what the verdicts touch is read: merged canonical entities, those a related edge
    # would join, and the relations around them (the rest of the graph does not change).
    touched = {eid for pair in same for eid in pair if eid in existing}
    touched |= {b.id for _, b, _ in related if b.id in existing}
    old_relations = canonical.relations_touching(sorted(touched))
    ends = {eid for r in old_relations.values() for eid in (r.source, r.target)}
    everything = {**canonical.entities(sorted(touched | ends)), **{e.id: e for e in instances}}
    all_relations = list(old_relations.values()) + inst_relations
    rank = lambda eid: (0, eid) if eid in existing else (1, *_instance_rank(eid))  # noqa: E731
    merged = merge_entities(list(everything), same, [(r.source, r.target, r.label) for r in all_relations], key=rank)

    for head, member_ids in merged.groups.items():
        if len(member_ids) == 1 and head in existing:
            continue  # untouched canonical entity
        result.entities[head] = _merge_group(head, [everything[m] for m in member_ids])
    result.deleted_entities = sorted(e for e in everything if e in existing and merged.canonical[e] != e)
    result.canonical = {e.id: merged.canonical[e.id] for e in instances}

    kept: set[str] = set()
    for rel in merged.relations:
        members = [all_relations[i] for i in rel.members]
        old = [r for r in members if r.id in old_relations]
        rid = min(r.id for r in old) if old else members[0].id
        kept.add(rid)
        unchanged = len(members) == 1 and old and (old[0].source, old[0].target) == (rel.source, rel.target)
        if not unchanged:
            result.relations[rid] = _merge_relation(rid, rel.source, rel.target, members)
    result.deleted_relations = sorted(r for r in old_relations if r not in kept)

    linked = {frozenset((r.source, r.target)) for r in all_relations if r.label == CROSS_PAGE_LABEL}
    linked = {frozenset(merged.canonical[e] for e in pair) for pair in linked}
    for a, b, reason in related:
        ca, cb = merged.canonical[a.id], merged.canonical[b.id]
        pair = frozenset((ca, cb))
        if ca == cb or pair in linked:
            continue
        linked.add(pair)
        source, target = sorted(pair)
        rid = "xp:" + hashlib.sha1(f"{source}|{target}".encode()).hexdigest()[:16]
        mentions = [a.mentions[0], b.mentions[0]] if a.mentions and b.mentions else [*a.mentions, *b.mentions]
        result.relations[rid] = Relation(
            id=rid,
            source=source,
            target=target,
            label=CROSS_PAGE_LABEL,
            description=reason,
            mentions=mentions[:2],
            cross_page=True,
        )
    result.names = {eid: e.name for eid, e in everything.items()}
    return result
