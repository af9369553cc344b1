"""A deterministic stand-in for a build/answer model, for ``OpenAIStub(default_reply=scripted_reply)``.

Every stage docgraph asks a chat model gets a reply of the right shape whose content comes
from the prompt itself, so a scripted-model build writes real graphs (KG4VD page graphs with
nodes grounded in the page's components, HVM facts, HippoRAG triples) and an answer cites
its evidence — the same prompt always gives the same reply, so two builds of one workspace
store the same rows. Used by the fault matrix (``benchmarks/faults.py``, tests/reliability)
to kill and to disturb model-driven builds.

Names are the page's runs of two or more capitalised words ("Columbus State University");
facts pair consecutive names (``mentioned_with``). Stages it does not know get an instance
of the request's JSON schema with every list empty, or a short text.
"""

from __future__ import annotations

import re
from typing import Any

from .stub_rules import SeenRequest

NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z]\.|[A-Z][a-z]+)){1,3}\b")
MANIFEST_LINE = re.compile(r"^\[([A-Z]+\d+)\] \(([^)]*)\) (.+)$", re.MULTILINE)
MAX_NAMES = 4
KG4VD_DONE = {"components": [], "gaps": [], "revision_targets": [], "stop_signal": 1}


def names_in(text: str, limit: int = MAX_NAMES) -> list[str]:
    """The first ``limit`` distinct runs of capitalised words in ``text``."""
    return list(dict.fromkeys(m.group(0) for m in NAME.finditer(text)))[:limit]


def _section(prompt: str, header: str) -> str:
    """The text after ``header`` up to the next blank line (or the end)."""
    match = re.search(re.escape(header) + r"\s*\n(.*?)(?:\n\n|\Z)", prompt, re.S)
    return match.group(1) if match else ""


def _first_type(prompt: str) -> str:
    match = re.search(r"text entity types: ([a-z_]+)", prompt)
    return match.group(1) if match else "concept"


def kg4vd_extract(prompt: str) -> dict[str, Any]:
    """Round 1: one node per named thing of the first text components (citing them) and an
    edge between consecutive nodes; later rounds: nothing more."""
    if not re.search(r"\bround 1 of at most", prompt):
        return {"nodes": [], "edges": []}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    kind = _first_type(prompt)
    for cid, flags, text in MANIFEST_LINE.findall(prompt):
        if "text" not in flags and "title" not in flags:
            continue
        for name in names_in(text, 2):
            if len(nodes) == MAX_NAMES:
                break
            if any(n["name"] == name for n in nodes):
                continue
            nodes.append(
                {
                    "op": "add",
                    "id": f"e{len(nodes) + 1}",
                    "name": name,
                    "type": kind,
                    "modality": "text",
                    "description": f"{name}, named on this page",
                    "component_ids": [cid],
                }
            )
            if len(nodes) > 1:
                edges.append(
                    {
                        "op": "add",
                        "id": f"r{len(edges) + 1}",
                        "source": nodes[-2]["id"],
                        "target": nodes[-1]["id"],
                        "label": "mentioned_with",
                        "component_ids": [cid],
                    }
                )
    return {"nodes": nodes, "edges": edges}


def hvm_extract(prompt: str) -> dict[str, Any]:
    if "from a picture" in prompt:
        return {"image": {"name": "Picture", "type": "figure", "description": "a picture of the page"}, "entities": []}
    if "You extract relations" in prompt:
        entities = re.findall(r"^- (.+?) \[", _section(prompt, "Entities:"), re.MULTILINE)
        return {
            "relations": [
                {"head": a, "relation": "mentioned_with", "tail": b, "head_type": "", "tail_type": ""}
                for a, b in zip(entities, entities[1:])
            ]
        }
    text = _section(prompt, "Row:") or _section(prompt, "Chunk:")
    return {"entities": [{"name": n, "type": "concept", "description": f"{n} in this chunk"} for n in names_in(text)]}


def hipporag_openie(prompt: str) -> dict[str, Any]:
    names = names_in(_section(prompt, "Passage:"))
    return {
        "entities": names,
        "triples": [{"subject": a, "predicate": "mentioned with", "object": b} for a, b in zip(names, names[1:])],
    }


def empty_instance(schema: dict[str, Any]) -> Any:
    """A minimal value of a JSON schema: objects with their required properties, empty lists,
    the first enum value, zero, empty strings."""
    defs = schema.get("$defs", {})

    def value(node: dict[str, Any]) -> Any:
        if "$ref" in node:
            return value(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "enum" in node:
            return node["enum"][0]
        if "const" in node:
            return node["const"]
        for key in ("anyOf", "oneOf"):
            if key in node:
                return value(node[key][0])
        kind = node.get("type", "")
        if kind == "object" or "properties" in node:
            return {name: value(node["properties"][name]) for name in node.get("required", [])}
        return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)

    return value(schema)


def first_message(req: SeenRequest) -> str:
    """The text of the request's first message: the prompt, without what a re-ask appends
    (the model's last reply and the note on what was wrong with it)."""
    messages = (req.body or {}).get("messages") or [{}]
    content = messages[0].get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content or ""


def scripted_reply(req: SeenRequest) -> Any:
    """The reply for one chat request (see the module doc); a re-ask gets the first reply's content."""
    stage, prompt = req.stage or "", first_message(req)
    if stage == "kg4vd.extract":
        return kg4vd_extract(prompt)
    if stage == "kg4vd.reflect":  # one more round after the first, then stop
        return (
            KG4VD_DONE
            if not re.search(r"\bround 1 of at most", prompt)
            else {**KG4VD_DONE, "stop_signal": 0, "gaps": ["check the captions"]}
        )
    if stage == "kg4vd.analyze":
        return {"mode": "local", "reason": "scripted"}
    if stage == "hvm.extract":
        return hvm_extract(prompt)
    if stage == "hipporag.openie":
        return hipporag_openie(prompt)
    if stage == "hipporag.fact_filter":
        return {"keep": [1, 2, 3]}
    fmt = req.response_format or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    if schema:
        return empty_instance(schema)
    if stage.endswith("answer_preliminary"):
        return "The graph names the people and places of the question."
    return "The evidence answers it [1]."
