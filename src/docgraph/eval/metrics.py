"""Short-answer and retrieval metrics, and per-category aggregation. Pure functions.

Short answers follow HVM-GraphRAG Appendix B.3 (see :mod:`docgraph.eval.normalize`): EM and
token F1 on the extracted answer, containment accuracy on the raw response. A gold given
as a list is a set of acceptable alternatives (aliases, several annotators): a prediction
gets its best score over them. Unanswerable questions are scored as MMLongBench-Doc does:
when the gold says "Not answerable", a prediction is correct iff it also declines.
MMLongBench-Doc's own format-aware scoring (Acc / F1) lives in ``metrics_mmlongbench`` and is
re-exported here (``mmlongbench_score``, ``mmlongbench_acc_f1``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from . import metrics_mmlongbench as _mmlongbench
from .normalize import answer_tokens, normalize_answer

H = TypeVar("H", bound=Hashable)
Gold = str | Sequence[str]
mmlongbench_score = _mmlongbench.mmlongbench_score  # MMLongBench-Doc's own protocol
mmlongbench_acc_f1 = _mmlongbench.mmlongbench_acc_f1


def _alternatives(gold: Gold) -> list[str]:
    return [gold] if isinstance(gold, str) else [str(g) for g in gold]


def exact_match(prediction: str, gold: Gold) -> float:
    """1.0 when 𝒩ℒ(prediction) equals 𝒩ℒ of some gold alternative, else 0.0 (B.3.3)."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in _alternatives(gold)))


def _f1(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, gold: Gold) -> float:
    """Token F1 of B.3.4, best over gold alternatives. T ∩ T is a multiset intersection
    (each token counts as often as it occurs in both); both empty → 1.0, one empty → 0.0."""
    pred = answer_tokens(prediction)
    return max(_f1(pred, answer_tokens(g)) for g in _alternatives(gold))


def containment(raw_prediction: str, gold: Gold) -> float:
    """Containment accuracy of B.3.2: 1.0 when 𝒩ℒ(gold) occurs in 𝒩ℒ(raw response) as whole
    tokens, for some alternative. An alternative that normalises to nothing must match an
    empty response."""
    raw = f" {normalize_answer(raw_prediction)} "
    for alt in _alternatives(gold):
        norm = normalize_answer(alt)
        if (norm and f" {norm} " in raw) or (not norm and not raw.strip()):
            return 1.0
    return 0.0


_STRONG_REFUSALS = re.compile(
    r"\b(?:not answerable|unanswerable|no answer|cannot be answered|can ?not be answered|"
    r"(?:cannot|can ?not|unable to|impossible to) (?:answer|determine|tell|be determined|find|locate|identify)|"
    r"cannot be determined|can ?not be determined|is not possible to (?:answer|determine|tell)|"
    r"i (?:do not|don ?t) know|there is no (?:such|mention|information|data|evidence))\b"
)
_NEGATED_VERB = re.compile(
    r"\b(?:not|never|nor)\s+(?:\w+\s+){0,2}?(?:contain|mention|provid|specif|includ|stat|sa[iy]|giv|show|"
    r"indicat|list|report|disclos|discuss|describ|cover|address|found|availab|present)\w*\b"
)
_SOURCE = re.compile(
    r"\b(?:document|text|context|report|passage|page|paper|article|image|figure|chart|table|slide|manual|"
    r"evidence|information|source|material|excerpt|provided)s?\b"
)
_NO_INFORMATION = re.compile(
    r"\b(?:no|not enough|insufficient|lack of|lacks)\s+(?:relevant\s+|specific\s+|sufficient\s+|such\s+|"
    r"further\s+|additional\s+|enough\s+|clear\s+|explicit\s+)?(?:information|evidence|details|context)\b"
)
_YES_NO_START = re.compile(r"^\W*(?:yes|no)\b")


def is_refusal(text: str | None) -> bool:
    """Whether a response declines to answer ("Not answerable", "The document does not
    mention …", "There is insufficient information …", "I don't know").

    Plain short answers such as "No", "None" or "0" are not refusals, and a response that
    starts with "yes" / "no" ("No, the table does not list it") only counts when it says so
    outright ("No answer", "… cannot be determined"). Apostrophes and case do not matter;
    a refusal anywhere in the response counts. An empty response is a refusal.
    """
    if not text or not text.strip():
        return True
    low = re.sub(r"[\u2018\u2019`']", " ", text.lower())
    low = re.sub(r"\s+", " ", low).strip()
    low = re.sub(r"\b(do|does|did|is|are|was|were|has|have|had|can|could)n t\b", r"\1 not", low)
    if _STRONG_REFUSALS.search(low) or _NO_INFORMATION.search(low):
        return True
    if _YES_NO_START.match(low):
        return False
    return bool(_NEGATED_VERB.search(low) and _SOURCE.search(low))


def is_unanswerable_gold(gold: Gold) -> bool:
    """Whether the gold marks an unanswerable question ("Not answerable", Qasper's "Unanswerable")."""
    alternatives = _alternatives(gold)
    return bool(alternatives) and all(normalize_answer(g) in ("not answerable", "unanswerable") for g in alternatives)


@dataclass(frozen=True)
class ShortAnswerScore:
    """Per-question scores in [0, 1]: ``em`` and ``f1`` on the extracted answer, ``acc`` on the raw one."""

    em: float
    f1: float
    acc: float
    unanswerable: bool = False


def score_short_answer(raw_prediction: str, gold: Gold, extracted: str | None = None) -> ShortAnswerScore:
    """EM / F1 / containment of one response (``extracted`` defaults to ``raw_prediction``).

    Unanswerable gold: every score is 1.0 iff the response is a refusal (MMLongBench-Doc).
    Answerable gold with a refusal: every score is 0.0.
    """
    short = raw_prediction if extracted is None else extracted
    if is_unanswerable_gold(gold):
        ok = float(is_refusal(raw_prediction) or is_refusal(short))
        return ShortAnswerScore(ok, ok, ok, unanswerable=True)
    if is_refusal(short):
        return ShortAnswerScore(0.0, 0.0, 0.0)
    return ShortAnswerScore(exact_match(short, gold), token_f1(short, gold), containment(raw_prediction, gold))


def judged_accuracy(verdicts_by_judge: Mapping[str, Sequence[bool]]) -> float:
    """Model-judged accuracy: each judge's mean verdict, averaged over judges (KG4VD App. E.1)."""
    if not verdicts_by_judge:
        raise ValueError("no judges")
    lengths = {len(v) for v in verdicts_by_judge.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError("every judge must give one verdict per question (and there must be questions)")
    return sum(sum(map(bool, v)) / len(v) for v in verdicts_by_judge.values()) / len(verdicts_by_judge)


def _unique(ranked: Iterable[H]) -> list[H]:
    seen: set[H] = set()
    out: list[H] = []
    for x in ranked:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def recall_at_k(ranked: Sequence[H], gold: Iterable[H], k: int) -> float:
    """Fraction of the gold items among the first ``k`` distinct ranked items.
    ``ValueError`` for empty gold (exclude such questions instead)."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall is undefined without gold items")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return len(gold_set.intersection(_unique(ranked)[:k])) / len(gold_set)


def reciprocal_rank(ranked: Sequence[H], gold: Iterable[H]) -> float:
    """1 / rank of the first gold item among the distinct ranked items; 0.0 when none is ranked."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("reciprocal rank is undefined without gold items")
    for rank, item in enumerate(_unique(ranked), start=1):
        if item in gold_set:
            return 1.0 / rank
    return 0.0


def valid_gold_pages(gold_pages: Iterable[tuple[str, int]], page_counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Gold ``(doc_id, page)`` pairs that exist: 1 ≤ page ≤ the document's page count.
    Documents missing from ``page_counts`` keep their pages."""
    out = []
    for doc_id, page in gold_pages:
        count = page_counts.get(doc_id)
        if page >= 1 and (count is None or page <= count):
            out.append((doc_id, page))
    return out


@dataclass
class RetrievalSummary:
    """Mean recall@k and MRR over the questions that have gold evidence.

    ``per_question`` holds, per evaluated question (in input order, excluded ones skipped),
    ``{"recall@k": …, "mrr": …}``; ``excluded`` lists the input positions left out for
    having no valid gold."""

    recall: dict[int, float]
    mrr: float
    n_evaluated: int
    n_excluded: int
    per_question: list[dict[str, float]] = field(default_factory=list)
    excluded: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {f"recall@{k}": v for k, v in self.recall.items()}
        out.update(mrr=self.mrr, n_evaluated=self.n_evaluated, n_excluded=self.n_excluded)
        return out


def retrieval_summary(
    rankings: Sequence[Sequence[H]], golds: Sequence[Iterable[H]], ks: Sequence[int] = (1, 5, 10)
) -> RetrievalSummary:
    """Recall@k for each k and MRR, averaged over questions with non-empty gold; questions
    without gold are excluded and counted. Means are NaN when nothing is evaluated."""
    if len(rankings) != len(golds):
        raise ValueError(f"{len(rankings)} rankings for {len(golds)} gold sets")
    per_question: list[dict[str, float]] = []
    excluded: list[int] = []
    for position, (ranked, gold) in enumerate(zip(rankings, golds)):
        gold_set = set(gold)
        if not gold_set:
            excluded.append(position)
            continue
        row = {f"recall@{k}": recall_at_k(ranked, gold_set, k) for k in ks}
        row["mrr"] = reciprocal_rank(ranked, gold_set)
        per_question.append(row)
    n = len(per_question)

    def mean(key: str) -> float:
        return sum(r[key] for r in per_question) / n if n else math.nan

    return RetrievalSummary(
        recall={k: mean(f"recall@{k}") for k in ks},
        mrr=mean("mrr"),
        n_evaluated=n,
        n_excluded=len(excluded),
        per_question=per_question,
        excluded=excluded,
    )


@dataclass(frozen=True)
class CategoryMean:
    mean: float
    count: int


def mean_by_category(
    values: Sequence[float],
    categories: Sequence[str | Iterable[str] | None],
    missing: str = "none",
    overall: str | None = "overall",
) -> dict[str, CategoryMean]:
    """Mean of ``values`` per category. A question may belong to several categories (e.g.
    evidence sources) and then counts in each (once per distinct category); one with none
    counts under ``missing``. NaN values are skipped. With ``overall`` set, that key holds
    the mean over all questions. Categories are sorted by name, ``overall`` first."""
    if len(values) != len(categories):
        raise ValueError(f"{len(values)} values for {len(categories)} category entries")
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for value, cats in zip(values, categories):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        names = [cats] if isinstance(cats, str) else list(dict.fromkeys(cats or []))
        for name in names or [missing]:
            sums[name] = sums.get(name, 0.0) + float(value)
            counts[name] = counts.get(name, 0) + 1
    out: dict[str, CategoryMean] = {}
    if overall is not None:
        kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        out[overall] = CategoryMean(sum(kept) / len(kept) if kept else math.nan, len(kept))
    for name in sorted(sums):
        out[name] = CategoryMean(sums[name] / counts[name], counts[name])
    return out
