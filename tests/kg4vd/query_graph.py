"""Hand-written KG4VD graphs written straight into a workspace store, for the query tests.

They follow the build side's storage contract (records ``kg4vd.entity`` /
``kg4vd.relation`` holding ``Entity`` / ``Relation`` dumps, vectors ``kg4vd.page`` keyed
``"<doc_id>:<page>"`` and ``kg4vd.entity`` keyed by entity id), so retrieval runs exactly
as on a built workspace, without ingestion or the build.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw

from docgraph import Workspace
from docgraph.methods.kg4vd.storage import entity_text
from docgraph.methods.retrieval.vector_index import write_vectors
from docgraph.models.base import ImageItem
from docgraph.types import BBox, Component, ComponentKind, Document, Entity, Mention, Page, Relation

DOC_ID = "hist0001"
PAGE_W, PAGE_H, DPI = 300.0, 400.0, 72


@dataclass
class PageSpec:
    number: int
    texts: dict[str, str]  # component id -> text, in reading order


@dataclass
class GraphSpec:
    doc_id: str
    title: str
    pages: list[PageSpec]
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def _kind(component_id: str) -> ComponentKind:
    prefix = component_id.rstrip("0123456789")
    return ComponentKind(prefix)


def make_page(root: Path, doc_id: str, spec: PageSpec) -> Page:
    """A page with one component per text, stacked vertically, and a rendered PNG."""
    comps = []
    for order, (cid, text) in enumerate(spec.texts.items()):
        y0 = 20.0 + order * 60.0
        comps.append(
            Component(
                id=cid,
                kind=_kind(cid),
                bbox=BBox(x0=20, y0=y0, x1=280, y1=y0 + 50),
                order=order,
                text=text,
                furniture=_kind(cid).is_furniture,
            )
        )
    rel = f"pages/{doc_id}/p{spec.number:04d}.png"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (int(PAGE_W), int(PAGE_H)), "white")
    draw = ImageDraw.Draw(image)
    for c in comps:
        draw.text((c.bbox.x0, c.bbox.y0), c.text[:40], fill="black")
    image.save(path)
    return Page(
        doc_id=doc_id, number=spec.number, width=PAGE_W, height=PAGE_H, image_path=rel, dpi=DPI, components=comps
    )


def write_graph(ws: Workspace, spec: GraphSpec, entity_vectors=None, page_vectors=None) -> None:
    """Pages, records and vectors of ``spec`` into ``ws`` (vectors embedded unless given)."""
    store = ws.store
    pages = [make_page(ws.root, spec.doc_id, p) for p in spec.pages]
    doc = Document(
        id=spec.doc_id,
        title=spec.title,
        path=f"{spec.doc_id}.pdf",
        sha256=spec.doc_id * 4,
        kind="pdf",
        page_count=len(pages),
    )
    store.put_document(doc)
    for page in pages:
        store.put_page(page)
    store.put_records("kg4vd.entity", [(e.id, e.model_dump(mode="json"), spec.doc_id) for e in spec.entities])
    store.put_records("kg4vd.relation", [(r.id, r.model_dump(mode="json"), spec.doc_id) for r in spec.relations])
    image = ws.models.image_embedder
    if page_vectors is None:
        page_vectors = image.embed_items([ImageItem(None, p.text) for p in pages])
    write_vectors(
        store,
        "kg4vd.page",
        [f"{spec.doc_id}:{p.number}" for p in pages],
        page_vectors,
        image.model,
        [spec.doc_id] * len(pages),
    )
    if entity_vectors is None:
        entity_vectors = image.embed_items([ImageItem(None, entity_text(e)) for e in spec.entities])
    write_vectors(
        store,
        "kg4vd.entity",
        [e.id for e in spec.entities],
        entity_vectors,
        image.model,
        [spec.doc_id] * len(spec.entities),
    )


def _e(eid: str, name: str, etype: str, desc: str, page: int, comps: list[str], doc_id: str = DOC_ID) -> Entity:
    return Entity(
        id=eid,
        name=name,
        type=etype,
        description=desc,
        mentions=[Mention(doc_id=doc_id, page=page, component_ids=comps)],
    )


def _r(rid: str, s: str, t: str, label: str, desc: str, page: int, comps: list[str]) -> Relation:
    return Relation(
        id=rid,
        source=s,
        target=t,
        label=label,
        description=desc,
        mentions=[Mention(doc_id=DOC_ID, page=page, component_ids=comps)],
    )


def history_graph() -> GraphSpec:
    """Six pages of a small world-history text and the graph a build would extract."""
    pages = [
        PageSpec(
            1,
            {
                "TI1": "Unit 4: A Global Middle Ages, 1200-1500 CE",
                "P1": "Chapter 14 Pax Mongolica: The Steppe Empire of the Mongols.",
                "P2": "Chapter 15 States and Societies in Sub-Saharan Africa.",
                "F1": "Contents 1",
            },
        ),
        PageSpec(
            2,
            {
                "TI1": "The Rise of the Mongols",
                "P1": "Genghis Khan united the steppe tribes and founded the Mongol Empire in 1206.",
                "P2": "The Mongol armies used mounted archers and rapid cavalry tactics.",
            },
        ),
        PageSpec(
            3,
            {
                "TI1": "Kublai Khan and China",
                "P1": "Kublai Khan, a grandson of Genghis Khan, established the Yuan dynasty in China in 1271.",
                "T1": "| Ruler | Dynasty |\n| Kublai Khan | Yuan |",
            },
        ),
        PageSpec(
            4,
            {
                "TI1": "Travellers",
                "P1": "The Venetian merchant Marco Polo served at the court of Kublai Khan for seventeen years.",
                "IM1": "Map of Marco Polo's route from Venice to Beijing",
            },
        ),
        PageSpec(
            5,
            {
                "TI1": "Trade and Disease",
                "P1": "The Mongol Empire protected trade along the Silk Road.",
                "P2": "The Black Death spread west along the Silk Road trade routes in the 1340s.",
            },
        ),
        PageSpec(
            6,
            {
                "TI1": "West Africa",
                "P1": "Mansa Musa, ruler of the Mali Empire, made a famous pilgrimage to Mecca in 1324.",
                "P2": "Timbuktu became a center of learning in the Mali Empire.",
            },
        ),
    ]
    entities = [
        _e("unit4", "Unit 4", "concept", "A Global Middle Ages, 1200-1500 CE, a unit of the textbook", 1, ["TI1"]),
        _e("ch14", "Chapter 14", "concept", "Pax Mongolica: The Steppe Empire of the Mongols", 1, ["P1"]),
        _e("ch15", "Chapter 15", "concept", "States and Societies in Sub-Saharan Africa", 1, ["P2"]),
        _e("genghis", "Genghis Khan", "person", "united the steppe tribes, founder of the Mongol Empire", 2, ["P1"]),
        _e("mongol", "Mongol Empire", "organization", "steppe empire founded in 1206", 2, ["P1"]),
        _e("cavalry", "Mounted archers", "concept", "Mongol cavalry tactics", 2, ["P2"]),
        _e("kublai", "Kublai Khan", "person", "grandson of Genghis Khan, ruler of China", 3, ["P1", "T1"]),
        _e("yuan", "Yuan dynasty", "organization", "dynasty established in China in 1271", 3, ["P1", "T1"]),
        _e("china", "China", "location", "country ruled by the Yuan dynasty", 3, ["P1"]),
        _e("polo", "Marco Polo", "person", "Venetian merchant at the court of Kublai Khan", 4, ["P1"]),
        _e("route", "Marco Polo's route map", "visual_object", "map from Venice to Beijing", 4, ["IM1"]),
        _e("silk", "Silk Road", "location", "trade routes across Eurasia", 5, ["P1", "P2"]),
        _e("plague", "Black Death", "event", "pandemic that spread west in the 1340s", 5, ["P2"]),
        _e("musa", "Mansa Musa", "person", "ruler of the Mali Empire, pilgrimage to Mecca in 1324", 6, ["P1"]),
        _e("mali", "Mali Empire", "organization", "West African empire", 6, ["P1", "P2"]),
        _e("timbuktu", "Timbuktu", "location", "center of learning in the Mali Empire", 6, ["P2"]),
    ]
    relations = [
        _r("r1", "unit4", "ch14", "contains", "Unit 4 contains Chapter 14", 1, ["TI1", "P1"]),
        _r("r2", "unit4", "ch15", "contains", "Unit 4 contains Chapter 15", 1, ["TI1", "P2"]),
        _r("r3", "genghis", "mongol", "founded", "Genghis Khan founded the Mongol Empire in 1206", 2, ["P1"]),
        _r("r4", "mongol", "cavalry", "used", "the Mongol armies used mounted archers", 2, ["P2"]),
        _r("r5", "kublai", "genghis", "grandson_of", "Kublai Khan was a grandson of Genghis Khan", 3, ["P1"]),
        _r("r6", "kublai", "yuan", "established", "Kublai Khan established the Yuan dynasty in 1271", 3, ["P1", "T1"]),
        _r("r7", "yuan", "china", "ruled", "the Yuan dynasty ruled China", 3, ["P1"]),
        _r("r8", "polo", "kublai", "served_at_court_of", "Marco Polo served at Kublai Khan's court", 4, ["P1"]),
        _r("r9", "polo", "route", "depicted_in", "the map shows Marco Polo's route", 4, ["IM1"]),
        _r("r10", "mongol", "silk", "protected", "the Mongol Empire protected Silk Road trade", 5, ["P1"]),
        _r("r11", "plague", "silk", "spread_along", "the Black Death spread along the Silk Road", 5, ["P2"]),
        _r("r12", "musa", "mali", "ruled", "Mansa Musa ruled the Mali Empire", 6, ["P1"]),
        _r("r13", "timbuktu", "mali", "part_of", "Timbuktu was in the Mali Empire", 6, ["P2"]),
        _r("r14", "ch14", "mongol", "covers", "Chapter 14 covers the Mongol Empire", 1, ["P1"]),
    ]
    return GraphSpec(DOC_ID, "A Short World History", pages, entities, relations)


def random_graph(n_pages: int = 26, per_page: int = 5, degree: int = 6, seed: int = 7) -> GraphSpec:
    """A larger synthetic graph (``n_pages × per_page`` entities, ~``degree`` edges per node)
    for budget and cap tests; each entity sits on its own paragraph."""
    rng = random.Random(seed)
    doc_id = "synth001"
    pages, entities, relations = [], [], []
    for p in range(1, n_pages + 1):
        texts = {}
        for j in range(1, per_page + 1):
            k = (p - 1) * per_page + j
            texts[f"P{j}"] = f"Topic {k} concerns subject {k % 7} in region {k % 5}."
            entities.append(
                Entity(
                    id=f"e{k:03d}",
                    name=f"Topic {k}",
                    type="concept",
                    description=f"subject {k % 7} in region {k % 5}",
                    mentions=[Mention(doc_id=doc_id, page=p, component_ids=[f"P{j}"])],
                )
            )
        pages.append(PageSpec(p, texts))
    n = len(entities)
    for i in range(n * degree // 2):
        a, b = rng.randrange(n), rng.randrange(n)
        if a == b:
            continue
        src = entities[a]
        relations.append(
            Relation(
                id=f"x{i:04d}",
                source=src.id,
                target=entities[b].id,
                label="related_to",
                description=f"{src.name} relates to {entities[b].name}",
                mentions=[
                    Mention(doc_id=doc_id, page=src.mentions[0].page, component_ids=src.mentions[0].component_ids)
                ],
            )
        )
    return GraphSpec(doc_id, "Synthetic Topics", pages, entities, relations)
