"""``benchmarks/ingest.py``'s scanned row end to end: a 3-page image-only PDF through the
shipped OCR settings, with word recovery and the rate once the page workers are running."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ingest.py"


def test_the_scanned_row_gives_words_and_the_running_rate(shared_data):
    done = subprocess.run([sys.executable, str(SCRIPT), "--scanned-only", "--scanned-pages", "3",
                           "--ocr-rows", "shipped", "--data", str(shared_data / "documents")],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    number = r"\s+([\d.]+)"
    row = re.search(r"^scanned \(OCR\), default OCR settings \(auto\)\s+3" + number * 6 + r"\s*$",
                    done.stdout, re.M)
    assert row, done.stdout
    seconds, rate, cpu_per_page, estimated, words, running = map(float, row.groups())
    assert words > 0.9, "Tesseract reads the rasterised World History pages"
    assert rate == round(3 / seconds, 2) or abs(rate - 3 / seconds) < 0.01
    assert running > 0 and cpu_per_page > 0
    assert "previous OCR settings" not in done.stdout, "--ocr-rows shipped runs only the shipped row"
