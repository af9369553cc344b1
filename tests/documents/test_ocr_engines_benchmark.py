"""``benchmarks/ocr_engines.py`` end to end on the one-page shared report: each engine (auto,
tesseract, rapidocr) reads the scanned page, and the table gives each one's CPU seconds and
word recovery; auto leaves this confidently read page to Tesseract."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ocr_engines.py"
ONE_PAGE = "acciona_sustainability_report_2020_p1.pdf"


def test_the_ocr_engines_benchmark_reads_each_document_with_each_engine(tmp_path, shared_data):
    data = tmp_path / "documents"
    data.mkdir()
    (data / ONE_PAGE).symlink_to(shared_data / "documents" / ONE_PAGE)
    (data / "notes.txt").write_text("not a PDF: skipped")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(data), "--pages", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    number = r"\s+([\d.]+)"
    row = re.search(re.escape(ONE_PAGE) + r"\s+1" + number * 6 + r"\s*$", done.stdout, re.M)
    assert row, done.stdout
    auto_s, auto_words, tesseract_s, tesseract_words, rapidocr_s, rapidocr_words = map(float, row.groups())
    assert tesseract_s > 0 and rapidocr_s > 0 and auto_s > 0
    assert 0.5 < tesseract_words <= 1.0 and 0.3 < rapidocr_words <= 1.0
    assert auto_words == tesseract_words, "a confidently read report page is left to Tesseract"
    assert re.search(r"^mean over documents" + number * 6, done.stdout, re.M)
    assert "auto: 0 of 1 pages read again by rapidocr" in done.stdout
