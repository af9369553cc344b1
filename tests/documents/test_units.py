"""Pure logic of the documents package: text joining, sections, OCR merging, formats, the
parser registry (with a stand-in backend), render caps and the main-guard check."""

from __future__ import annotations

import sys
import types

import pymupdf
import pytest
from docs_helpers import LOREM, text_pdf
from PIL import Image

from docgraph.config import IngestSettings
from docgraph.documents import ingest, register_parser
from docgraph.documents.formats import classify
from docgraph.documents.lines import lines_to_text
from docgraph.documents.ocr.layout import OcrLine, Region, grid_markdown, merge, reading_order
from docgraph.documents.parser import LayoutBlock, get_parser
from docgraph.documents.render import check_render_size
from docgraph.documents.runner import spawn_safe
from docgraph.documents.sections import assign_sections, choose_title, heading_levels, meaningful_title
from docgraph.errors import ConfigError, InputError
from docgraph.store import SQLiteStore
from docgraph.types import BBox, Component, Page
from docgraph.types import ComponentKind as K


def test_lines_join_with_dehyphenation():
    assert (
        lines_to_text(["An exam-", "ple of well-", "Known text", "", " end "]) == "An example of well- Known text end"
    )


def _page(number, comps):
    return Page(
        doc_id="d",
        number=number,
        width=600,
        height=800,
        image_path="x.png",
        dpi=144,
        components=[
            Component(
                id=i,
                kind=k,
                bbox=BBox(x0=0, y0=o * 10, x1=10, y1=o * 10 + 5),
                order=o,
                text=t,
                furniture=k.is_furniture,
            )
            for o, (i, k, t) in enumerate(comps)
        ],
    )


def test_section_paths_follow_heading_levels_across_pages():
    pages = [
        _page(
            1,
            [
                ("H1", K.HEADER, "Running head"),
                ("TI1", K.TITLE, "Part One"),
                ("TI2", K.TITLE, "Intro"),
                ("P1", K.PARAGRAPH, "a"),
            ],
        ),
        _page(
            2,
            [
                ("P1", K.PARAGRAPH, "b"),
                ("TI1", K.TITLE, "Details"),
                ("P2", K.PARAGRAPH, "c"),
                ("TI2", K.TITLE, "Part Two"),
                ("P3", K.PARAGRAPH, "d"),
            ],
        ),
    ]
    sizes = {(1, "TI1"): 24.0, (1, "TI2"): 16.0, (2, "TI1"): 12.2, (2, "TI2"): 23.6}
    assert heading_levels(list(sizes.values())) == {24: 1, 16: 2, 12: 3}
    assign_sections(pages, sizes, "Book")
    path = {(p.number, c.id): c.section_path for p in pages for c in p.components}
    assert path[(1, "H1")] == ["Book"]
    assert path[(1, "P1")] == ["Book", "Part One", "Intro"]
    assert path[(2, "P1")] == ["Book", "Part One", "Intro"]  # carried over the page break
    assert path[(2, "P2")] == ["Book", "Part One", "Intro", "Details"]
    assert path[(2, "TI2")] == ["Book"] and path[(2, "P3")] == ["Book", "Part Two"]
    assert [c.heading_level for c in pages[1].components if c.kind is K.TITLE] == [3, 1]


def test_titles_prefer_meaningful_metadata_then_the_largest_first_heading():
    for generic in ("Untitled", "Microsoft Word - report.docx", "PowerPoint-Präsentation", "scan_0001.pdf", "", "x"):
        assert not meaningful_title(generic, "report")
    assert meaningful_title("Annual Report 2020", "report")
    pages = [_page(1, [("P1", K.PARAGRAPH, "x")]), _page(2, [("TI1", K.TITLE, "Small"), ("TI2", K.TITLE, "Big")])]
    sizes = {(2, "TI1"): 10.0, (2, "TI2"): 30.0}
    assert choose_title("Untitled", pages, sizes, "stem") == "Big"
    assert choose_title("Real Title", pages, sizes, "stem") == "Real Title"
    assert choose_title(None, pages[:1], {}, "stem") == "stem"


def test_a_label_heading_is_joined_with_the_next_heading():
    running = [
        _page(
            1,
            [
                ("H1", K.HEADER, "Chapter 2 Methods"),
                ("TI1", K.TITLE, "Chapter 2"),
                ("TI2", K.TITLE, "Methods and Data"),
            ],
        ),
        _page(2, [("H1", K.HEADER, "Chapter 2 Methods"), ("P1", K.PARAGRAPH, "text")]),
    ]
    sizes = {(1, "TI1"): 24.0, (1, "TI2"): 18.0}
    assert choose_title(None, running, sizes, "stem") == "Chapter 2: Methods and Data"
    # a unit opener / contents page listing chapters: the labels name parts; the unit title,
    # typed as a page header that heads no other page, names the document (issue 16)
    toc = [
        _page(
            1,
            [
                ("H1", K.HEADER, "Unit 4 A Global Middle Ages"),
                ("TI1", K.TITLE, "CHAPTER 14"),
                ("P1", K.PARAGRAPH, "Pax Mongolica 579"),
                ("TI2", K.TITLE, "CHAPTER 15"),
            ],
        ),
        _page(2, [("H1", K.HEADER, "Preface 1"), ("P1", K.PARAGRAPH, "text")]),
    ]
    sizes = {(1, "TI1"): 20.0, (1, "TI2"): 20.0}
    assert choose_title(None, toc, sizes, "stem") == "Unit 4 A Global Middle Ages"
    # ... but never a running head (the same header, page numbers aside, on another page)
    toc[1].components[0].text = "12 Unit 4 A Global Middle Ages"
    assert choose_title(None, toc, sizes, "stem") == "CHAPTER 14"
    assert choose_title(None, [_page(1, [("TI1", K.TITLE, "Part II")])], {(1, "TI1"): 24.0}, "stem") == "Part II"


def test_ocr_lines_merge_into_regions_tables_and_paragraphs():
    lines = [
        OcrLine((50, 50, 300, 70), "A Heading"),
        OcrLine((50, 100, 280, 110), "first line of a para-"),
        OcrLine((50, 112, 270, 122), "graph here"),
        OcrLine((50, 200, 100, 210), "Country"),
        OcrLine((200, 200, 260, 210), "Tax"),
        OcrLine((50, 215, 100, 225), "Spain"),
        OcrLine((200, 215, 240, 225), "-0.7"),
        OcrLine((50, 230, 100, 240), "Portugal"),
        OcrLine((200, 230, 240, 240), "0.01"),
        OcrLine((50, 400, 300, 410), "a loose line"),
        OcrLine((50, 412, 300, 422), "and its neighbour"),
    ]
    regions = [
        Region((45, 45, 320, 75), K.TITLE),
        Region((40, 90, 400, 130), K.PARAGRAPH),
        Region((40, 95, 600, 300), K.PARAGRAPH),  # overlapping text region: the smaller one wins
        Region((45, 195, 300, 245), K.TABLE),
        Region((400, 500, 550, 700), K.IMAGE),
        Region((400, 720, 550, 760), K.PARAGRAPH),
    ]  # no lines: dropped
    blocks = merge(lines, regions, 600, 800)
    assert [b.kind for b in blocks] == [K.TITLE, K.PARAGRAPH, K.TABLE, K.PARAGRAPH, K.IMAGE]
    assert blocks[1].text == "first line of a paragraph here" and blocks[1].bbox == (50, 100, 280, 122)
    assert blocks[2].markdown == "|Country|Tax|\n|---|---|\n|Spain|-0.7|\n|Portugal|0.01|"
    assert blocks[3].text == "a loose line and its neighbour"
    assert blocks[0].heading_size == pytest.approx(20 / 1.3)
    assert all(b.source == "ocr" for b in blocks)


def test_reading_order_reads_columns_between_full_width_blocks():
    def block(name, box):
        return LayoutBlock(K.PARAGRAPH, box, name)

    blocks = [
        block("right1", (320, 100, 580, 200)),
        block("left1", (20, 100, 280, 200)),
        block("title", (20, 20, 580, 60)),
        block("left2", (20, 220, 280, 300)),
        block("right2", (320, 220, 580, 300)),
        block("footer", (20, 700, 580, 720)),
    ]
    assert [b.text for b in reading_order(blocks, 600)] == ["title", "left1", "left2", "right1", "right2", "footer"]
    assert grid_markdown([]) == ""


def test_classify_by_content_and_name(tmp_path):
    pdf = text_pdf(tmp_path / "doc.bin", [LOREM])  # a PDF whatever its name
    assert classify(pdf, 10) == "pdf"
    (tmp_path / "slides.odp").write_bytes(b"PK\x03\x04 zip")
    assert classify(tmp_path / "slides.odp", 10) == "office"
    (tmp_path / "scan.jpeg").write_bytes(b"\xff\xd8\xff\xe0 jpeg")
    assert classify(tmp_path / "scan.jpeg", 10) == "image"
    with pytest.raises(InputError, match="unsupported file type '.txt'"):
        (tmp_path / "notes.txt").write_text("hello")
        classify(tmp_path / "notes.txt", 10)


def test_render_cap_names_file_page_and_fix():
    check_render_size(612, 792, 144, 60_000_000, path="a.pdf", page=3)
    with pytest.raises(InputError) as err:
        check_render_size(14400, 14400, 144, 60_000_000, path="a.pdf", page=3)
    assert str(err.value).startswith("a.pdf (page 3): would render to 28800×28800 px")
    assert "ingest.max_render_pixels" in str(err.value)


def test_parser_registry_and_a_stand_in_backend(tmp_path):
    with pytest.raises(ConfigError, match="unknown parser 'nope'"):
        get_parser("nope")
    with pytest.raises(ConfigError, match="unknown parser"):
        ingest(SQLiteStore(tmp_path / "ws0"), tmp_path / "ws0", IngestSettings(parser="nope"), [])
    register_parser("fake", "docs_helpers:FakeParser")
    root = tmp_path / "ws"
    store = SQLiteStore(root)
    report = ingest(
        store, root, IngestSettings(parser="fake", workers=1), [text_pdf(tmp_path / "two.pdf", [LOREM, LOREM])]
    )
    doc = store.get_document(report.added[0].id, with_pages=True)
    page = doc.pages[1]
    assert [c.id for c in page.components] == ["TI1", "P1", "T1", "P2"]
    assert page.component("P2").bbox == BBox(x0=500, y0=800, x1=595, y1=842)  # clipped to the page
    assert page.component("T1").markdown.endswith("|1.25|2|") and (root / page.component("T1").crop_path).is_file()
    assert doc.title == "Chapter 1" and page.component("P1").section_path == ["Chapter 1", "Chapter 2"]
    store.close()


def test_spawn_safety_follows_the_main_guard(tmp_path, monkeypatch):
    script = tmp_path / "script.py"
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    script.write_text("from docgraph import Workspace\nWorkspace('ws').add(['a.pdf'])\n")
    assert not spawn_safe()
    script.write_text("def main(): ...\n\nif __name__ == '__main__':\n    main()\n")
    assert spawn_safe()


def test_rotated_pages_are_read_in_their_displayed_orientation(tmp_path):
    with pymupdf.open() as doc:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 770), LOREM * 3, fontsize=11, rotate=90)
        page.set_rotation(90)  # displayed landscape, text upright
        doc.save(tmp_path / "rotated.pdf")
    root = tmp_path / "ws"
    store = SQLiteStore(root)
    report = ingest(store, root, IngestSettings(workers=1), [tmp_path / "rotated.pdf"])
    page = store.get_page(report.added[0].id, 1)
    assert (page.width, page.height) == (842, 595)
    (para,) = [c for c in page.components if c.kind is K.PARAGRAPH]
    assert para.text.startswith("Grounded answers") and para.bbox.width > 600 and para.bbox.y1 < 200
    image = Image.open(root / page.image_path).convert("L")
    x0, y0, x1, y1 = (round(v * 2) for v in para.bbox.as_tuple())
    assert image.crop((x0, y0, x1, y1)).getextrema()[0] < 100  # the box holds dark text pixels
    assert image.crop((0, 500, 1684, 1190)).getextrema()[0] == 255  # below it the page is blank
    store.close()
