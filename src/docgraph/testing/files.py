"""Files for tests and the fault benchmark: inputs no tool would write, and workspace
folders made ready to copy."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


FONT_DAMAGE = ("corrupt-program", "missing-font")


def damaged_fonts_pdf(source: Path, out: Path, how: str) -> Path:
    """A copy of ``source`` with every font damaged: ``corrupt-program`` overwrites each
    embedded font program with garbage (MuPDF falls back to a substitute font);
    ``missing-font`` empties each font dictionary (no type, encoding, widths, ToUnicode or
    program, as when the font objects were lost), so its character codes map to no text."""
    import pymupdf

    if how not in FONT_DAMAGE:
        raise ValueError(f"how must be one of {FONT_DAMAGE}")
    with pymupdf.open(source) as doc:
        fonts = list(dict.fromkeys(f[0] for page in doc for f in page.get_fonts(full=True)))
        for xref in fonts:
            if how == "missing-font":
                doc.update_object(xref, "<<>>")
                continue
            kind, value = doc.xref_get_key(xref, "FontDescriptor")
            if kind != "xref":  # a Type0 font: the descriptor is on its descendant
                kind, value = doc.xref_get_key(xref, "DescendantFonts")
                inner = value.strip("[] ").split(" ")[0] if kind in ("array", "xref") else ""
                kind, value = doc.xref_get_key(int(inner), "FontDescriptor") if inner.isdigit() else ("null", "")
            if kind != "xref":
                continue
            descriptor = int(value.split()[0])
            for key in ("FontFile", "FontFile2", "FontFile3"):
                kind, value = doc.xref_get_key(descriptor, key)
                if kind == "xref":
                    doc.update_stream(int(value.split()[0]), b"\0not a font program\0" * 64)
        doc.save(out, garbage=1)
    return out


def long_pdf(out: Path, pages: int, *, size: tuple[float, float] = (420, 595)) -> Path:
    """A born-digital PDF of ``pages`` small pages, each with a heading and a paragraph
    naming its page number (5,000 pages in about 7 s, 2 MB)."""
    import pymupdf

    with pymupdf.open() as doc:
        for number in range(1, pages + 1):
            page = doc.new_page(width=size[0], height=size[1])
            page.insert_text((50, 80), f"Section {number} of a long generated document", fontsize=14)
            page.insert_textbox(
                pymupdf.Rect(50, 100, size[0] - 50, 300),
                f"Paragraph on page {number}: grounded answers cite the page and the region they come from.",
                fontsize=10,
            )
        doc.save(out, garbage=1, deflate=True)
    return out


def checkpointed(root: Path) -> Path:
    """``root`` after folding its SQLite write-ahead log into the database file, so that a
    copy of the folder (a test's private workspace) is complete."""
    from ..store import SQLiteStore

    with sqlite3.connect(root / SQLiteStore.DB_NAME) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return root


def excerpt_pdf(source: Path, pages: Iterable[int], out: Path) -> Path:
    """``out``: the given pages (1-based, in that order) of the PDF ``source``."""
    import pymupdf

    with pymupdf.open(source) as whole, pymupdf.open() as part:
        for page in pages:
            part.insert_pdf(whole, from_page=page - 1, to_page=page - 1)
        part.save(out)
    return out


def built_library(
    excerpts: Mapping[Path, Iterable[int]], folder: Path, methods: Iterable[str] = ("kg4vd", "hvm")
) -> Path:
    """A workspace at ``folder / "ws"`` holding each source PDF's given pages as a document of
    its own (``excerpt_pdf``, written into ``folder`` under the source's name), built offline
    with ``methods``; returns the workspace folder."""
    from ..api import Workspace

    files = [excerpt_pdf(source, pages, folder / source.name) for source, pages in excerpts.items()]
    with Workspace(folder / "ws") as ws:
        ws.add(sorted(files))
        for method in methods:
            ws.build(method=method)
    return folder / "ws"
