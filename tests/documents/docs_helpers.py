"""Helpers for the documents tests: test PDFs and a workspace snapshot (rows + files)."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pymupdf

from docgraph.store import SQLiteStore
from docgraph.testing.files import zero_page_pdf  # noqa: F401  (re-exported for the tests)


def word_recall(found: str, reference: str) -> float:
    """Share of ``reference``'s words (lower-cased, with multiplicity) that ``found`` has."""
    ref = Counter(re.findall(r"[a-z0-9]+", reference.lower()))
    got = Counter(re.findall(r"[a-z0-9]+", found.lower()))
    return sum(min(n, got[w]) for w, n in ref.items()) / max(1, sum(ref.values()))


def rasterise(src: Path, pages: list[int], out: Path, dpi: int = 150) -> Path:
    """An image-only PDF of the given 1-based pages of ``src`` (no text layer)."""
    with pymupdf.open(src) as doc, pymupdf.open() as dst:
        for number in pages:
            page = doc[number - 1]
            pix = page.get_pixmap(dpi=dpi, alpha=False)
            dst.new_page(width=page.rect.width, height=page.rect.height).insert_image(
                pymupdf.Rect(0, 0, page.rect.width, page.rect.height), pixmap=pix
            )
        dst.save(out)
    return out


def snapshot(root: Path) -> dict:
    """Every database row and every file (with a content hash) of a workspace."""
    db = sqlite3.connect(f"file:{root / SQLiteStore.DB_NAME}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        rows = {t: sorted(map(repr, db.execute(f"SELECT * FROM {t}"))) for t in tables}
    finally:
        db.close()
    files = {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(SQLiteStore.DB_NAME)
    }
    return {"rows": rows, "files": files}


def text_pdf(out: Path, pages: list[str], *, size: tuple[float, float] = (595, 842), **save_options) -> Path:
    """A small born-digital PDF: one page of text per string (optionally encrypted via save options)."""
    with pymupdf.open() as doc:
        for text in pages:
            page = doc.new_page(width=size[0], height=size[1])
            page.insert_textbox(pymupdf.Rect(72, 72, size[0] - 72, size[1] - 72), text, fontsize=11)
        doc.save(out, **save_options)
    return out


LOREM = (
    "Grounded answers cite the page and the region they come from. Each paragraph of this test "
    "document carries enough words for the layout model to see a text block, and a reader to see prose."
)


def minimal_docx(out: Path, paragraphs: list[str]) -> Path:
    """A small but valid DOCX (WordprocessingML in a zip) with the given paragraphs."""
    import zipfile
    from xml.sax.saxutils import escape

    body = "".join(f"<w:p><w:r><w:t>{escape(p)}</w:t></w:r></w:p>" for p in paragraphs)
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName='
            '"/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.'
            'document.main+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'
        ),
        "word/document.xml": (
            '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
            f'wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>'
        ),
    }
    with zipfile.ZipFile(out, "w") as zf:
        for name, xml in parts.items():
            zf.writestr(name, xml)
    return out


FAKE_SOFFICE = '''#!{python}
"""Stands in for LibreOffice: `soffice ... --convert-to pdf --outdir DIR FILE` → DIR/<stem>.pdf."""
import re, sys, zipfile
from pathlib import Path
import pymupdf
args = sys.argv[1:]
out_dir, src = Path(args[args.index("--outdir") + 1]), Path(args[-1])
text = " ".join(re.findall(r"<w:t>([^<]*)</w:t>", zipfile.ZipFile(src).read("word/document.xml").decode()))
with pymupdf.open() as doc:
    doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 770), text, fontsize=11)
    doc.save(out_dir / (src.stem + ".pdf"))
'''


class FakePdf:
    """A backend that reports fixed blocks for every page (the Parser seam, without layout models)."""

    def __init__(self, path: Path):
        with pymupdf.open(path) as doc:
            self.page_count = doc.page_count
            self._size = (doc[0].rect.width, doc[0].rect.height)

    def page_info(self, number):
        from docgraph.documents.parser import PageInfo

        return PageInfo(width=self._size[0], height=self._size[1], text_chars=500, has_images=False)

    def layout(self, number):
        from docgraph.documents.parser import LayoutBlock
        from docgraph.types import ComponentKind as K

        return [
            LayoutBlock(K.TITLE, (72, 60, 300, 80), f"Chapter {number}", heading_size=20.0),
            LayoutBlock(K.PARAGRAPH, (72, 100, 500, 200), "Body text."),
            LayoutBlock(K.TABLE, (72, 220, 500, 300), "a | b", markdown="|a|b|\n|---|---|\n|1.25|2|"),
            LayoutBlock(K.PARAGRAPH, (500, 800, 9000, 9000), "Runs off the page."),
        ]

    def close(self):
        pass


class FakeParser:
    name = "fake"

    def open(self, path, password=None):
        return FakePdf(path)


class CrashingParser(FakeParser):
    """Kills its worker process on page 2 of files named crash*.pdf (a segfault, an OOM kill)."""

    name = "crashing"

    def open(self, path, password=None):
        doc = FakePdf(path)
        if Path(path).name.startswith("crash"):
            real = doc.layout

            def layout(number):
                if number == 2:
                    import os

                    os._exit(1)
                return real(number)

            doc.layout = layout
        return doc
