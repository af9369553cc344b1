"""A small workspace written straight into the store, for the web app tests: one document
with two pages (rendered images, components, crops) and a KG4VD entity graph, so the API
tests do not depend on ingestion or build speed."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

from docgraph.api import Workspace
from docgraph.types import BBox, Component, ComponentKind, Document, Entity, Mention, Page, Relation

DOC_ID = "abc123def456"
DPI = 144
PAGE_W, PAGE_H = 612.0, 792.0
TOKEN = "s3cret-token"

PAGE_TEXT = {
    1: [
        ("TI1", ComponentKind.TITLE, (72, 60, 540, 100), "Annual report of the Harbour Trust"),
        (
            "P1",
            ComponentKind.PARAGRAPH,
            (72, 120, 540, 220),
            "The Harbour Trust is part of Rice University and publishes open textbooks.",
        ),
        ("T1", ComponentKind.TABLE, (72, 250, 540, 400), "Year | Ships\n2019 | 120\n2020 | 95"),
    ],
    2: [
        (
            "P1",
            ComponentKind.PARAGRAPH,
            (72, 80, 540, 200),
            "In 2020 the Harbour Trust opened a new lighthouse museum on the northern pier.",
        ),
        ("IM1", ComponentKind.IMAGE, (100, 260, 400, 500), ""),
    ],
}


def _render(path: Path, components: list[tuple]) -> None:
    """A page image at ``DPI`` with each component's box drawn, so pixels can be checked."""
    scale = DPI / 72
    image = Image.new("RGB", (round(PAGE_W * scale), round(PAGE_H * scale)), "white")
    draw = ImageDraw.Draw(image)
    for cid, _kind, (x0, y0, x1, y1), text in components:
        draw.rectangle([x0 * scale, y0 * scale, x1 * scale, y1 * scale], outline=(120, 120, 120), width=2)
        draw.text((x0 * scale + 6, y0 * scale + 6), f"{cid} {text[:60]}", fill=(0, 0, 0))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def write_workspace(root: Path) -> Workspace:
    """A workspace with one two-page document and a small KG4VD entity graph."""
    ws = Workspace(root)
    ws.store.put_document(
        Document(
            id=DOC_ID,
            title="Harbour Trust report",
            path=str(root / "harbour.pdf"),
            sha256="ab" * 32,
            kind="pdf",
            page_count=2,
            status="ready",
        )
    )
    for number, comps in PAGE_TEXT.items():
        image_rel = f"pages/{DOC_ID}/{number:04d}.png"
        _render(root / image_rel, comps)
        components = []
        for order, (cid, kind, (x0, y0, x1, y1), text) in enumerate(comps):
            crop = None
            if kind.is_visual:
                crop = f"crops/{DOC_ID}/{number:04d}-{cid}.png"
                (root / crop).parent.mkdir(parents=True, exist_ok=True)
                Image.new("RGB", (40, 30), (200, 220, 240)).save(root / crop)
            components.append(
                Component(
                    id=cid,
                    kind=kind,
                    bbox=BBox(x0=x0, y0=y0, x1=x1, y1=y1),
                    order=order,
                    text=text,
                    crop_path=crop,
                    section_path=["Harbour Trust report"],
                )
            )
        ws.store.put_page(
            Page(
                doc_id=DOC_ID,
                number=number,
                width=PAGE_W,
                height=PAGE_H,
                image_path=image_rel,
                dpi=DPI,
                components=components,
            )
        )
    entities = [
        Entity(
            id="e:trust",
            name="Harbour Trust",
            type="organization",
            description="a trust",
            mentions=[
                Mention(doc_id=DOC_ID, page=1, component_ids=["TI1", "P1"]),
                Mention(doc_id=DOC_ID, page=2, component_ids=["P1"]),
            ],
        ),
        Entity(
            id="e:rice",
            name="Rice University",
            type="organization",
            aliases=["Rice"],
            mentions=[Mention(doc_id=DOC_ID, page=1, component_ids=["P1"])],
        ),
        Entity(
            id="e:museum",
            name="lighthouse museum",
            type="place",
            mentions=[Mention(doc_id=DOC_ID, page=2, component_ids=["P1"])],
        ),
        Entity(
            id="e:photo",
            name="pier photo",
            type="figure",
            modality="visual",
            mentions=[Mention(doc_id=DOC_ID, page=2, component_ids=["IM1"])],
        ),
        Entity(id="e:houston", name="Houston", type="place", mentions=[]),
    ]
    relations = [
        Relation(id="r1", source="e:trust", target="e:rice", label="part of"),
        Relation(id="r2", source="e:trust", target="e:museum", label="opened", cross_page=True),
        Relation(id="r3", source="e:museum", target="e:photo", label="shown in"),
        Relation(id="r4", source="e:rice", target="e:houston", label="located in"),
    ]
    ws.store.put_records("kg4vd.entity", [(e.id, e.model_dump(), None) for e in entities])
    ws.store.put_records("kg4vd.relation", [(r.id, r.model_dump(), None) for r in relations])
    return ws


def page_url(number: int = 1, suffix: str = "") -> str:
    return f"/api/documents/{DOC_ID}/pages/{number}{suffix}"


HVM_TRUST, HVM_RICE = f"{DOC_ID}|harbour trust", f"{DOC_ID}|rice university"


def write_hvm_graph(ws: Workspace) -> None:
    """A small HVM holistic view of the document: two entities of page 1 and one fact."""
    from docgraph.methods.hvm.extraction import EntityInfo, Fact
    from docgraph.methods.memo import bump_version
    from docgraph.types import Chunk

    chunk = Chunk(id=f"{DOC_ID}:1:P1", doc_id=DOC_ID, page=1, component_ids=["P1"], text=PAGE_TEXT[1][1][3])
    title = Chunk(id=f"{DOC_ID}:1:TI1", doc_id=DOC_ID, page=1, component_ids=["TI1"], text=PAGE_TEXT[1][0][3])
    ws.store.put_records(
        "hvm.chunk",
        [(c.id, {"chunk": c.model_dump(), "context": "", "index": i}, DOC_ID) for i, c in enumerate([title, chunk])],
    )
    entities = [
        EntityInfo(key="harbour trust", name="Harbour Trust", concept="organization", mentions=[title.id, chunk.id]),
        EntityInfo(key="rice university", name="Rice University", concept="university", mentions=[chunk.id]),
    ]
    ws.store.put_records("hvm.entity", [(f"{DOC_ID}|{e.key}", e.model_dump(), DOC_ID) for e in entities])
    fact = Fact(id="f1", head="harbour trust", relation="part_of", tail="rice university", chunks=[chunk.id])
    ws.store.put_records("hvm.fact", [(fact.id, fact.model_dump(), DOC_ID)])
    ws.store.put_record("hvm.state", DOC_ID, {"complete": True}, doc_id=DOC_ID)
    bump_version(ws.store, "hvm")
