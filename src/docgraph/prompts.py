"""Prompt files: each method keeps its prompts as Markdown under its own ``prompts/`` folder.

Values marked as document material (``boundary.material``) are fenced with a token of the
rendered prompt's own (``boundary.new_token``), and the prompt's ``{{material_rule}}`` placeholder receives the
sentence that says fenced text is data, never instructions (``boundary``). A prompt given
material must carry that placeholder: rendering one that lacks it is a programming error.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from .boundary import Material, fence, material, new_token, rule

__all__ = ["MATERIAL_RULE", "fill_placeholders", "load_prompt", "material", "render_prompt"]

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
MATERIAL_RULE = "material_rule"


@cache
def load_prompt(package: str, name: str) -> str:
    """The text of ``<package>/prompts/<name>`` (e.g. ``load_prompt(__package__, "extract.md")``)."""
    return resources.files(package).joinpath("prompts", name).read_text(encoding="utf-8")


def render_prompt(package: str, name: str, **values: str) -> str:
    """The prompt with its ``{{key}}`` placeholders replaced in one pass: a value is never
    searched for placeholders itself (a page whose text contains ``{{graph}}`` stays as it
    is), and a placeholder without a value is kept. No other templating, so JSON braces stay.
    ``Material`` values are fenced (module docstring); ValueError when the prompt has material
    but no ``{{material_rule}}``."""
    return fill_placeholders(load_prompt(package, name), values, where=f"{package}/prompts/{name}")


def fill_placeholders(text: str, values: dict[str, str], where: str = "prompt") -> str:
    """``text`` with each ``{{key}}`` of ``values`` replaced, in a single pass (see ``render_prompt``)."""
    values = dict(values)
    if any(isinstance(v, Material) for v in values.values()) or "{{" + MATERIAL_RULE + "}}" in text:
        if "{{" + MATERIAL_RULE + "}}" not in text:
            raise ValueError(f"{where} is given document material but has no {{{{{MATERIAL_RULE}}}}}")
        token = new_token(text, *(f"{k}={v}" for k, v in sorted(values.items())))
        values = {k: fence(v, token) if isinstance(v, Material) else v for k, v in values.items()}
        values[MATERIAL_RULE] = rule(token)
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text)
