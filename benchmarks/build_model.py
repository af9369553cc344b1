"""The scripted model of ``build.py``'s scripted run: it answers KG4VD's prompts the way the
offline strategy and judge would, so a model-driven build can be timed and counted with no
model (``build.py``'s module doc)."""

from __future__ import annotations

import re
from typing import Any

_FLAGS = re.compile(r"\[([A-Z]+\d+)\] \([^)]*\)")


def manifest_key(text: str) -> str:
    """The component manifest of a prompt without its per-round flags (masking)."""
    return _FLAGS.sub(r"[\1]", text)


def _between(prompt: str, start: str, end: str) -> str:
    return prompt.split(start, 1)[1].split(end, 1)[0].strip()


class OfflineModel:
    """Answers KG4VD prompts the way the offline strategy and judge would (see module doc)."""

    def __init__(self, ws) -> None:
        from docgraph.methods.kg4vd.model_strategy import component_manifest
        from docgraph.methods.kg4vd.offline import OfflineStrategy
        from docgraph.methods.kg4vd.schemas import get_schema

        self.schema = get_schema(ws.settings.kg4vd.schema_preset)
        self.strategy = OfflineStrategy(ws.models.nlp)
        self.pages = {manifest_key(component_manifest(p)): p for p in ws.store.iter_pages()}

    def __call__(self, req) -> Any:
        from docgraph.methods.kg4vd.loop import RoundInput
        from docgraph.methods.kg4vd.patch import PageGraph
        from docgraph.methods.kg4vd.reflect import Feedback, coverage_feedback

        prompt = req.prompt
        if req.stage == "kg4vd.judge":
            return self.judge(prompt)
        end = "\n\nPage graph after" if req.stage == "kg4vd.reflect" else "\n\nCurrent page graph"
        page = self.pages[manifest_key(_between(prompt, "in reading order:\n", end))]
        if req.stage == "kg4vd.reflect":
            graph = PageGraph.model_validate_json(
                _between(prompt, "each node and edge cites the components it comes from):\n", "\n\n")
            )
            return coverage_feedback(page, graph).model_dump()
        graph = PageGraph.model_validate_json(_between(prompt, "Current page graph (JSON):\n", "\n\n"))
        raw = _between(prompt, "Feedback of the last round (JSON):\n", "\n\n")
        feedback = None if raw.startswith("(none") else Feedback.model_validate_json(raw)
        rnd = int(re.search(r"This is round (\d+) of at most (\d+)", prompt).group(1)) - 1
        inp = RoundInput(
            page=page,
            round=rnd,
            max_rounds=5,
            schema=self.schema,
            graph=graph,
            feedback=feedback,
            masked=frozenset(),
            image=None,
        )
        patch, _ = self.strategy.extract(inp)
        return patch.model_dump(exclude_none=True)

    @staticmethod
    def judge(prompt: str) -> dict[str, Any]:
        from docgraph.methods.kg4vd.judge import normalize_name
        from docgraph.text import tokenize

        anchor = _between(prompt, "Entity:\n", " [")
        words = set(tokenize(normalize_name(anchor)))
        labels = []
        for number, name in re.findall(r"^(\d+)\. (.+?) \[", _between(prompt, "Candidates:\n", "\n\nReply"), re.M):
            other = set(tokenize(normalize_name(name)))
            label = (
                "same"
                if normalize_name(name) == normalize_name(anchor)
                else "related"
                if words & other
                else "unrelated"
            )
            labels.append({"candidate": int(number), "label": label, "reason": "scripted"})
        return {"labels": labels}
