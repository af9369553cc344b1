"""The model-driven page strategy: extractor and reflector prompts over the Set-of-Marks image.

Both calls get the annotated page image Î_i^(t) (components boxed and tagged by id; the
ones already covered greyed out), the component manifest (id, kind, text, tables as
Markdown; masked ones flagged), and the current page graph. The extractor also gets the
last feedback and the operations the controller rejected in the last round, each with
the rule that refused it and why (``prompts/extract_rejections.md``; at most
``MAX_REJECTIONS_SHOWN``, the rest counted; after a clean round the block is empty, so
that prompt is the one it was before rejections had a slot), and replies with a
``GraphPatch``; the reflector replies with a ``Feedback``. Prompts: ``prompts/extract.md``
and ``prompts/reflect.md``. Replies are parsed and validated by the model layer
(``schema=``); usage is accounted per stage (``kg4vd.extract``, ``kg4vd.reflect``). A
model without vision gets the manifest only.
"""

from __future__ import annotations

import json

from ...models.base import ChatModel, user
from ...models.chat.response_format import json_schema_format
from ...prompts import material, render_prompt
from ...types import Component, Page, Usage
from .controller import Rejection
from .loop import RoundInput
from .patch import GraphPatch, PageGraph
from .reflect import Feedback

MAX_COMPONENT_CHARS = 1500
MAX_REJECTIONS_SHOWN = 25


def _component_line(comp: Component, masked: frozenset[str]) -> str:
    content = " ".join(comp.content.split()) if comp.markdown is None else comp.markdown.strip()
    if len(content) > MAX_COMPONENT_CHARS:
        content = content[:MAX_COMPONENT_CHARS] + " …"
    flags = [comp.kind.name.lower()]
    if comp.furniture:
        flags.append("page furniture")
    if comp.id in masked:
        flags.append("covered, greyed out")
    body = f"\n{content}" if comp.markdown else f" {content}" if content else " (no text; see the image)"
    return f"[{comp.id}] ({', '.join(flags)}){body}"


def component_manifest(page: Page, masked: frozenset[str] = frozenset()) -> str:
    """The page's components in reading order, one entry each."""
    comps = sorted(page.components, key=lambda c: c.order)
    return "\n".join(_component_line(c, masked) for c in comps) or "(the page has no components)"


def _graph_json(graph: PageGraph) -> str:
    return json.dumps(graph.model_dump(), ensure_ascii=False, separators=(",", ":"))


def _feedback_json(feedback: Feedback | None) -> str:
    return "(none yet: this is the first round)" if feedback is None else feedback.model_dump_json()


def _rejection_line(rejection: Rejection) -> str:
    op = json.dumps(rejection.op, ensure_ascii=False, separators=(",", ":"))
    return f"- {rejection.target} {op} — rule {rejection.rule}: {rejection.message}"


def rejections_text(rejected: tuple[Rejection, ...]) -> str:
    """The extract prompt's rejections block (empty when the last round had none)."""
    if not rejected:
        return ""
    shown = [_rejection_line(r) for r in rejected[:MAX_REJECTIONS_SHOWN]]
    if len(rejected) > len(shown):
        shown.append(f"- … and {len(rejected) - len(shown)} more")
    count = f"{len(rejected)} operation{'s' if len(rejected) != 1 else ''}"
    return (
        "\n\n"
        + render_prompt(__package__, "extract_rejections.md", count=count, rejected=material("\n".join(shown))).rstrip()
    )


class ModelStrategy:
    """``PageStrategy`` on a chat/vision model (see the module docstring)."""

    name = "model"
    stop_when_idle = False

    def __init__(self, chat: ChatModel):
        self.chat = chat
        self.needs_image = bool(getattr(chat, "supports_vision", True))

    def _values(self, inp: RoundInput, graph: PageGraph) -> dict[str, str]:
        return {
            "schema": inp.schema.describe(),
            "manifest": material(component_manifest(inp.page, inp.masked)),
            "graph": material(_graph_json(graph)),
            "round": str(inp.round + 1),
            "max_rounds": str(inp.max_rounds),
            "page": str(inp.page.number),
        }

    def _images(self, inp: RoundInput) -> list:
        return [inp.image] if inp.image is not None and self.needs_image else []

    def extract(self, inp: RoundInput) -> tuple[GraphPatch, Usage]:
        prompt = render_prompt(
            __package__,
            "extract.md",
            feedback=material(_feedback_json(inp.feedback)),
            rejections=rejections_text(inp.rejected),
            **self._values(inp, inp.graph),
        )
        result = self.chat.complete([user(prompt, self._images(inp))], stage="kg4vd.extract", schema=GraphPatch)
        patch = result.parsed if isinstance(result.parsed, GraphPatch) else GraphPatch()
        return patch, result.usage

    def reflect(self, inp: RoundInput, graph: PageGraph) -> tuple[Feedback, Usage]:
        prompt = render_prompt(__package__, "reflect.md", **self._values(inp, graph))
        bound = json_schema_format(Feedback, max_items={"components": max(1, len(inp.page.components))})
        result = self.chat.complete(
            [user(prompt, self._images(inp))], stage="kg4vd.reflect", schema=Feedback, response_format=bound
        )
        feedback = result.parsed if isinstance(result.parsed, Feedback) else Feedback()
        return feedback, result.usage
