"""Opening PDFs with PyMuPDF: password handling and errors that name the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from ..errors import InputError


def open_pdf(path: Path, password: str | None = None, *, display_name: str | None = None) -> pymupdf.Document:
    """Open ``path`` as a PDF, authenticating with ``password`` when it is encrypted.

    ``display_name`` is the name used in errors (the user's file when ``path`` is a
    converted copy). Raises ``InputError``; never returns an unreadable document.
    """
    name = display_name or str(path)
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise InputError(
            "cannot be read as a PDF; it is damaged or not a PDF - re-export or re-download it", path=name
        ) from exc
    if doc.needs_pass:
        if password is None:
            doc.close()
            raise InputError("is encrypted; give its password with --password", path=name)
        if not doc.authenticate(password):
            doc.close()
            raise InputError("is encrypted and the password given does not open it; check --password", path=name)
    return doc
