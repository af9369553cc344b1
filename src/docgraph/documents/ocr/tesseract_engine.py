"""Text lines of a page image read by Tesseract's LSTM (``ingest.ocr_engine = "tesseract"``).

``tesserocr``'s wheel bundles libtesseract; the recognition models ("traineddata") come from
the ``tessdata.fast-<lang>`` packages, which install them under ``<prefix>/share/tessdata``
(``TESSDATA_PREFIX`` overrides the folder). Nothing is downloaded.

Why it is the default (``benchmarks/ingest.py``; CPU s per page on an AVX2 machine, one
thread, World History pages scanned at 150 dpi and read at 144): Tesseract 1.6 against 7.5
for rapidocr's PP-OCR recogniser, word recovery 0.997 against 1.000. Over the seven shared
documents its recovery is as good on average (better on the report and the picture book,
worse on the slide deck), so ``ingest.ocr_engine = "rapidocr"`` stays for stylised text and
for scripts Tesseract has no model for here.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import threading
from pathlib import Path

import numpy as np

from ...errors import ConfigError
from .layout import OcrLine

LANGUAGES = re.compile(r"^[a-z_]+(\+[a-z_]+)*$")


def tessdata_dir() -> Path:
    """The folder of traineddata files: ``TESSDATA_PREFIX``, else the one the tessdata packages fill."""
    env = os.environ.get("TESSDATA_PREFIX")
    return Path(env) if env else Path(sys.prefix) / "share" / "tessdata"


LEPTONICA_SILENT = 6  # L_SEVERITY_NONE


def quiet_leptonica(tesserocr_file: Path) -> bool:
    """Silence Leptonica, the image library inside tesserocr's wheel: on some pictures it
    prints "Error in boxClipToRectangle: box outside rectangle" to stderr for a box it clips
    and goes on, which a user's terminal should not show. Best effort: True when the bundled
    library was found and told; a build without it keeps its messages."""
    told = False
    for library in sorted((tesserocr_file.parent.parent / "tesserocr.libs").glob("libleptonica*.so*")):
        try:
            ctypes.CDLL(str(library)).setMsgSeverity(LEPTONICA_SILENT)  # the copy already loaded
            told = True
        except (OSError, AttributeError):
            continue
    return told


class TesseractReader:
    """Reads the text lines of RGB page images; one Tesseract instance, reused for every page.

    ``languages``: traineddata names joined by ``+`` (``"eng"``, ``"eng+deu"``). The wheel's
    libtesseract is built without OpenMP: one thread per reader, so page workers share the cores.
    One Tesseract instance reads one page at a time: threads sharing a reader take turns.
    """

    def __init__(self, languages: str = "eng"):
        if not LANGUAGES.match(languages):
            raise ConfigError(
                f"ingest.ocr_languages must be Tesseract language names joined by '+' "
                f"(e.g. 'eng' or 'eng+deu'), not {languages!r}"
            )
        folder = tessdata_dir()
        missing = [lang for lang in languages.split("+") if not (folder / f"{lang}.traineddata").is_file()]
        if missing:
            raise ConfigError(
                f"OCR language {missing[0]!r} is not installed: no {missing[0]}.traineddata in {folder}; "
                f"pip install tessdata.fast-{missing[0]} (or set TESSDATA_PREFIX to a folder that has "
                'it, or ingest.ocr_engine = "rapidocr")'
            )
        try:
            import tesserocr
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise ConfigError(f"OCR needs tesserocr ({exc}); reinstall docgraph") from exc
        self._tesserocr = tesserocr
        quiet_leptonica(Path(tesserocr.__file__))
        # inverted-text retries cost time and find nothing on rendered pages
        self._api = tesserocr.PyTessBaseAPI(
            path=str(folder),
            lang=languages,
            psm=tesserocr.PSM.AUTO,
            oem=tesserocr.OEM.LSTM_ONLY,
            variables={"tessedit_do_invert": "0"},
        )
        self._lock = threading.Lock()

    def networks(self) -> list:
        """None on ONNX: Tesseract runs its own LSTM (``OcrEngine`` asks every reader)."""
        return []

    def lines(self, rgb: np.ndarray, scale: float) -> list[OcrLine]:
        """The non-empty text lines of ``rgb`` (rendered at ``scale`` pixels per point), boxes in points."""
        from PIL import Image

        gray = Image.fromarray(np.ascontiguousarray(rgb)).convert("L")  # Tesseract binarises grey; ~10% faster
        with self._lock:
            return self._read(gray, scale)

    def _read(self, gray, scale: float) -> list[OcrLine]:
        api, level = self._api, self._tesserocr.RIL.TEXTLINE
        api.SetImage(gray)
        api.Recognize()
        found: list[OcrLine] = []
        iterator = api.GetIterator()
        if iterator is None:
            return found
        for item in self._tesserocr.iterate_level(iterator, level):
            if item.Empty(level):  # a blank page still yields one empty item, whose text raises
                continue
            text = item.GetUTF8Text(level)
            box = item.BoundingBox(level)
            if text and text.strip() and box is not None:
                x0, y0, x1, y1 = (v / scale for v in box)
                found.append(
                    OcrLine(
                        (float(x0), float(y0), float(x1), float(y1)),
                        " ".join(text.split()),
                        confidence=float(item.Confidence(level)) / 100.0,
                    )
                )
        return found
