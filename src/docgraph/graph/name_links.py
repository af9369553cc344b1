"""Cross-references by name: a page that names another page's heading points at it. Pure.

Documents refer to their own parts by name ("see Risk Management", "as the Glossary
explains"); encyclopaedic passages name the subjects of other articles ("Alexander and
the Terrible … is a children's book by Judith Viorst" names the article headed "Judith
Viorst"). A multi-hop question's second hop is often exactly such a reference: the first
page names the thing the second page is about, and the second page shares no words with
the question. ``NameLinks`` records, from the layout alone (no model):

- **names**: section headings that read like names — at most ``MAX_NAME_WORDS`` words,
  with a capital letter, not a value (``graph.bridges.bridging_name``); a trailing
  parenthetical disambiguator is dropped ("Brother (Pearl Jam song)" is named "Brother");
- **targets**: the page each name heads (the page of the section's heading);
- **mentions**: the pages whose text contains the name as whole words, case-sensitive (a
  proper name keeps its capitals; "introduction" in running text is not the heading
  "Introduction"), other than the pages it heads.

``scores(seeds, weights, query)`` gives every page the IDF-weighted sum of the names the
seed pages mention and it heads (names the question itself contains are left out: reaching
them is first-hop retrieval's job), scaled to [0, 1]; seeds score 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .bridges import MAX_NAME_WORDS, bridging_name, name_words, normalise_name

_WORD = re.compile(r"\w+", re.UNICODE)
_DISAMBIGUATOR = re.compile(r"\s*\([^()]*\)\s*$")


def heading_name(heading: str) -> str:
    """The name a heading gives its section ("" when it does not read like a name)."""
    name = _DISAMBIGUATOR.sub("", " ".join(heading.split())).strip()
    words = _WORD.findall(name)
    if not words or len(words) > MAX_NAME_WORDS or not bridging_name(name):
        return ""
    return name if any(ch.isupper() for ch in name) else ""


@dataclass
class NameLinks:
    """Which pages name which headed pages (rows and columns: the layer's pages)."""

    mentions: sp.csr_matrix  # (pages, names) 1 where the page's text names the heading
    targets: sp.csr_matrix  # (names, pages) 1 where the name heads a section on the page
    idf: np.ndarray  # per name, over the pages that mention or are headed by it
    keys: dict[str, list[int]]  # normalise_name(name) → its columns (to leave the question's names out)

    @classmethod
    def build(cls, n_pages: int, headings: Iterable[tuple[int, str]], page_texts: Sequence[str]) -> NameLinks:
        """From ``(page row, heading text)`` pairs and each page's text (rows aligned)."""
        columns: dict[tuple[str, ...], int] = {}
        keys: dict[str, list[int]] = {}
        target_cells: set[tuple[int, int]] = set()
        for row, heading in headings:
            name = heading_name(heading)
            if not name or not 0 <= row < n_pages:
                continue
            words = tuple(_WORD.findall(name))
            if words not in columns:
                columns[words] = len(columns)
                keys.setdefault(normalise_name(name), []).append(columns[words])
            column = columns[words]
            target_cells.add((column, row))
        headed = {(row, column) for column, row in target_cells}
        by_first: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        for words, column in columns.items():
            by_first.setdefault(words[0], []).append((words, column))
        mention_cells: set[tuple[int, int]] = set()
        for row, text in enumerate(page_texts[:n_pages]):
            page_words = _WORD.findall(text)
            for i, word in enumerate(page_words):
                for named, column in by_first.get(word, ()):
                    if tuple(page_words[i : i + len(named)]) == named and (row, column) not in headed:
                        mention_cells.add((row, column))
        n_names = len(columns)
        mentions = _incidence(mention_cells, (n_pages, n_names))
        targets = _incidence(target_cells, (n_names, n_pages))
        df = np.asarray(mentions.sum(axis=0)).ravel() + np.asarray(targets.sum(axis=1)).ravel()
        idf = np.log((n_pages + 1.0) / (df + 0.5))
        return cls(mentions=mentions, targets=targets, idf=idf, keys=keys)

    def __len__(self) -> int:
        return len(self.idf)

    def query_columns(self, query: str | Sequence[str]) -> list[int]:
        """Columns of the names the question contains as whole words (case-insensitive);
        ``query`` is its text or its words already read (``bridges.name_words``)."""
        words = name_words(query) if isinstance(query, str) else tuple(query)
        found = {
            column
            for n in range(1, min(MAX_NAME_WORDS, len(words)) + 1)
            for i in range(len(words) - n + 1)
            for column in self.keys.get(" ".join(words[i : i + n]), ())
        }
        return sorted(found)

    def scores(
        self, seed_rows: Sequence[int], seed_weights: Sequence[float] | np.ndarray, query: str | Sequence[str] = ""
    ) -> np.ndarray:
        """Per page: how strongly the seeds name it (see module doc), in [0, 1]."""
        n_pages = self.targets.shape[1]
        out = np.zeros(n_pages)
        seeds = [int(r) for r in seed_rows if 0 <= int(r) < n_pages]
        if not seeds or not len(self):
            return out
        weights = np.asarray(seed_weights, dtype=np.float64)[: len(seeds)]
        named = np.asarray(self.mentions[seeds].T @ weights).ravel() * self.idf
        named[self.query_columns(query)] = 0.0
        if not named.any():
            return out
        out = np.asarray(self.targets.T @ named).ravel()
        out[seeds] = 0.0
        best = out.max()
        return out / best if best > 0 else out


def _incidence(cells: set[tuple[int, int]], shape: tuple[int, int]) -> sp.csr_matrix:
    rows = np.fromiter((r for r, _ in cells), dtype=np.int64, count=len(cells))
    cols = np.fromiter((c for _, c in cells), dtype=np.int64, count=len(cells))
    return sp.csr_matrix((np.ones(len(cells)), (rows, cols)), shape=shape)
