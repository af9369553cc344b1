"""Short answers in MMLongBench-Doc's answer formats, read from a response without a model.

The benchmark scores an answer only after it has been reduced to the question's format
(``Int``, ``Float``, ``Str``, ``None``, ``List``; see ``eval.metrics_mmlongbench``). With an
answer model that reduction is a model call (``eval.judge.extract_formatted_answer``);
offline, ``extract_in_format`` does it by rule:

- a response that declines (``eval.metrics.is_refusal``; offline, one that found no
  evidence) → ``"Not answerable"``;
- ``Int``: the first integer of the response that the question does not already state
  (thousands separators and the words "one" … "twenty" understood); a decimal is truncated;
- ``Float``: the first such number, preferring one with a decimal point or a percent sign,
  written with its ``%`` when it had one;
- ``List``: the items of the first line or sentence (split at commas, semicolons, "and",
  bullets), written as a Python list literal as the benchmark's golds are;
- ``Str`` / ``None``: the first sentence, lead-ins ("The answer is …") and a final full stop
  dropped; "Yes" / "No" when a yes/no question's answer starts with one.

``response_body`` first removes what docgraph adds around an answer: the offline notice,
bullets, quotation marks and citation markers ("[2]").
"""

from __future__ import annotations

import re

from ..methods.answers.extractive import FALLBACK_NOTHING_FOUND, FALLBACK_NOTICE, NOTHING_FOUND, OFFLINE_NOTICE
from ..text import sentences
from .metrics import is_refusal
from .metrics_mmlongbench import NOT_ANSWERABLE
from .normalize import strip_answer_prefix

_CITATION = re.compile(r"\s*\[\d+(?:\s*[,;–-]\s*\d+)*\]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_QUOTES = str.maketrans({"\u201c": "", "\u201d": "", "\u2018": "'", "\u2019": "'"})
_NUMBER = re.compile(r"(?<![\w.])(-?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(\s?%|\s?percent\b)?", re.IGNORECASE)
_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
_WORD_NUMBER = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)
_LIST_SPLIT = re.compile(r"\s*(?:;|,\s*(?:and\s+|or\s+)?|\s+and\s+|\s*\n\s*)\s*")
_YES_NO_QUESTION = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|"
    r"shall|may|might|must)\b",
    re.IGNORECASE,
)
_YES_NO_ANSWER = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def response_body(response: str) -> str:
    """The answer text itself: offline notice, bullets, curly quotes and citation markers removed."""
    text = response or ""
    for nothing in (NOTHING_FOUND, FALLBACK_NOTHING_FOUND):
        text = text.replace(nothing, NOT_ANSWERABLE)
    for notice in (OFFLINE_NOTICE, FALLBACK_NOTICE):  # the fallback answer's notice (the model failed)
        text = text.replace(notice, "")
    text = _CITATION.sub("", text.translate(_QUOTES))
    text = _BULLET.sub("", text)
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _numbers(text: str) -> list[tuple[str, bool]]:
    """(number without $ and separators, had a percent sign) in order of appearance, digit
    numbers and number words alike."""
    found: list[tuple[int, str, bool]] = []
    for match in _NUMBER.finditer(text):
        found.append((match.start(), match.group(1).replace("$", "").replace(",", ""), bool(match.group(2))))
    for match in _WORD_NUMBER.finditer(text):
        found.append((match.start(), str(_WORDS[match.group(1).lower()]), False))
    return [(value, percent) for _, value, percent in sorted(found)]


def _fresh_numbers(body: str, question: str) -> list[tuple[str, bool]]:
    """The body's numbers, those the question states itself moved to the end."""
    stated = {value for value, _ in _numbers(question)}
    numbers = _numbers(body)
    return [n for n in numbers if n[0] not in stated] + [n for n in numbers if n[0] in stated]


def _first_clause(body: str) -> str:
    first_line = body.split("\n", 1)[0]
    found = sentences(first_line)
    return (found[0] if found else first_line).strip()


def _as_int(body: str, question: str) -> str:
    for value, _ in _fresh_numbers(body, question):
        try:
            return str(int(float(value)))
        except ValueError:
            continue
    return _as_string(body, question)


def _as_float(body: str, question: str) -> str:
    numbers = _fresh_numbers(body, question)
    preferred = [n for n in numbers if "." in n[0] or n[1]] or numbers
    if not preferred:
        return _as_string(body, question)
    value, percent = preferred[0]
    return f"{value}%" if percent else value


def _as_list(body: str, question: str) -> str:
    lines = [strip_answer_prefix(line) for line in body.split("\n")]
    if len(lines) > 1 and all(len(line.split()) <= 5 for line in lines):
        items = lines  # one item a line, as a bulleted answer gives them
    else:
        clause = strip_answer_prefix(_first_clause(body))
        if ":" in clause:
            clause = clause.rsplit(":", 1)[1]
        items = _LIST_SPLIT.split(clause)
    items = [item.strip(" .") for item in items if item.strip(" .")]
    return repr(items)


def _as_string(body: str, question: str) -> str:
    answer = strip_answer_prefix(_first_clause(body))
    if _YES_NO_QUESTION.match(question or "") and (match := _YES_NO_ANSWER.match(answer)):
        return match.group(1).capitalize()
    return answer


_EXTRACTORS = {"Int": _as_int, "Float": _as_float, "List": _as_list, "Str": _as_string, "None": _as_string}


def extract_in_format(response: str, answer_format: str, question: str = "") -> str:
    """The short answer of ``response`` in ``answer_format`` (see module doc); an unknown
    format is treated as ``Str``. Never raises on odd text."""
    body = response_body(response)
    quoted = any(n in (response or "") for n in (OFFLINE_NOTICE, FALLBACK_NOTICE))  # quotes never decline
    if not body or body == NOT_ANSWERABLE or (not quoted and is_refusal(body)):
        return NOT_ANSWERABLE
    return _EXTRACTORS.get(answer_format, _as_string)(body, question)
