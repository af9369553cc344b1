"""Fixtures of the core tests: a small library of real filings, built offline."""

from __future__ import annotations

from pathlib import Path

import pytest

FILINGS = {"3M_2018_10K.pdf": (1, 60), "3M_2022_10K.pdf": (1, 52), "BOEING_2018_10K.pdf": (1, 53)}


@pytest.fixture(scope="session")
def filings_library(tmp_path_factory, shared_data: Path) -> Path:
    """Three real filings' covers and cash flow statements in one workspace, kg4vd and hvm
    built offline (FinanceBench development filings)."""
    from docgraph.testing.files import built_library

    source = shared_data / "financebench" / "pdfs"
    if not source.is_dir():
        pytest.skip("the FinanceBench filings are not in the shared data")
    return built_library({source / name: pages for name, pages in FILINGS.items()}, tmp_path_factory.mktemp("filings"))
