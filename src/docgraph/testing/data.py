"""Where the shared evaluation data lives: ``shared/data`` beside the repository (as CI lays
it out), or ``$DOCGRAPH_SHARED_DATA``."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def shared_data_dir() -> Path:
    env = os.environ.get("DOCGRAPH_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data", Path("/work/shared/data")]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise RuntimeError("shared/data not found beside the repository; set DOCGRAPH_SHARED_DATA")


# the shared documents by short name (benchmarks' --docs / --offline-docs options)
SHARED_DOCUMENTS = {
    "world": "openstax_world_history_v1_excerpt.pdf",
    "jstor": "jstor_open_access_latin_america_report.pdf",
    "slides": "dl_comp_mech_slides_ch3_1.pdf",
    "books": "bookdash_picture_books.pdf",
    "audit": "st_mary_witney_social_audit.pdf",
    "grammar": "grammar_matters_textbook.pdf",
    "esg": "acciona_sustainability_report_2020_p1.pdf",
}
