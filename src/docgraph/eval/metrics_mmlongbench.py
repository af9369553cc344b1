"""MMLongBench-Doc's own answer scoring: format-aware rules, Acc and "generalized" F1. Pure.

The benchmark (Ma et al., 2024) scores a short answer already extracted from the response
in the question's ``answer_format`` (``Int``, ``Float``, ``Str``, ``None``, ``List``):

- a string is *cleaned*: lower-cased, stripped, parenthesised text dropped, one surrounding
  quote at each end dropped, leading ``$`` and trailing ``%`` dropped;
- ``Int``: both read as integers (the prediction through ``float``, so "8.7" reads 8);
- ``Float``: both cleaned and read as floats; equal within 1 % relative tolerance, or equal
  after rounding both to ``max(min(decimals of each), 2)`` places; the gold, gold/100 and
  gold×100 are all accepted;
- ``Str`` / ``None``: cleaned; a gold that must match exactly (URL, ``.py``/``.ipynb`` file,
  "page …", a number or phone-like number, a.m./p.m. time, ``YYYY-MM(-DD)`` date, e-mail)
  scores 1 only for equality, anything else by ANLS (0 at or below 0.5);
- ``List``: both read as Python-literal lists (a prediction that is not one is a one-item
  list); different lengths score 0; items cleaned and sorted; numbers and must-match golds
  need all items equal, other lists score the minimum ANLS over the item pairs.

Anything that cannot be read scores 0. ``mmlongbench_acc_f1`` summarises a set: Acc is the
mean score; F1 the harmonic mean of recall (score sum over questions whose gold is not
"Not answerable" / their count) and precision (the same sum / count of predictions that
are not "Not answerable"), 0 when either count is zero. These are the numbers the
benchmark's leaderboard and the papers built on it (MAGE-RAG, M3DocRAG, MoLoRAG) report.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

NOT_ANSWERABLE = "Not answerable"
ANLS_THRESHOLD = 0.5

_PARENTHESISED = re.compile(r"\s*\([^)]*\)")
_EDGE_QUOTE = re.compile(r"^['\"]|['\"]$")
_NUMBER_LIKE = re.compile(r"\b\d+(-\d+|\s\d+)?\b")
_DATE = re.compile(r"\b\d{4}[-\s]\d{2}([-\s]\d{2})?\b")
_EMAIL = re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}")


def clean_answer(value: Any) -> str:
    """The benchmark's string cleaning (see module doc)."""
    text = str(value).lower().strip()
    text = _PARENTHESISED.sub("", text).strip()
    text = _EDGE_QUOTE.sub("", text).strip()
    text = text.strip().lstrip("$").strip()
    return text.strip().rstrip("%").strip()


def must_match_exactly(text: str) -> bool:
    """Whether a (cleaned) gold can only be matched exactly: URL, code file, "page …",
    number or phone-like number, a.m./p.m. time, YYYY-MM(-DD) date, e-mail address."""
    return (
        "https://" in text
        or text.endswith(".py")
        or text.endswith("ipynb")
        or text.startswith("page")
        or "a.m." in text
        or "p.m." in text
        or bool(_NUMBER_LIKE.fullmatch(text))
        or bool(_DATE.fullmatch(text))
        or bool(_EMAIL.fullmatch(text))
    )


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one character each)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def anls(gold: str, pred: str, threshold: float = ANLS_THRESHOLD) -> float:
    """Normalised Levenshtein similarity ``1 − dist / longer length`` (1 for two empty
    strings), 0 when it is at or below ``threshold``."""
    longer = max(len(gold.upper()), len(pred.upper()))
    similarity = 1.0 - (levenshtein(gold, pred) / longer if longer else 0.0)
    return 0.0 if similarity <= threshold else similarity


def _decimals(value: float) -> int:
    """Decimal places of a float as Python prints it (3 when it prints without a point)."""
    text = str(value)
    return len(text.split(".")[-1]) if "." in text else 3


def floats_equal(gold: float, pred: float) -> bool:
    """Float rule: gold, gold/100 or gold×100 within 1 % of the prediction, or equal to it
    after rounding both to max(min(decimals), 2) places."""
    for candidate in (gold / 100, gold, gold * 100):
        if math.isclose(candidate, pred, rel_tol=0.01):
            return True
        places = max(min(_decimals(pred), _decimals(candidate)), 2)
        if round(pred, places) == round(candidate, places):
            return True
    return False


def _as_list(value: Any) -> list[Any]:
    """A Python-literal list string read as a list; anything else a one-item list.
    ``ValueError`` for a string that starts like a list but is not one."""
    if isinstance(value, str) and value.startswith("["):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise ValueError(f"not a list literal: {value[:60]!r}") from exc
        value = parsed
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _score_int(gold: Any, pred: Any) -> float:
    try:
        return float(int(gold) == int(float(pred)))
    except (TypeError, ValueError, OverflowError):
        return 0.0


def _score_float(gold: Any, pred: Any) -> float:
    try:
        return float(floats_equal(float(clean_answer(gold)), float(clean_answer(pred))))
    except (TypeError, ValueError, OverflowError):
        return 0.0


def _score_string(gold: Any, pred: Any) -> float:
    gold_text, pred_text = clean_answer(gold), clean_answer(pred)
    if must_match_exactly(gold_text):
        return float(gold_text == pred_text)
    return anls(gold_text, pred_text)


def _score_list(gold: Any, pred: Any) -> float:
    try:
        gold_items, pred_items = _as_list(gold), _as_list(pred)
    except ValueError:
        return 0.0
    if len(gold_items) != len(pred_items):
        return 0.0
    gold_clean = sorted(clean_answer(x) for x in gold_items)
    pred_clean = sorted(clean_answer(x) for x in pred_items)
    if not gold_clean:  # the benchmark cannot score an empty gold list
        return 0.0
    if _is_number(gold_clean[0]) or must_match_exactly(gold_clean[0]):
        return float("-".join(gold_clean) == "-".join(pred_clean))
    return min(anls(g, p) for g, p in zip(gold_clean, pred_clean))


_SCORERS = {"Int": _score_int, "Float": _score_float, "Str": _score_string, "None": _score_string, "List": _score_list}
ANSWER_FORMATS = tuple(_SCORERS)


def mmlongbench_score(gold: Any, pred: Any, answer_format: str) -> float:
    """Score in [0, 1] of an extracted answer ``pred`` against ``gold`` under the rules of
    ``answer_format`` (see module doc); an unknown format is scored as a list, as the
    benchmark does."""
    return _SCORERS.get(answer_format, _score_list)(gold, pred)


def mmlongbench_acc_f1(samples: Iterable[Mapping[str, Any]]) -> tuple[float, float]:
    """(Acc, F1) over ``samples`` with ``answer`` (gold), ``pred`` (extracted answer) and
    ``score``; samples without a score are left out; (0, 0) when none has one."""
    scored = [s for s in samples if "score" in s]
    if not scored:
        return 0.0, 0.0
    acc = sum(float(s["score"]) for s in scored) / len(scored)
    answerable = [s for s in scored if s.get("answer") != NOT_ANSWERABLE]
    attempted = [s for s in scored if s.get("pred") != NOT_ANSWERABLE]
    if not answerable or not attempted:
        return acc, 0.0
    hits = sum(float(s["score"]) for s in answerable)
    recall, precision = hits / len(answerable), hits / len(attempted)
    return acc, (2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0)
