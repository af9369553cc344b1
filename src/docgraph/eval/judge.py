"""The model side of the judged metrics: judge calls through prompt files, turned into the
plain data that ``eval.metrics`` / ``eval.metrics_judged`` score.

- ``judge_correct`` / ``judged_verdicts``: semantic-equivalence verdicts (KG4VD's short-answer
  accuracy), one per judge; ``metrics.judged_accuracy`` averages them over judges.
- ``extract_answer``: HVM-GraphRAG Appendix B.3.1's model-based answer extraction
  (ŷ = LLM_extract(y_raw)); without a model, ``normalize.strip_answer_prefix`` stands in.
- ``extract_formatted_answer``: MMLongBench-Doc's answer extraction — the short answer in
  the question's answer format (Integer, Float, String, List, None) or "Not answerable",
  scored by ``metrics_mmlongbench``; without a model, ``answer_format.extract_in_format``.
- ``finesure_judgement``: FineSurE's two judge steps — per answer sentence, fact checking
  against the reference summary and gold facts; per gold fact, alignment to answer
  sentences — as a ``FineSurEJudgement``.
- ``pairwise_judgement``: GraphRAG-style criteria judged in both answer orders, as a
  ``PairJudgement`` (``metrics_judged.win_rates`` keeps a win only when both orders agree).

Judges are ``ChatModel``s (usually ``ModelHub.chat("judge")``, or several by name);
every call has a JSON schema (the judge role's settings keep temperature 0), so replies are validated (and
repaired or re-asked by the models layer) and cached like every other model call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from ..models.base import ChatModel, user
from ..prompts import material, render_prompt
from ..text import sentences as split_sentences
from .metrics_judged import WIN_CRITERIA, FineSurEJudgement, PairJudgement
from .normalize import strip_answer_prefix

_PACKAGE = "docgraph.eval"


class CorrectnessVerdict(BaseModel):
    correct: bool
    reason: str = ""


class ExtractedAnswer(BaseModel):
    answer: str


class FormattedAnswer(BaseModel):
    """A short answer in MMLongBench-Doc's format; a list may come as a JSON list."""

    answer: str | list[str] | int | float

    def text(self) -> str:
        if isinstance(self.answer, list):
            return repr([str(item).strip() for item in self.answer])
        return str(self.answer).strip()


class SentenceLabel(BaseModel):
    sentence: int
    category: str
    reason: str = ""


class FaithfulnessLabels(BaseModel):
    sentences: list[SentenceLabel] = Field(default_factory=list)


class FactAlignment(BaseModel):
    fact: int
    covered: bool
    sentences: list[int] = Field(default_factory=list)


class AlignmentLabels(BaseModel):
    facts: list[FactAlignment] = Field(default_factory=list)


class CriterionVerdict(BaseModel):
    winner: Literal["1", "2", "tie"]
    reason: str = ""


class PairwiseVerdicts(BaseModel):
    comprehensiveness: CriterionVerdict
    diversity: CriterionVerdict
    empowerment: CriterionVerdict
    overall: CriterionVerdict


# Values that carry what a system answered or what a document says: fenced as material.
_MATERIAL_VALUES = frozenset({"response", "facts", "sentences", "answer_1", "answer_2"})
Reply = TypeVar("Reply", bound=BaseModel)


def _ask(judge: ChatModel, prompt: str, stage: str, schema: type[Reply], **values: str) -> Reply:
    fenced = _MATERIAL_VALUES | ({"reference"} if prompt == "finesure_faithfulness.md" else set())
    values = {k: material(v) if k in fenced else v for k, v in values.items()}
    result = judge.complete([user(render_prompt(_PACKAGE, prompt, **values))], stage=stage, schema=schema)
    if not isinstance(result.parsed, schema):
        raise ValueError(f"judge {getattr(judge, 'model', '?')} gave no {schema.__name__} for {prompt}")
    return result.parsed


def judge_correct(judge: ChatModel, question: str, reference: str | Sequence[str], response: str) -> bool:
    """Whether ``judge`` finds ``response`` semantically equivalent to the reference answer."""
    ref = reference if isinstance(reference, str) else " | ".join(reference)
    verdict = _ask(
        judge,
        "judge_accuracy.md",
        "eval.judge.accuracy",
        CorrectnessVerdict,
        question=question,
        reference=ref,
        response=response or "(empty response)",
    )
    return bool(verdict.correct)


def judged_verdicts(
    judges: Mapping[str, ChatModel], question: str, reference: str | Sequence[str], response: str
) -> dict[str, bool]:
    """One verdict per judge name (``metrics.judged_accuracy`` averages them over questions and judges)."""
    return {name: judge_correct(judge, question, reference, response) for name, judge in judges.items()}


def extract_answer(model: ChatModel | None, question: str, response: str, answer_format: str = "") -> str:
    """The short answer of a free-form response (B.3.1); model-free prefix stripping without a model."""
    if model is None or not response.strip():
        return strip_answer_prefix(response)
    parsed = _ask(
        model,
        "extract_answer.md",
        "eval.extract_answer",
        ExtractedAnswer,
        question=question,
        response=response,
        answer_format=answer_format or "any (string, number, list or yes/no)",
    )
    return parsed.answer.strip()


FORMAT_NAMES = {"Int": "Integer", "Float": "Float", "Str": "String", "List": "List", "None": "None"}


def extract_formatted_answer(model: ChatModel, question: str, response: str, answer_format: str) -> str:
    """The short answer of ``response`` in MMLongBench-Doc's ``answer_format``, by the answer
    model (prompt ``extract_answer_formatted.md``); an empty response is "Not answerable"."""
    if not response.strip():
        return "Not answerable"
    parsed = _ask(
        model,
        "extract_answer_formatted.md",
        "eval.extract_answer.formatted",
        FormattedAnswer,
        question=question,
        response=response,
        answer_format=FORMAT_NAMES.get(answer_format, "String"),
    )
    return parsed.text()


def numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1)) or "(none)"


def answer_sentences(answer: str) -> list[str]:
    """The sentences FineSurE labels (``text.sentences``; citation markers kept)."""
    return split_sentences(answer)


def finesure_judgement(
    judge: ChatModel, question: str, answer: str, reference: str, gold_facts: Sequence[str]
) -> FineSurEJudgement:
    """FineSurE labels of one answer by one judge (two calls: fact checking, key-fact alignment).

    A sentence the judge leaves unlabelled counts as unfaithful; numbers out of range are
    ignored. An answer without sentences makes no call (its scores are 0, see metrics_judged).
    """
    sents = answer_sentences(answer)
    if not sents:
        return FineSurEJudgement(sentence_faithful=[], sentence_aligned=[], fact_covered=[False] * len(gold_facts))
    listing = numbered(sents)
    labels = _ask(
        judge,
        "finesure_faithfulness.md",
        "eval.judge.finesure",
        FaithfulnessLabels,
        question=question,
        reference=reference or "(none)",
        facts=numbered(list(gold_facts)),
        sentences=listing,
    )
    faithful = [False] * len(sents)
    for label in labels.sentences:
        if 1 <= label.sentence <= len(sents):
            faithful[label.sentence - 1] = label.category.strip().lower() == "no error"
    alignment: dict[int, list[int]] = {}
    if gold_facts:
        aligned = _ask(
            judge,
            "finesure_alignment.md",
            "eval.judge.finesure",
            AlignmentLabels,
            question=question,
            facts=numbered(list(gold_facts)),
            sentences=listing,
        )
        for item in aligned.facts:
            if item.covered and 1 <= item.fact <= len(gold_facts):
                lines = [s - 1 for s in item.sentences if 1 <= s <= len(sents)]
                alignment.setdefault(item.fact - 1, []).extend(lines)
    covered_without_lines = [f for f, lines in alignment.items() if not lines]
    judgement = FineSurEJudgement.from_alignment(
        faithful, len(gold_facts), {f: lines for f, lines in alignment.items() if lines}
    )
    covered = list(judgement.fact_covered)
    for fact in covered_without_lines:  # covered, though the judge named no sentence
        covered[fact] = True
    return FineSurEJudgement(
        sentence_faithful=judgement.sentence_faithful, sentence_aligned=judgement.sentence_aligned, fact_covered=covered
    )


def pairwise_judgement(judge: ChatModel, judge_name: str, question: str, answer_a: str, answer_b: str) -> PairJudgement:
    """Verdicts on (A, B) in both orders: first A shown as Answer 1, then B shown as Answer 1."""

    def ask(first: str, second: str) -> dict[str, str]:
        parsed = _ask(
            judge,
            "pairwise.md",
            "eval.judge.pairwise",
            PairwiseVerdicts,
            question=question,
            answer_1=first or "(empty answer)",
            answer_2=second or "(empty answer)",
        )
        return {c: getattr(parsed, c).winner for c in WIN_CRITERIA}

    return PairJudgement(judge=judge_name, first_order=ask(answer_a, answer_b), second_order=ask(answer_b, answer_a))
