"""The inputs of ``faults.py``'s bad-input cases: broken, hostile and awkward files, made fresh
in a folder, with the good files of the same batch."""

from __future__ import annotations

import os
from pathlib import Path

import pymupdf
from PIL import Image

from docgraph.testing.files import damaged_fonts_pdf, zero_page_pdf

REPO = Path(__file__).resolve().parents[1]
DOC = "openstax_world_history_v1_excerpt.pdf"
LOREM = (
    "Grounded answers cite the page and the region they come from. Each paragraph of this test "
    "document carries enough words for the layout model to see a text block."
)


def shared_documents() -> Path:
    env = os.environ.get("DOCGRAPH_SHARED_DATA")
    return (Path(env) if env else REPO.parent / "shared" / "data") / "documents"


def text_pdf(out: Path, text: str, **save) -> Path:
    with pymupdf.open() as doc:
        doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 770), text, fontsize=11)
        doc.save(out, **save)
    return out


def noted_inputs(folder: Path) -> dict[str, Path]:
    """kind → a file that must be added with one note naming it and its pages: the OpenStax
    excerpt with its fonts damaged (``testing.files.damaged_fonts_pdf``)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "broken fonts (embedded font programs corrupted)": damaged_fonts_pdf(
            shared_documents() / DOC, folder / "badfont.pdf", "corrupt-program"
        ),
        "broken fonts (font objects missing)": damaged_fonts_pdf(
            shared_documents() / DOC, folder / "nofont.pdf", "missing-font"
        ),
    }


def bad_inputs(folder: Path) -> tuple[dict[str, Path], list[Path]]:
    """kind → bad file (or folder), and the good files of the same batch."""
    folder.mkdir(parents=True)
    good_bytes = (shared_documents() / DOC).read_bytes()
    files = {
        "zero-byte": ("empty.pdf", b""),
        "truncated": ("truncated.pdf", good_bytes[: len(good_bytes) // 2]),
        "corrupt": ("corrupt.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n"),
        "not a PDF named .pdf": ("notes.pdf", b"just text\n" * 50),
        "unsupported type": ("table.xyz", b"a,b\n1,2\n"),
        "0 pages": ("nopages.pdf", zero_page_pdf()),
        "not an image named .png": ("photo.png", b"GIF89a not a png" * 10),
        "Office file, no LibreOffice on PATH": ("memo.docx", b"PK\x03\x04" + b"\0" * 100),
    }
    out = {}
    for kind, (name, data) in files.items():
        (folder / name).write_bytes(data)
        out[kind] = folder / name
    out["encrypted"] = text_pdf(
        folder / "locked.pdf", LOREM, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="pw"
    )
    text_pdf(folder / "huge.pdf", LOREM)
    with pymupdf.open(folder / "huge.pdf") as doc:
        doc.new_page(width=14400, height=14400)
        doc.saveIncr()
    out["page over the pixel cap"] = folder / "huge.pdf"
    text_pdf(folder / "bomb.pdf", LOREM)
    with pymupdf.open(folder / "bomb.pdf") as doc:
        doc.xref_set_key(doc[0].xref, "UserUnit", "75000")
        doc.saveIncr()
    out["PDF bomb of page size (UserUnit)"] = folder / "bomb.pdf"
    out["missing file"] = folder / "absent.pdf"
    unreadable = text_pdf(folder / "private.pdf", LOREM + " private")
    unreadable.chmod(0)
    if not os.access(unreadable, os.R_OK):
        out["unreadable permissions"] = unreadable
    else:
        unreadable.unlink()  # as root chmod 000 does not stop reads: the case cannot be made here
    # good files of the batch, in awkward places
    odd = Path(os.fsdecode(bytes(folder) + b"/caf\xe9-\xff.pdf"))
    text_pdf(folder / "plain.pdf", LOREM + " A file name in Latin-1 bytes.").rename(odd)
    loop = folder / "loop" / "sub"
    loop.mkdir(parents=True)
    text_pdf(loop / "inside.pdf", LOREM + " Inside a folder with a symlink loop.")
    (loop / "back").symlink_to("..")
    Image.new("RGB", (1240, 1754), "white").save(folder / "blank.png")
    return out, [odd, folder / "loop", folder / "blank.png"]
