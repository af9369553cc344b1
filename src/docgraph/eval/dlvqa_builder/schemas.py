"""The builder's data: what each model call must return (validated by the model layer), and
the artifacts the stages hand on (and ``--review`` writes as editable JSONL).

Facts carry page-level provenance (``page``) and the ids of the components they come from
(``components``: P1, T1, IM1 … of that page). A ``Cluster`` lists fact ids; cluster -1 holds
the noise points, which are never asked about.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

FactType = Literal["text", "visual"]
_VISUAL_WORDS = ("visual", "image", "figure", "chart", "map", "diagram", "photo", "illustration", "picture")


def fact_type(value: object) -> str:
    """ "text" or "visual" for the names a model gives the two kinds ("textual", "figure" …)."""
    name = str(value or "").strip().lower()
    return "visual" if any(word in name for word in _VISUAL_WORDS) else "text"


# ---------------------------------------------------------------------- model replies
class SummaryReply(BaseModel):
    summary: str


class FactDraft(BaseModel):
    type: FactType = "text"
    text: str
    components: list[str] = Field(default_factory=list)

    @field_validator("type", mode="before")
    @classmethod
    def _kind(cls, value: object) -> str:
        return fact_type(value)


class FactsReply(BaseModel):
    facts: list[FactDraft] = Field(default_factory=list)


class QuestionReply(BaseModel):
    title: str = ""
    question: str
    reference_summary: str
    topics: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------- artifacts
class Fact(FactDraft):
    """One grounded atomic fact; ``id`` is unique within its document (``p<page>.<n>``)."""

    id: str
    page: int = Field(ge=1)


class Cluster(BaseModel):
    """Fact ids grouped by HDBSCAN (``cluster`` -1: noise). ``keep`` False: removed in review."""

    cluster: int
    fact_ids: list[str]
    keep: bool = True


class PageSummary(BaseModel):
    page: int = Field(ge=1)
    summary: str


class DocumentSummary(BaseModel):
    summary: str
