"""Files for tests and the fault benchmark: inputs no tool would write, and workspace
folders made ready to copy."""

from __future__ import annotations

import sqlite3
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


def checkpointed(root: Path) -> Path:
    """``root`` after folding its SQLite write-ahead log into the database file, so that a
    copy of the folder (a test's private workspace) is complete."""
    from ..store import SQLiteStore

    with sqlite3.connect(root / SQLiteStore.DB_NAME) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return root
