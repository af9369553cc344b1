"""KG4VD's query analyzer: one retrieval mode per question — local, multi_hop or document.

The mode picks the PPR policy and the evidence budgets (Table 8/9, ``KG4VDSettings``).
Two strategies, as the paper and DESIGN.md ask:

- **model**: the answer chat model reads only the question (``prompts/analyze.md``) and
  returns ``{"mode", "reason"}`` validated against :class:`QueryAnalysis`;
- **rules** (offline, deterministic): cue phrases. Document-level cues ("summarize",
  "overall", "throughout", "across the document", "main themes", "describe the scope /
  structure") → ``document``; comparison and composition cues ("compare", "difference",
  "both", "and then", "which … that", "how did X affect Y", "relationship between",
  named entities joined by and/or/vs, three or more named entities) → ``multi_hop``;
  anything else → ``local``.

Precedence in :func:`choose_mode`: an explicit ``mode=`` option, then the
``fixed_mode`` setting (the "fixed document-mode PPR" ablation), then the model when an
answer model is configured, else the rules. A model failure falls back to the rules and
says so in the decision's reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from ...errors import InputError, ModelError
from ...models.base import user
from ...prompts import render_prompt
from ...types import Usage

if TYPE_CHECKING:
    from ..base import MethodContext

ModeName = Literal["local", "multi_hop", "document"]
MODES: tuple[str, ...] = ("local", "multi_hop", "document")
STAGE = "kg4vd.analyze"


class QueryAnalysis(BaseModel):
    """The analyzer model's structured reply."""

    mode: ModeName
    reason: str = Field("", description="one short sentence")


@dataclass
class ModeDecision:
    """The chosen mode, who chose it (option / config / model / rules) and why."""

    mode: str
    source: Literal["option", "config", "model", "rules"]
    reason: str
    usage: Usage = field(default_factory=Usage)


_I = re.IGNORECASE
_DOCUMENT_CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bsummar(?:y|ies|ize[sd]?|ise[sd]?|izing|ising)\b", _I), "asks for a summary"),
    (re.compile(r"\b(?:overall|overview|throughout)\b", _I), "asks about the whole"),
    (
        re.compile(
            r"\bacross (?:the |this |all |these |its |multiple |several |different )?(?:whole |entire )?"
            r"(?:document|report|book|textbook|paper|chapters|sections|pages|slides|deck|units|years)\b",
            _I,
        ),
        "asks across the document",
    ),
    (
        re.compile(
            r"\b(?:main|major|central|key|recurring|common) (?:themes?|topics?|ideas?|points?|arguments?|"
            r"messages?|findings|takeaways?|trends?)\b",
            _I,
        ),
        "asks for main themes",
    ),
    (
        re.compile(r"\b(?:whole|entire) (?:document|report|book|textbook|paper|deck|presentation|chapter)\b", _I),
        "asks about the whole document",
    ),
    (
        re.compile(
            r"\b(?:describe|explain|outline|characteri[sz]e)\b.*\b(?:scope|structure|organi[sz]ation|"
            r"evolution|development)\b",
            _I,
        ),
        "asks to describe scope or structure",
    ),
    (
        re.compile(
            r"\bhow (?:is|are|does|do) (?:the|this) (?:document|report|book|textbook|paper|preface|deck)\b"
            r".*\b(?:organi[sz]ed|structured|frames?|argues?|approach(?:es)?|present)\b",
            _I,
        ),
        "asks how the document is framed",
    ),
)
_MULTI_HOP_CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bcompar(?:e|ed|es|ing|ison|isons)\b|\bcontrast\b", _I), "asks for a comparison"),
    (
        re.compile(r"\bdifferences?\b|\bdiffers?\b|\bdifferent from\b|\bsimilarit(?:y|ies)\b", _I),
        "asks for a difference or similarity",
    ),
    (re.compile(r"\b(?:vs\.?|versus)\s", _I), "opposes two things"),
    (re.compile(r"\bboth\b", _I), "asks about two things at once"),
    (re.compile(r"\band then\b", _I), "chains two steps"),
    (
        re.compile(r"\b(?:relationship|relation|connection|link|correlation) (?:between|among)\b", _I),
        "asks for a relation between things",
    ),
    (
        re.compile(
            r"\bhow (?:did|does|do|has|have|will|would|might|could|can) .+?\b(?:affect|influence|impact|"
            r"change|shape|lead to|contribute to|cause|relate to)\b",
            _I,
        ),
        "asks how one thing affects another",
    ),
    (
        re.compile(r"\b(?:led|leads|lead) to\b|\bresult(?:ed|s)? in\b|\bcaused\b|\bbecause of\b", _I),
        "asks about cause and effect",
    ),
    (re.compile(r"\bwhich\b[^?]*?\b(?:that|who|whose)\b", _I), "chains a relative clause (which … that)"),
)
# A capitalised span: one or more capitalised words (digits allowed after the first word).
_CAP_SPAN = r"[A-Z][\w'’\-]*(?:\s+(?:of\s+|the\s+)?[A-Z0-9][\w'’\-]*)*"
_JOINED_NAMES = re.compile(rf"{_CAP_SPAN}\s*,?\s+(?:and|or|vs\.?|versus)\s+{_CAP_SPAN}")
_NAME_SPAN = re.compile(_CAP_SPAN)


def named_spans(query: str) -> list[str]:
    """Capitalised spans of the question, the question's first word excluded (it is
    capitalised anyway): a cheap stand-in for named entities."""
    spans = []
    for match in _NAME_SPAN.finditer(query):
        text = match.group(0)
        if match.start() == len(query) - len(query.lstrip()):
            words = text.split(maxsplit=1)
            if len(words) < 2:
                continue
            text = words[1]
        spans.append(text)
    return spans


def rule_mode(query: str) -> tuple[str, str]:
    """(mode, reason) by cue phrases; deterministic, no model."""
    for pattern, reason in _DOCUMENT_CUES:
        if pattern.search(query):
            return "document", reason
    for pattern, reason in _MULTI_HOP_CUES:
        if pattern.search(query):
            return "multi_hop", reason
    body = query[len(query) - len(query.lstrip()) :]
    joined = _JOINED_NAMES.search(body)
    if joined and joined.start() > 0:
        return "multi_hop", "names several entities together"
    if len(set(named_spans(query))) >= 3:
        return "multi_hop", "names three or more entities"
    return "local", "a single fact lookup"


def validate_mode(mode: str | None) -> str | None:
    """``None`` for automatic choice ("auto" or None); the mode name otherwise."""
    if mode is None or mode == "auto":
        return None
    if mode not in MODES:
        raise InputError(f"unknown KG4VD mode {mode!r}; use auto, local, multi_hop or document")
    return mode


def model_mode(ctx: MethodContext, query: str) -> ModeDecision | None:
    """The analyzer model's choice; None when no answer model is configured."""
    chat = ctx.models.chat("answer")
    if chat is None:
        return None
    prompt = render_prompt(__package__, "analyze.md", question=query.strip())
    try:
        result = chat.complete([user(prompt)], stage=STAGE, schema=QueryAnalysis)
    except ModelError as exc:
        mode, reason = rule_mode(query)
        return ModeDecision(mode, "rules", f"analyzer model failed ({exc}); rules: {reason}", Usage(failures=1))
    parsed = result.parsed
    assert isinstance(parsed, QueryAnalysis)
    return ModeDecision(parsed.mode, "model", parsed.reason, result.usage)


def choose_mode(ctx: MethodContext, query: str, requested: str | None = None) -> ModeDecision:
    """The retrieval mode for ``query`` (see the module docstring for the precedence)."""
    explicit = validate_mode(requested)
    if explicit is not None:
        return ModeDecision(explicit, "option", "requested")
    fixed = ctx.settings.kg4vd.fixed_mode
    if fixed is not None:
        return ModeDecision(fixed, "config", "kg4vd.fixed_mode")
    decision = model_mode(ctx, query)
    if decision is not None:
        return decision
    mode, reason = rule_mode(query)
    return ModeDecision(mode, "rules", reason)
