"""Settings of the baseline methods, with the defaults the papers' comparisons use.

The baselines read ``ctx.settings.baselines`` when the settings object has such a section
(``BaselineSettings``) and these defaults otherwise; ``retrieve``/``answer`` options of
the same names override them per call.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..base import MethodContext


class HippoRAGSettings(BaseModel):
    """HippoRAG 2 hyper-parameters (its paper's defaults where it gives them)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    synonym_threshold: float = Field(0.8, ge=0.0, le=1.0,
                                     description="phrase similarity for a synonym edge, on the cosine rescaled "
                                                 "so the corpus's median phrase pair is 0 (hipporag_graph)")
    synonym_top_k: int = Field(100, ge=1, description="most synonym neighbours considered per phrase")
    fact_top_k: int = Field(5, ge=1, description="query-matched facts whose phrases seed PPR")
    restart: float = Field(0.5, gt=0.0, le=1.0, description="PPR restart probability α (damping 0.5)")
    passage_node_weight: float = Field(0.05, ge=0.0,
                                       description="reset weight of passage nodes (× dense passage score)")
    max_phrase_words: int = Field(8, ge=1, description="longer subjects/objects are not phrase nodes")


class BaselineSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    chunk_words: int = Field(160, ge=20, description="most words per text chunk")
    top_k: int = Field(10, ge=1, description="chunks given to the answer model")
    top_pages: int = Field(10, ge=1, description="pages returned in Evidence.pages (and shown to `pages`)")
    hipporag: HippoRAGSettings = Field(default_factory=HippoRAGSettings)


def baseline_settings(ctx: MethodContext, options: dict[str, Any] | None = None) -> BaselineSettings:
    """The baseline settings of this context, with per-call ``options`` of the same names on top."""
    base = getattr(ctx.settings, "baselines", None)
    settings = base if isinstance(base, BaselineSettings) else BaselineSettings()
    if not options:
        return settings
    update = {k: v for k, v in options.items() if k in BaselineSettings.model_fields and k != "hipporag"}
    hippo = {k: v for k, v in options.items() if k in HippoRAGSettings.model_fields}
    out = settings.model_copy(update=update)
    if hippo:
        out = out.model_copy(update={"hipporag": settings.hipporag.model_copy(update=hippo)})
    return BaselineSettings.model_validate(out.model_dump())
