"""Prompt files: each method keeps its prompts as Markdown under its own ``prompts/`` folder."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@lru_cache(maxsize=None)
def load_prompt(package: str, name: str) -> str:
    """The text of ``<package>/prompts/<name>`` (e.g. ``load_prompt(__package__, "extract.md")``)."""
    return resources.files(package).joinpath("prompts", name).read_text(encoding="utf-8")


def render_prompt(package: str, name: str, **values: str) -> str:
    """The prompt with its ``{{key}}`` placeholders replaced in one pass: a value is never
    searched for placeholders itself (a page whose text contains ``{{graph}}`` stays as it
    is), and a placeholder without a value is kept. No other templating, so JSON braces stay."""
    return fill_placeholders(load_prompt(package, name), values)


def fill_placeholders(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{{key}}`` of ``values`` replaced, in a single pass (see ``render_prompt``)."""
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text)
