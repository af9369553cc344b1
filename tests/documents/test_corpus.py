"""The seven shared PDFs (~260 pages) ingested once: structure, grounding and content checks."""

from __future__ import annotations

import re
from collections import Counter

import pymupdf
from docs_helpers import snapshot
from PIL import Image

from docgraph.config import IngestSettings
from docgraph.documents import ingest
from docgraph.documents.render import render_size
from docgraph.progress import RecordingProgress
from docgraph.types import ComponentKind

EXPECTED_PAGES = {
    "acciona": 1,
    "bookdash": 52,
    "dl_comp": 43,
    "grammar": 116,
    "jstor": 16,
    "openstax": 5,
    "st_mary": 28,
}


def test_all_documents_ingest_ready(corpus):
    assert corpus.report.failures == []
    assert len(corpus.report.added) == 7
    for prefix, pages in EXPECTED_PAGES.items():
        doc = corpus.doc(prefix)
        assert (doc.status, doc.kind, doc.page_count, len(doc.pages)) == ("ready", "pdf", pages, pages)
        assert doc.id == doc.sha256[:12]
    assert corpus.progress.total == corpus.progress.done == sum(EXPECTED_PAGES.values())
    assert corpus.report.ocr_pages == 0  # every page of these PDFs has a text layer


def test_every_page_has_components_except_blank_ones(corpus):
    empty = []
    for page in corpus.store.iter_pages():
        image = corpus.root / page.image_path
        assert Image.open(image).size == render_size(page.width, page.height, page.dpi)
        if not page.components:
            empty.append(page)
    # the St Mary audit has one genuinely blank page (no text, images or drawings)
    assert [
        (corpus.store.get_document(p.doc_id).path.endswith("st_mary_witney_social_audit.pdf"), p.number) for p in empty
    ] == [(True, 4)]
    lo, hi = Image.open(corpus.root / empty[0].image_path).convert("L").getextrema()
    assert lo == hi == 255


def test_boxes_ids_order_and_crops(corpus):
    for page in corpus.store.iter_pages():
        ids = [c.id for c in page.components]
        assert len(ids) == len(set(ids))
        assert sorted(c.order for c in page.components) == list(range(len(ids)))
        seen: Counter = Counter()
        for comp in sorted(page.components, key=lambda c: c.order):
            seen[comp.kind] += 1
            assert comp.id == f"{comp.kind.value}{seen[comp.kind]}"
            assert comp.bbox.inside(page.width, page.height), (page.doc_id, page.number, comp.id)
            assert comp.furniture == comp.kind.is_furniture
            if comp.kind.is_visual:
                assert comp.crop_path and (corpus.root / comp.crop_path).is_file()
            else:
                assert comp.crop_path is None and comp.text


def test_esg_table_cells_come_through_as_markdown(corpus):
    page = corpus.doc("acciona").pages[0]
    tables = [c for c in page.components if c.kind is ComponentKind.TABLE]
    assert len(tables) == 1
    markdown = tables[0].markdown
    for row in (
        "|Spain|2,673|367|51|-0.7|20,860|4.8|1|2|",
        "|Mexico|238|54|19|7.1|1,978|0|5.8|9|",
        "|Portugal|152|9|7|5.2|2,015|0.01|7|11|",
        "|Canada|327|-44|-0.1|0.1|1,379|0|7|2|",
    ):
        assert row in markdown
    assert "**44.5**" in markdown and "**38,355**" in markdown
    assert tables[0].section_path[-1] == "Tax information Country by Country (CbC)"


def test_picture_books_have_image_components_on_illustrated_pages(corpus, documents_dir):
    doc = corpus.doc("bookdash")
    with pymupdf.open(documents_dir / "bookdash_picture_books.pdf") as pdf:
        for page in doc.pages:
            area = page.width * page.height
            pictures = [
                pymupdf.Rect(i["bbox"]) & pdf[page.number - 1].rect for i in pdf[page.number - 1].get_image_info()
            ]
            pictures = [r for r in pictures if r.get_area() > 0.1 * area]
            assert pictures, page.number  # every page of these books is illustrated
            images = [pymupdf.Rect(c.bbox.as_tuple()) for c in page.components if c.kind is ComponentKind.IMAGE]
            for picture in pictures:
                assert any((picture & im).get_area() > 0.5 * picture.get_area() for im in images), page.number


def test_world_history_titles_paragraphs_and_section_paths(corpus):
    doc = corpus.doc("openstax")
    comps = [(p.number, c) for p in doc.pages for c in p.components]
    kinds = Counter(c.kind for _, c in comps)
    assert kinds[ComponentKind.TITLE] >= 10 and kinds[ComponentKind.PARAGRAPH] >= 10
    assert all(c.section_path[0] == doc.title for _, c in comps)
    titles = {c.text: c for _, c in comps if c.kind is ComponentKind.TITLE}
    assert titles["Preface"].heading_level < titles["About OpenStax"].heading_level
    rice = next(c for _, c in comps if c.text.startswith("OpenStax is part of Rice University"))
    assert rice.kind is ComponentKind.PARAGRAPH and rice.section_path[-2:] == ["Preface", "About OpenStax"]
    # paths carry across pages: page 3 opens inside "About World History" begun on page 2
    first_body = next(c for n, c in comps if n == 3 and not c.furniture)
    assert first_body.section_path[-1] == "About World History"


def test_titles_come_from_metadata_or_headings(corpus):
    assert corpus.doc("st_mary").title == "St Mary Whitney"  # meaningful metadata title
    assert corpus.doc("grammar").title == "Grammar Matters"  # no metadata title: first heading
    slides = corpus.doc("dl_comp").title
    assert slides != "PowerPoint-Präsentation" and re.search(r"Neural Networks", slides)


def test_readding_the_same_files_is_a_no_op(corpus, documents_dir):
    before = snapshot(corpus.root)
    progress = RecordingProgress()
    report = ingest(corpus.store, corpus.root, IngestSettings(), sorted(documents_dir.glob("*.pdf")), progress=progress)
    assert report.added == [] and report.failures == [] and len(report.skipped) == 7
    assert progress.total == 0
    assert snapshot(corpus.root) == before
