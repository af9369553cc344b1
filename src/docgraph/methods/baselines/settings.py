"""Settings of the baseline methods, with the defaults the papers' comparisons use.

The sections themselves live in ``docgraph.config`` (``[baselines]`` and
``[baselines.hipporag]`` in docgraph.toml); ``retrieve``/``answer`` options of the same
names override the query-time ones per call. Build-time fields (``BUILD_FIELDS``) are not
per-call options: a build after changing them rebuilds the index (``index_version``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ...config import BaselineSettings, HippoRAGSettings
from ...errors import InputError
from ..base import MethodContext, check_options

__all__ = ["BaselineSettings", "HippoRAGSettings", "baseline_settings", "query_options"]

BUILD_FIELDS = frozenset({"chunk_words", "max_phrase_words"})


def query_options(method: str) -> list[str]:
    """The per-call options ``method`` (a baseline's name) takes."""
    names = [k for k in BaselineSettings.model_fields if k != "hipporag" and k not in BUILD_FIELDS]
    if method == "hipporag":
        names += [k for k in HippoRAGSettings.model_fields if k not in BUILD_FIELDS]
    return names


def baseline_settings(ctx: MethodContext, options: dict[str, Any] | None = None, method: str = "") -> BaselineSettings:
    """The workspace's ``[baselines]`` settings with per-call ``options`` of ``method`` on top;
    an option ``method`` does not take is an ``InputError`` naming those it takes."""
    settings = ctx.settings.baselines
    if not options:
        return settings
    check_options(method, options, query_options(method))
    update = {k: v for k, v in options.items() if k in BaselineSettings.model_fields}
    hippo = {k: v for k, v in options.items() if k in HippoRAGSettings.model_fields}
    try:
        data = settings.model_dump()
        data.update(update)
        data["hipporag"].update(hippo)
        return BaselineSettings.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"invalid {method} option(s): {exc}") from exc
