"""Prompt files: each method keeps its prompts as Markdown under its own ``prompts/`` folder."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def load_prompt(package: str, name: str) -> str:
    """The text of ``<package>/prompts/<name>`` (e.g. ``load_prompt(__package__, "extract.md")``)."""
    return resources.files(package).joinpath("prompts", name).read_text(encoding="utf-8")


def render_prompt(package: str, name: str, **values: str) -> str:
    """The prompt with ``{{key}}`` placeholders replaced (no other templating, so JSON braces stay)."""
    text = load_prompt(package, name)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text
