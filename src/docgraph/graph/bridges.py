"""Second-hop retrieval through shared entities ("bridges"). Pure (numpy / scipy).

A multi-hop question names one thing and asks about another that only the first one's
page mentions ("Which team does the 2015 Diamond Head Classic's MVP play for?": the
tournament's page names the player; the player's page names the team). Flat retrieval
finds the first page; the second shares the *bridge entity* with it, not words with the
question. ``EntityBridges`` holds which entities of a method's graph are grounded on which
pages and scores every page by how much of the seed pages' entity profile it shares:

- entities are weighted by IDF over pages (``log((n + 1) / (df + 0.5))``), so an entity on
  every page of a report bridges nothing and a rare name bridges strongly;
- the question's own entities are left out of the profile (reaching pages about them is
  first-hop retrieval's job; bridges go through what the seeds add);
- a page's bridge score is the cosine between its IDF-weighted entity vector and the
  seeds' (each seed weighted by its retrieval score); seeds score 0 themselves.

``interleave`` merges the bridged order into a method's own ranking at fixed slots: a
bridged page takes every ``every``-th slot, so the method's first ``every − 1`` pages are
never displaced. ``second_hop`` does the whole step for a method's ranked pages: bridge
scores from its best pages, weighed by each page's relevance, interleaved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..text import normalize

# entity types that name values, not things: they bridge nothing
NON_BRIDGING_TYPES = frozenset({"date", "time", "percent", "money", "quantity", "ordinal", "cardinal", "number"})
MAX_NAME_WORDS = 8  # longest entity name looked for in a question
_NON_WORD = re.compile(r"\W+")


def bridging_name(name: str) -> bool:
    """Whether a name can bridge: it has a letter, does not start like a value ("$1 million
    budget", "1940s", "3.5 %" name amounts and dates, not things) and is not one lower-case
    word: "electricity", "december", "company" name kinds of things, found on many
    unrelated pages, not a thing two pages are both about. Words of scripts without case
    (Chinese, Japanese) keep bridging."""
    text = name.strip()
    if not text or text[0].isdigit() or text[0] in "$€£¥%+-." or not any(ch.isalpha() for ch in text):
        return False
    common_word = len(text.split()) == 1 and any(ch.islower() for ch in text) and not any(ch.isupper() for ch in text)
    return not common_word


def normalise_name(name: str) -> str:
    """Lower-case words separated by single spaces, accents folded as ``text.normalize``
    folds them ("Tekezé" = "Tekeze"), a leading "the" dropped ("" if < 2 chars)."""
    text = _NON_WORD.sub(" ", normalize(name)).strip()
    if text.startswith("the "):
        text = text[4:]
    return text if len(text) >= 2 else ""


def name_words(text: str) -> tuple[str, ...]:
    """``text``'s words as names are matched (``normalise_name``), for ``query_columns``."""
    return tuple(normalise_name(text).split()) if text else ()


@dataclass
class EntityBridges:
    """Page × entity incidence of a method's graph, IDF-weighted (rows: pages of a layer)."""

    weighted: sp.csr_matrix  # (pages, entities) IDF where the entity is grounded on the page
    row_norms: np.ndarray  # L2 norm of each page row of ``weighted``
    columns: dict[str, int]  # normalised entity name → column
    idf: np.ndarray

    @classmethod
    def build(cls, n_pages: int, mentions: Iterable[tuple[int, str]]) -> EntityBridges:
        """From ``(page row, entity name)`` pairs; names are normalised, repeats on a page count
        once, names of values (``bridging_name``) are skipped."""
        columns: dict[str, int] = {}
        cells: set[tuple[int, int]] = set()
        for row, name in mentions:
            key = normalise_name(name) if bridging_name(name) else ""
            if key and 0 <= row < n_pages:
                cells.add((row, columns.setdefault(key, len(columns))))
        rows = np.fromiter((r for r, _ in cells), dtype=np.int64, count=len(cells))
        cols = np.fromiter((c for _, c in cells), dtype=np.int64, count=len(cells))
        incidence = sp.csr_matrix((np.ones(len(cells)), (rows, cols)), shape=(n_pages, len(columns)))
        df = np.asarray(incidence.sum(axis=0)).ravel()
        idf = np.log((n_pages + 1.0) / (df + 0.5))
        weighted = sp.csr_matrix(incidence.multiply(idf.reshape(1, -1)))
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        return cls(weighted=weighted, row_norms=norms, columns=columns, idf=idf)

    def __len__(self) -> int:
        return len(self.columns)

    def query_columns(self, query: str | Sequence[str]) -> list[int]:
        """Columns of the entities whose (normalised) name occurs in the question as whole words;
        ``query`` is its text or its words already read (``name_words``)."""
        words = name_words(query) if isinstance(query, str) else tuple(query)
        found = set()
        for n in range(1, min(MAX_NAME_WORDS, len(words)) + 1):
            for i in range(len(words) - n + 1):
                column = self.columns.get(" ".join(words[i : i + n]))
                if column is not None:
                    found.add(column)
        return sorted(found)

    def scores(
        self, seed_rows: Sequence[int], seed_weights: Sequence[float] | np.ndarray, query: str | Sequence[str] = ""
    ) -> np.ndarray:
        """Bridge score of every page (see module doc): 0 for seeds, for pages sharing nothing
        with them, and everywhere when the seeds have no entity beyond the question's own."""
        n_pages = self.weighted.shape[0]
        out = np.zeros(n_pages)
        seeds = [int(r) for r in seed_rows if 0 <= int(r) < n_pages]
        if not seeds or not len(self):
            return out
        weights = np.asarray(seed_weights, dtype=np.float64)[: len(seeds)]
        profile = np.asarray(self.weighted[seeds].T @ weights).ravel()
        profile[self.query_columns(query)] = 0.0
        norm = float(np.linalg.norm(profile))
        if norm <= 0:
            return out
        dots = np.asarray(self.weighted @ profile).ravel()
        out = dots / np.maximum(self.row_norms * norm, 1e-12)
        out[seeds] = 0.0
        return out


def interleave(primary: Sequence[int], secondary: Sequence[int], every: int, limit: int) -> list[int]:
    """``primary`` with ``secondary`` items placed at slots every, 2·every, 3·every, …
    (1-based; every ≥ 2), repeats skipped, at most ``limit`` items. When ``secondary`` runs
    out the rest comes from ``primary``; ``every < 2`` returns ``primary`` as it is."""
    if every < 2 or not secondary:
        return list(dict.fromkeys(primary))[:limit]
    out: list[int] = []
    seen: set[int] = set()
    sources = {False: iter(primary), True: iter(secondary)}

    def take(bridged: bool) -> bool:
        for item in sources[bridged]:
            if item not in seen:
                seen.add(item)
                out.append(item)
                return True
        return False

    slot = 0
    while len(out) < limit:
        bridged = slot % every == every - 1
        if not take(bridged) and not take(not bridged):
            break
        slot += 1
    return out


def second_hop(
    top: Sequence[tuple[int, float]],
    bridges: EntityBridges,
    query: str | Sequence[str],
    *,
    every: int,
    seeds: int,
    k: int,
    page_scores: np.ndarray | None = None,
    boost: Callable[[list[int], np.ndarray], np.ndarray] | None = None,
    open_part: Callable[[list[int]], np.ndarray] | None = None,
    open_share: float = 0.0,
) -> list[tuple[int, float]]:
    """``top`` (a method's ``(page row, score)``, best first) with the second hop merged in.

    The first ``seeds`` rows seed ``bridges.scores`` (weighted by their scores relative to the
    best). A reached page's bridge score is multiplied by ``boost(seeds, weights)`` when given
    (e.g. ``1 + name score``) and by its relevance: its own ``page_scores`` relative to the best
    (the second hop must still concern the question; all 1 without them), mixed with share
    ``open_share`` of ``open_part(seeds)`` (scores in [0, 1] of what the seeds leave open).
    Reached pages, by that product (ties: own score, then row), take slots ``every``,
    2·``every``, … (``interleave``). At most ``k`` rows; a row the hop placed (new, or moved up
    from further down) scores the mean of its neighbours, so scores never increase down the
    list. ``top[:k]`` when nothing is reached."""
    if every < 2 or not top or not len(bridges):
        return list(top[:k])
    score_of = dict(top)
    rows = list(score_of)
    seed_rows = rows[:seeds]
    weights = np.maximum(np.array([score_of[r] for r in seed_rows], dtype=np.float64), 0.0)
    weights = weights / weights.max() if weights.max() > 0 else np.ones(len(seed_rows))
    n_pages = bridges.weighted.shape[0]
    own = np.ones(n_pages) if page_scores is None else np.maximum(np.asarray(page_scores, float), 0.0)
    own = own / own.max() if own.max() > 0 else np.ones(n_pages)
    bridge = bridges.scores(seed_rows, weights, query)
    if boost is not None:
        bridge *= boost(seed_rows, weights)
    relevance = own
    if open_part is not None and open_share > 0:
        relevance = (1.0 - open_share) * own + open_share * open_part(seed_rows)
    bridge *= relevance
    reached = np.flatnonzero(bridge > 0)
    if not len(reached):
        return list(top[:k])
    secondary = reached[np.lexsort((reached, -own[reached], -bridge[reached]))].tolist()
    merged = interleave(rows, secondary, every, k)
    position = {row: i for i, row in enumerate(rows)}
    kept = [row in position and i >= position[row] for i, row in enumerate(merged)]  # not moved up
    out: list[tuple[int, float]] = []
    for i, row in enumerate(merged):
        if kept[i]:
            out.append((row, float(score_of[row])))
            continue
        following = next((score_of[r] for j, r in enumerate(merged[i + 1 :], i + 1) if kept[j]), None)
        previous = out[-1][1] if out else (following or 0.0)
        out.append((row, float((previous + (previous if following is None else following)) / 2)))
    return out
