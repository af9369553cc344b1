"""Office documents (DOCX, PPTX, ODT, ODP, DOC, PPT) → PDF with LibreOffice headless.

Uses ``soffice`` (or ``libreoffice``) from PATH with a private profile folder, so parallel
conversions and a desktop LibreOffice do not interfere. Without LibreOffice the error names
the Debian package to install.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..errors import InputError

WRITER_SUFFIXES = {".docx", ".doc", ".odt"}
IMPRESS_SUFFIXES = {".pptx", ".ppt", ".odp"}
OFFICE_SUFFIXES = WRITER_SUFFIXES | IMPRESS_SUFFIXES


def debian_package(suffix: str) -> str:
    return "libreoffice-impress-nogui" if suffix.lower() in IMPRESS_SUFFIXES else "libreoffice-writer-nogui"


def soffice_binary() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert_to_pdf(path: Path, out_dir: Path, timeout_s: int) -> Path:
    """Convert ``path`` into ``out_dir``; returns the PDF. Raises ``InputError`` naming the file."""
    suffix = path.suffix.lower()
    exe = soffice_binary()
    if exe is None:
        raise InputError(
            f"{suffix} files need LibreOffice, which is not installed; install it with "
            f"`apt-get install {debian_package(suffix)}` or export the file to PDF yourself",
            path=str(path),
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    profile = (out_dir / "lo-profile").resolve()
    cmd = [
        exe,
        f"-env:UserInstallation={profile.as_uri()}",
        "--headless",
        "--norestore",
        "--convert-to",
        "pdf",
        "--outdir",
        str(out_dir),
        str(path),
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise InputError(
            f"LibreOffice did not finish converting it within {timeout_s} s; raise "
            "ingest.office_timeout_s or export the file to PDF yourself",
            path=str(path),
        ) from exc
    pdf = out_dir / f"{path.stem}.pdf"
    if not pdf.is_file() or pdf.stat().st_size == 0:
        detail = (done.stderr or done.stdout or "").strip().splitlines()
        reason = detail[-1] if detail else f"exit status {done.returncode}"
        raise InputError(
            f"LibreOffice could not convert it to PDF ({reason}); check that it opens in "
            "LibreOffice, or export it to PDF yourself",
            path=str(path),
        )
    return pdf
