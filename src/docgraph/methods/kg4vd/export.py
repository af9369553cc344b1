"""Statistics and exports of a workspace's KG4VD graph (used by ``docgraph graph``).

``graph_stats(store)`` summarises the canonical graph and its build: entities by type and
modality, relations (and cross-page ones) by label, merges (page-level entities folded
into canonical ones), rounds per page, stop reasons, rejected operations by rule and the
model usage of the ``kg4vd.*`` stages. ``export_json`` writes entities, relations and
page graphs as one JSON document; ``export_graphml`` writes the canonical graph as
GraphML (node and edge attributes: name, type, modality, description, aliases, pages,
mentions as JSON) for Gephi, yEd, networkx or Cytoscape.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from ...store.base import Store
from ...types import Entity, Relation
from ..building.build_stats import OFFLINE_FALLBACK, stage_usage, table, usage_lines
from .storage import iter_page_graphs, load_entities, load_relations

TOP_LABELS = 15
GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"


def graph_stats(store: Store) -> dict[str, Any]:
    """Counts that describe the graph and how it was built (JSON-able)."""
    entities, relations = load_entities(store), load_relations(store)
    graphs = list(iter_page_graphs(store))
    instances = sum(len(g.entities) for g in graphs)
    stages, total = stage_usage(store, "kg4vd.")
    return {
        "pages": len(graphs),
        "entities": len(entities),
        "entities_by_type": dict(Counter(e.type for e in entities.values()).most_common()),
        "entities_by_modality": dict(Counter(e.modality for e in entities.values()).most_common()),
        "multi_page_entities": sum(len({(m.doc_id, m.page) for m in e.mentions}) > 1 for e in entities.values()),
        "page_entities": instances,
        "merged": instances - len(entities),
        "relations": len(relations),
        "cross_page_relations": sum(r.cross_page for r in relations.values()),
        "relations_by_label": dict(Counter(r.label for r in relations.values()).most_common(TOP_LABELS)),
        "rounds_per_page": {str(k): v for k, v in sorted(Counter(g.rounds for g in graphs).items())},
        "stop_reasons": dict(Counter(g.stop_reason for g in graphs).most_common()),
        "pages_by_strategy": dict(Counter(g.strategy or "unknown" for g in graphs).most_common()),
        "offline_fallback_pages": sorted(f"{g.doc_id} page {g.page}" for g in graphs if g.strategy == OFFLINE_FALLBACK),
        "rejected_by_rule": dict(Counter(r.get("rule", "?") for g in graphs for r in g.rejected).most_common()),
        "usage": {stage: u.model_dump() for stage, u in stages.items()},
        "usage_total": total.model_dump(),
    }


def format_stats(stats: dict[str, Any]) -> str:
    """A readable multi-line report of ``graph_stats``."""
    lines = [
        f"pages {stats['pages']}   entities {stats['entities']} "
        f"({stats['multi_page_entities']} on several pages; {stats['merged']} page-level entities merged "
        f"of {stats['page_entities']})   relations {stats['relations']} "
        f"({stats['cross_page_relations']} cross-page)"
    ]
    lines += table("entities by type", stats["entities_by_type"])
    lines += table("entities by modality", stats["entities_by_modality"])
    lines += table(f"relations by label (top {TOP_LABELS})", stats["relations_by_label"])
    lines += table("rounds per page", stats["rounds_per_page"])
    lines += table("stop reasons", stats["stop_reasons"])
    lines += table("pages by strategy", stats["pages_by_strategy"])
    if stats["offline_fallback_pages"]:
        lines.append(
            f'built offline after the model\'s replies failed (kg4vd.on_model_error = "offline"): '
            f"{', '.join(stats['offline_fallback_pages'])}"
        )
    lines += table("rejected operations by rule", stats["rejected_by_rule"])
    lines += usage_lines(stats["usage"])
    return "\n".join(lines)


def export_json(store: Store, out: Path) -> dict[str, int]:
    """Write ``{"entities": [...], "relations": [...], "page_graphs": [...]}``; returns counts."""
    entities, relations = load_entities(store), load_relations(store)
    graphs = [g.model_dump(mode="json") for g in iter_page_graphs(store)]
    doc = {
        "entities": [e.model_dump(mode="json") for e in entities.values()],
        "relations": [r.model_dump(mode="json") for r in relations.values()],
        "page_graphs": graphs,
    }
    Path(out).write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return {"entities": len(entities), "relations": len(relations), "page_graphs": len(graphs)}


_NODE_KEYS = ("name", "type", "modality", "description", "aliases", "pages", "mentions")
_EDGE_KEYS = ("label", "description", "cross_page", "pages", "mentions")


def _pages(item: Entity | Relation) -> str:
    return " ".join(sorted({f"{m.doc_id}:{m.page}" for m in item.mentions}))


def _mentions(item: Entity | Relation) -> str:
    return json.dumps([m.model_dump() for m in item.mentions], separators=(",", ":"))


def export_graphml(store: Store, out: Path) -> dict[str, int]:
    """Write the canonical graph as directed GraphML; returns counts."""
    ET.register_namespace("", GRAPHML_NS)
    root = ET.Element(f"{{{GRAPHML_NS}}}graphml")
    for scope, names in (("node", _NODE_KEYS), ("edge", _EDGE_KEYS)):
        for name in names:
            kind = "boolean" if name == "cross_page" else "string"
            ET.SubElement(
                root,
                f"{{{GRAPHML_NS}}}key",
                id=f"{scope[0]}_{name}",
                attrib={"for": scope, "attr.name": name, "attr.type": kind},
            )
    graph = ET.SubElement(root, f"{{{GRAPHML_NS}}}graph", id="kg4vd", edgedefault="directed")

    def data(parent: ET.Element, key: str, value: str) -> None:
        ET.SubElement(parent, f"{{{GRAPHML_NS}}}data", key=key).text = value

    entities, relations = load_entities(store), load_relations(store)
    for e in entities.values():
        node = ET.SubElement(graph, f"{{{GRAPHML_NS}}}node", id=e.id)
        for key, value in (
            ("name", e.name),
            ("type", e.type),
            ("modality", e.modality),
            ("description", e.description),
            ("aliases", "; ".join(e.aliases)),
            ("pages", _pages(e)),
            ("mentions", _mentions(e)),
        ):
            data(node, f"n_{key}", value)
    for r in relations.values():
        edge = ET.SubElement(graph, f"{{{GRAPHML_NS}}}edge", id=r.id, source=r.source, target=r.target)
        for key, value in (
            ("label", r.label),
            ("description", r.description),
            ("cross_page", "true" if r.cross_page else "false"),
            ("pages", _pages(r)),
            ("mentions", _mentions(r)),
        ):
            data(edge, f"e_{key}", value)
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    return {"entities": len(entities), "relations": len(relations)}
