"""Which per-page signals could lift KG4VD on questions that only describe content (issue 54, item 5).

    .venv/bin/python benchmarks/content_signals.py --workspaces 'ROOT/mmlongbench/doc-*' \\
        --records RUN/mmlongbench-retrieval-records.jsonl [--kinds content] [-k 5] [--depth 60]

``--records`` is a ``benchmarks/retrieval.py`` records file with a ``hybrid`` row per question
(its question, gold pages and hybrid's ranking); ``--workspaces`` a glob of the corpus
workspaces of that run (one per document, or the one library). For every question of the
chosen kinds (``question_kinds.py``: label, lexicon, content) KG4VD's retrieval runs in the
workspace holding its document, and these signals are read for the ``--depth`` best pages of
its prior (step 4's flat + diffused score), the pool every ranking below reorders:

- ``flat``, ``diffused``, ``prior``: the evidence layer's own scores;
- ``entity_mass``: the entity PPR mass grounded on the page (what the graph seeds with);
- ``chunk_bm25``, ``chunk_dense``: the page's best chunk by BM25 alone and by cosine alone;
- ``page_bm25``: BM25 over the whole page; ``coverage``: the idf share of the question's
  terms the page holds; ``second_chunk``: best + half the second-best fused chunk score;
- ``linked_entities``: idf-weighted graph entities whose names the question contains,
  grounded on the page (question → graph linking by name);
- ``neighbour``: the best flat score of the adjacent pages of the same document;
- ``feedback``: page BM25 of the ten terms the prior's three best pages weigh most that the
  question lacks (pseudo-relevance feedback, RM3-like);
- ``answer_type``: how much of the page is of the kind of thing the question asks for, read
  from its wh-words — shares and rates ("what percentage") → percentages, counts and amounts
  ("how many", "how much") → numbers, "when" / "which year" → years and dates, "who" →
  capitalised names — per 100 words of the page (0 when the question asks for none).

It prints recall@k of hybrid, of KG4VD's final list, of each signal alone, of the prior plus
each signal at a few weights, and of a pairwise logistic ranker over all signals fit with
five folds grouped by document (a question is scored by a model that never saw its
document). Nothing is written and no setting changes: a study, not a mechanism.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SIGNALS = (
    "flat",
    "diffused",
    "prior",
    "entity_mass",
    "chunk_bm25",
    "chunk_dense",
    "page_bm25",
    "coverage",
    "second_chunk",
    "linked_entities",
    "neighbour",
    "feedback",
    "answer_type",
)
WEIGHTS = (0.1, 0.2, 0.4)


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)


def recall(ranked: list[str], gold: list[str], k: int) -> float:
    return len(set(gold) & set(ranked[:k])) / len(gold)


class Corpus:
    """One workspace with what the signals need made once: the layer, the graph view and
    an index of entity names."""

    def __init__(self, path: str):
        from docgraph.api import Workspace
        from docgraph.methods.kg4vd.graph_view import load_view
        from docgraph.methods.kg4vd.retrieval import load_layer
        from docgraph.methods.kg4vd.storage import VEC_PAGE
        from docgraph.methods.retrieval.vector_index import load_index
        from docgraph.text import tokenize

        self.workspace = Workspace(path)
        self.ctx = self.workspace.context()
        self.name_of = {d.id: os.path.basename(d.path) for d in self.workspace.documents()}
        self.layer = load_layer(self.ctx, load_index(self.ctx.store, VEC_PAGE))
        view = load_view(self.ctx.store, None)
        self.entity_pages: dict[str, set[int]] = {}
        for node, key in view.node_pages():
            if key in self.layer.page_position:
                name = " ".join(tokenize(view.names[node]))
                if name and name.count(" ") < 6:
                    self.entity_pages.setdefault(name, set()).add(self.layer.page_position[key])
        self.page_tokens: list[Counter[str]] = [Counter() for _ in self.layer.pages]
        texts: list[list[str]] = [[] for _ in self.layer.pages]
        for row, chunk in enumerate(self.layer.chunks):
            self.page_tokens[self.layer.chunk_page[row]].update(tokenize(chunk.text))
            texts[self.layer.chunk_page[row]].append(chunk.text)
        self.page_text = ["\n".join(t) for t in texts]

        self.keys = [f"{self.name_of.get(doc, doc)}|{page}" for doc, page in self.layer.pages]
        self.position_of = {key: i for i, key in enumerate(self.keys)}


ANSWER_TYPES = (  # (what the question says, what on a page is of that kind)
    (r"\b(?:what|which) (?:percentage|percent|share|proportion)|\bhow many percent|\bwhat % ", r"\d\s?%|\bpercent\b"),
    (r"\bhow (?:many|much)\b|\bwhat (?:number|amount|total)\b", r"\b\d[\d,.]*\b"),
    (
        r"\bwhen\b|\b(?:what|which) (?:year|date|month)\b",
        r"\b(?:19|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d",
    ),
    (r"^\s*(?:who|whom|whose)\b|\bwho (?:is|was|are|were)\b", r"\b[A-Z][a-z]+ [A-Z][a-z]+\b"),
)


def answer_type_density(corpus: Corpus, question: str) -> np.ndarray:
    """Per page: matches of the answer type the question asks for per 100 words (zeros when
    it asks for none of ``ANSWER_TYPES``)."""
    import re

    n = len(corpus.layer.pages)
    wanted = [page for asks, page in ANSWER_TYPES if re.search(asks, question, re.IGNORECASE)]
    out = np.zeros(n)
    if not wanted:
        return out
    found = re.compile(wanted[0], 0 if wanted[0].startswith("\\b[A-Z]") else re.IGNORECASE)
    for p in range(n):
        text = corpus.page_text[p]
        out[p] = 100.0 * len(found.findall(text)) / max(len(text.split()), 20)
    return out


def page_signals(corpus: Corpus, question: str) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every signal over every page of the corpus, and KG4VD's final page list."""
    from docgraph.methods.kg4vd.query import run_retrieval
    from docgraph.methods.kg4vd.retrieval import query_vector
    from docgraph.methods.retrieval.evidence_layer import retrieval_settings
    from docgraph.methods.retrieval.hybrid import group_max
    from docgraph.methods.retrieval.question import read_question
    from docgraph.text import tokenize

    layer, n = corpus.layer, len(corpus.layer.pages)
    evidence, trace, _ = run_retrieval(corpus.ctx, question)
    ranking = trace.ranking
    if ranking is None:
        raise SystemExit("KG4VD's trace carries no page ranking: is the structural layer off?")
    terms = read_question(question, retrieval_settings(corpus.ctx)).sparse_terms
    qvec = query_vector(corpus.ctx, question, [])
    out = {"flat": ranking.flat, "diffused": ranking.diffused, "prior": ranking.final}
    mass = np.zeros(n)
    if len(trace.chunk_seeds):
        np.add.at(mass, layer.chunk_page, trace.chunk_seeds)
    out["entity_mass"] = mass
    out["chunk_bm25"] = group_max(layer.chunk_page, layer.hybrid.sparse(terms), n)
    out["chunk_dense"] = group_max(layer.chunk_page, layer.hybrid.dense(qvec), n, empty=-1.0)
    out["page_bm25"] = layer.page_bm25.scores(terms)
    coverage, total = np.zeros(n), 0.0
    for term in dict.fromkeys(terms):
        posting = layer.page_bm25.postings.get(term)
        if posting is not None:
            coverage[posting[0]] += posting[2]
            total += posting[2]
    out["coverage"] = coverage / total if total else coverage
    second = np.zeros(n)
    for p in range(n):
        lo, hi = np.searchsorted(layer.chunk_page, [p, p + 1])
        if hi > lo:
            best = np.sort(ranking.chunk_scores[lo:hi])[::-1]
            second[p] = best[0] + 0.5 * (best[1] if len(best) > 1 else 0.0)
    out["second_chunk"] = second
    words, linked = tokenize(question), np.zeros(n)
    names = {" ".join(words[a:b]) for a in range(len(words)) for b in range(a + 1, min(len(words), a + 6) + 1)}
    for name in names & corpus.entity_pages.keys():
        pages = corpus.entity_pages[name]
        linked[list(pages)] += math.log(1 + n / len(pages))
    out["linked_entities"] = linked
    neighbour = np.zeros(n)
    for p, (doc, _) in enumerate(layer.pages):
        for q in (p - 1, p + 1):
            if 0 <= q < n and layer.pages[q][0] == doc:
                neighbour[p] = max(neighbour[p], ranking.flat[q])
    out["neighbour"] = neighbour
    weights: Counter[str] = Counter()
    asked = set(terms)
    for rank, p in enumerate(ranking.top(3)):
        counts = corpus.page_tokens[layer.page_position[p[0]]]
        size = sum(counts.values()) or 1
        for term, count in counts.items():
            posting = layer.page_bm25.postings.get(term)
            if posting is not None and term not in asked and len(posting[0]) > 1:
                weights[term] += count / size * posting[2] / (1 + rank)
    expansion = [t for t, _ in weights.most_common(10)]
    out["feedback"] = layer.page_bm25.scores(expansion) if expansion else np.zeros(n)
    out["answer_type"] = answer_type_density(corpus, question)
    final = [f"{corpus.name_of.get(p.doc_id, p.doc_id)}|{p.page}" for p in evidence.pages]
    return out, final


def pairwise_ranker(train: list[dict], folds_of: dict[str, int], fold: int):
    """A logistic model over signal differences of (gold, other) page pairs of the questions
    outside ``fold``; returns its weights over the min-max and reciprocal-rank columns."""
    from sklearn.linear_model import LogisticRegression

    x, y = [], []
    for row in train:
        if folds_of[row["document"]] == fold:
            continue
        features, gold = row["features"], row["is_gold"]
        for a in np.where(gold)[0]:
            for b in np.where(~gold)[0]:
                x += [features[a] - features[b], features[b] - features[a]]
                y += [1, 0]
    if not x or len(set(y)) < 2:
        return None
    return LogisticRegression(C=0.1, max_iter=5000, fit_intercept=False).fit(np.array(x), np.array(y)).coef_[0]


def feature_matrix(signals: dict[str, np.ndarray]) -> np.ndarray:
    columns = []
    for name in SIGNALS:
        values = signals[name]
        order = np.argsort(-values, kind="stable")
        rr = np.empty(len(values))
        rr[order] = 1.0 / (1.0 + np.arange(len(values)))
        columns += [minmax(values), rr]
    return np.stack(columns, 1)


def main(argv: list[str] | None = None) -> int:
    from question_kinds import question_kind

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspaces", required=True, help="glob of the run's corpus workspaces")
    parser.add_argument("--records", required=True, type=Path)
    parser.add_argument("--kinds", default="content", help="comma-separated: label, lexicon, content")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--depth", type=int, default=60, help="pages of the prior each question's signals cover")
    args = parser.parse_args(argv)
    kinds = set(args.kinds.split(","))
    questions = [json.loads(line) for line in args.records.read_text(encoding="utf-8").splitlines()]
    questions = [
        q
        for q in questions
        if q.get("kind") == "question"
        and q["method"] == "hybrid"
        and q.get("gold")
        and question_kind(q["question"]) in kinds
    ]
    rows: list[dict] = []
    for path in sorted(glob.glob(args.workspaces)):
        corpus = Corpus(path)
        names = set(corpus.name_of.values())
        for q in questions:
            document = q["gold"][0].rsplit("|", 1)[0]
            if document not in names:
                continue
            signals, final = page_signals(corpus, q["question"])
            pool = list(np.argsort(-signals["prior"], kind="stable")[: args.depth])
            keys = [corpus.keys[int(i)] for i in pool]
            picked = {name: values[pool] for name, values in signals.items()}
            rows.append(
                {
                    "document": document,
                    "gold": q["gold"],
                    "hybrid": q["retrieved"],
                    "kg4vd": final,
                    "keys": keys,
                    "signals": picked,
                    "features": feature_matrix(picked),
                    "is_gold": np.array([k in q["gold"] for k in keys]),
                }
            )
        corpus.workspace.close()
    if not rows:
        raise SystemExit("no question of those kinds has its document in those workspaces")

    def ranked(row: dict, score: np.ndarray) -> list[str]:
        return [row["keys"][i] for i in np.lexsort((np.arange(len(score)), -score))]

    def mean_recall(lists: list[list[str]]) -> float:
        return 100 * float(np.mean([recall(lst, row["gold"], args.k) for lst, row in zip(lists, rows)]))

    print(f"{len(rows)} questions ({args.kinds}), recall@{args.k}")
    blanks = " |" * len(WEIGHTS)
    print("| ranking | alone | " + " | ".join(f"prior + {w} · signal" for w in WEIGHTS) + " |")
    print("|---|---|" + "---|" * len(WEIGHTS))
    print(f"| hybrid | {mean_recall([r['hybrid'] for r in rows]):.1f} |{blanks}")
    print(f"| kg4vd (final list) | {mean_recall([r['kg4vd'] for r in rows]):.1f} |{blanks}")
    for name in SIGNALS:
        alone = mean_recall([ranked(r, r["signals"][name] + 1e-9 * r["signals"]["prior"]) for r in rows])
        blends = [
            mean_recall([ranked(r, minmax(r["signals"]["prior"]) + w * minmax(r["signals"][name])) for r in rows])
            for w in WEIGHTS
        ]
        print(f"| {name} | {alone:.1f} | " + " | ".join(f"{b:.1f}" for b in blends) + " |")
    documents = sorted({r["document"] for r in rows})
    shuffled = np.random.RandomState(0).permutation(len(documents))
    folds_of = {documents[i]: j % 5 for j, i in enumerate(shuffled)}
    models = {fold: pairwise_ranker(rows, folds_of, fold) for fold in range(5)}
    learned = []
    for row in rows:
        weights = models[folds_of[row["document"]]]
        learned.append(ranked(row, row["features"] @ weights if weights is not None else row["signals"]["prior"]))
    print(f"| pairwise logistic ranker over all, 5 folds by document (held out) | {mean_recall(learned):.1f} |{blanks}")
    untrained = sum(model is None for model in models.values())
    if untrained:
        print(f"({untrained} of 5 folds had no other document's gold pages to learn from: the prior ranks them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
