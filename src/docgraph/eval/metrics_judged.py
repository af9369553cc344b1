"""Long-answer metrics from judge outputs given as plain data (the model calls live elsewhere).

- FineSurE (KG4VD §5 / App. E.1, after Song et al. 2024): faithfulness = fraction of answer
  sentences judged free of factual errors; completeness = fraction of gold facts covered by
  the answer; conciseness = fraction of answer sentences that align with some gold fact.
  Per judge j and method b the mean score is divided by the same judge's mean score of the
  reference summary (the oracle), s̄_{j,b} / s̄_{j,oracle}; the normalised scores are then
  averaged over judges, and "overall" is the mean of the three dimensions.
- Pairwise win rates (GraphRAG-style criteria): each pair is judged in both answer orders;
  a win counts only when both orders pick the same answer, otherwise it is a tie; rates are
  computed per judge and averaged over judges (KG4VD App. E.1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

FINESURE_DIMENSIONS = ("faithfulness", "completeness", "conciseness")
WIN_CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")


@dataclass(frozen=True)
class FineSurEJudgement:
    """One judge's labels for one answer: per answer sentence whether it is faithful and
    whether it aligns with some gold fact, and per gold fact whether the answer covers it."""

    sentence_faithful: Sequence[bool]
    sentence_aligned: Sequence[bool]
    fact_covered: Sequence[bool]

    def __post_init__(self) -> None:
        if len(self.sentence_faithful) != len(self.sentence_aligned):
            raise ValueError("sentence_faithful and sentence_aligned must label the same sentences")

    @classmethod
    def from_alignment(
        cls, sentence_faithful: Sequence[bool], n_facts: int, alignment: Mapping[int, Sequence[int]]
    ) -> FineSurEJudgement:
        """From a fact → answer-sentence alignment (FineSurE's key-fact alignment output):
        ``alignment[f]`` lists the 0-based indices of the sentences that state gold fact ``f``."""
        n_sentences = len(sentence_faithful)
        aligned = [False] * n_sentences
        covered = [False] * n_facts
        for fact, sentences in alignment.items():
            if not 0 <= fact < n_facts:
                raise ValueError(f"alignment names fact {fact}, but there are {n_facts} facts")
            for sent in sentences:
                if not 0 <= sent < n_sentences:
                    raise ValueError(f"alignment names sentence {sent}, but there are {n_sentences} sentences")
                aligned[sent] = True
                covered[fact] = True
        return cls(sentence_faithful=list(sentence_faithful), sentence_aligned=aligned, fact_covered=covered)

    def scores(self) -> dict[str, float]:
        """The three FineSurE fractions. No sentences → faithfulness and conciseness 0 (an
        empty answer earns nothing); no gold facts → completeness NaN (undefined)."""
        n_s, n_f = len(self.sentence_faithful), len(self.fact_covered)
        return {
            "faithfulness": sum(map(bool, self.sentence_faithful)) / n_s if n_s else 0.0,
            "completeness": sum(map(bool, self.fact_covered)) / n_f if n_f else math.nan,
            "conciseness": sum(map(bool, self.sentence_aligned)) / n_s if n_s else 0.0,
        }


def _nanmean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


@dataclass
class FineSurEReport:
    """``normalized[dim]``: the judge-averaged oracle-normalised score (plus ``overall``);
    ``raw[judge][dim]`` and ``oracle[judge][dim]``: the per-judge means before normalising."""

    normalized: dict[str, float]
    raw: dict[str, dict[str, float]]
    oracle: dict[str, dict[str, float]]
    n_questions: int


def finesure_report(
    method: Mapping[str, Sequence[FineSurEJudgement]], oracle: Mapping[str, Sequence[FineSurEJudgement]]
) -> FineSurEReport:
    """FineSurE scores of one method, oracle-normalised per judge, averaged over judges.

    ``method[judge]`` and ``oracle[judge]`` hold one judgement per question (the oracle's
    judge the reference summary), same judges, same question count. NaN completeness
    entries are left out of the means. ``ValueError`` when a judge's oracle mean is 0 or
    undefined for a dimension (nothing to normalise by).
    """
    if not method or set(method) != set(oracle):
        raise ValueError(
            f"method and oracle need the same, non-empty set of judges: {sorted(method)} vs {sorted(oracle)}"
        )
    counts = {len(v) for v in method.values()} | {len(v) for v in oracle.values()}
    if len(counts) != 1 or 0 in counts:
        raise ValueError("every judge needs one judgement per question for the method and for the oracle")
    raw: dict[str, dict[str, float]] = {}
    ref: dict[str, dict[str, float]] = {}
    per_judge: dict[str, dict[str, float]] = {}
    for judge in sorted(method):
        m_scores = [j.scores() for j in method[judge]]
        o_scores = [j.scores() for j in oracle[judge]]
        raw[judge] = {d: _nanmean([s[d] for s in m_scores]) for d in FINESURE_DIMENSIONS}
        ref[judge] = {d: _nanmean([s[d] for s in o_scores]) for d in FINESURE_DIMENSIONS}
        per_judge[judge] = {}
        for dim in FINESURE_DIMENSIONS:
            denom = ref[judge][dim]
            if math.isnan(denom) or denom <= 0:
                raise ValueError(f"judge {judge!r} gives the reference a {dim} of {denom}; cannot normalise")
            per_judge[judge][dim] = raw[judge][dim] / denom
    normalized = {d: _nanmean([per_judge[j][d] for j in per_judge]) for d in FINESURE_DIMENSIONS}
    normalized["overall"] = _nanmean([normalized[d] for d in FINESURE_DIMENSIONS])
    return FineSurEReport(normalized=normalized, raw=raw, oracle=ref, n_questions=counts.pop())


Verdict = int | str | None
Outcome = Literal["a", "b", "tie"]

_FIRST = {"1", "a", "first", "answer 1", "answer1", "answer a"}
_SECOND = {"2", "b", "second", "answer 2", "answer2", "answer b"}
_TIE = {"0", "tie", "equal", "draw", "none", ""}


def _position(verdict: Verdict) -> int:
    """1 or 2: the position of the preferred answer as shown; 0 for a tie."""
    key = "" if verdict is None else str(verdict).strip().lower()
    if key in _FIRST:
        return 1
    if key in _SECOND:
        return 2
    if key in _TIE:
        return 0
    raise ValueError(f"unrecognised pairwise verdict {verdict!r}; use 1, 2 or 'tie'")


def order_consistent_winner(first_order: Verdict, second_order: Verdict) -> Outcome:
    """The winner of answers A and B from two presentations: ``first_order`` is the verdict
    when A was shown first, ``second_order`` when B was shown first (verdicts name the
    position: 1 / 2, or 'tie'). A win needs both orders to agree; anything else is a tie."""
    first, second = _position(first_order), _position(second_order)
    if first == 1 and second == 2:
        return "a"
    if first == 2 and second == 1:
        return "b"
    return "tie"


@dataclass(frozen=True)
class PairJudgement:
    """One judge's verdicts on one answer pair (A = the evaluated method, B = its opponent),
    per criterion, in both presentation orders."""

    judge: str
    first_order: Mapping[str, Verdict]
    second_order: Mapping[str, Verdict]


@dataclass(frozen=True)
class WinRate:
    """A's win / loss / tie fractions (averaged over judges) and ``delta`` = win − loss."""

    win: float
    loss: float
    tie: float
    n_pairs: int
    per_judge: dict[str, tuple[float, float, float]] = field(default_factory=dict)

    @property
    def delta(self) -> float:
        return self.win - self.loss


def win_rates(judgements: Sequence[PairJudgement], criteria: Sequence[str] = WIN_CRITERIA) -> dict[str, WinRate]:
    """Order-consistent win rates of A over B per criterion. Every judge must judge the same
    number of pairs; a criterion missing from a verdict map is a ``ValueError``."""
    if not judgements:
        raise ValueError("no pairwise judgements")
    by_judge: dict[str, list[PairJudgement]] = {}
    for item in judgements:
        by_judge.setdefault(item.judge, []).append(item)
    sizes = {len(v) for v in by_judge.values()}
    if len(sizes) != 1:
        raise ValueError(f"judges judged different numbers of pairs: { {j: len(v) for j, v in by_judge.items()} }")
    n_pairs = sizes.pop()
    out: dict[str, WinRate] = {}
    for criterion in criteria:
        per_judge: dict[str, tuple[float, float, float]] = {}
        for judge, items in sorted(by_judge.items()):
            tally = {"a": 0, "b": 0, "tie": 0}
            for item in items:
                if criterion not in item.first_order or criterion not in item.second_order:
                    raise ValueError(f"judge {judge!r} gave no {criterion!r} verdict in both orders")
                tally[order_consistent_winner(item.first_order[criterion], item.second_order[criterion])] += 1
            per_judge[judge] = (tally["a"] / n_pairs, tally["b"] / n_pairs, tally["tie"] / n_pairs)
        k = len(per_judge)
        out[criterion] = WinRate(
            win=sum(v[0] for v in per_judge.values()) / k,
            loss=sum(v[1] for v in per_judge.values()) / k,
            tie=sum(v[2] for v in per_judge.values()) / k,
            n_pairs=n_pairs,
            per_judge=per_judge,
        )
    return out
