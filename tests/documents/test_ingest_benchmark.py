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
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--scanned-only",
            "--scanned-pages",
            "3",
            "--ocr-rows",
            "shipped",
            "--data",
            str(shared_data / "documents"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    number = r"\s+([\d.]+)"
    row = re.search(r"^scanned \(OCR\), default OCR settings \(auto\)\s+3" + number * 6 + r"\s*$", done.stdout, re.M)
    assert row, done.stdout
    seconds, rate, cpu_per_page, estimated, words, running = map(float, row.groups())
    assert words > 0.9, "Tesseract reads the rasterised World History pages"
    # The table prints seconds to 0.1 and the rate from the unrounded time: the rate must lie
    # within what a time that rounds to the printed seconds allows (plus the rate's own rounding).
    fastest, slowest = 3 / max(seconds - 0.05, 1e-9), 3 / (seconds + 0.05)
    assert slowest - 0.005 <= rate <= fastest + 0.005, (rate, seconds)
    assert running > 0 and cpu_per_page > 0
    assert "previous OCR settings" not in done.stdout, "--ocr-rows shipped runs only the shipped row"
