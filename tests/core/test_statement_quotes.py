"""An offline answer over a real income statement whose heading runs over two lines: the row
is quoted under its periods, and the claim check finds every figure of the quote in the row."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def statement(tmp_path_factory, shared_data: Path) -> Path:
    """CVS Health's FY2022 income statement (page 108 of the FinanceBench filing), alone, built offline."""
    from docgraph.testing.files import built_library

    source = shared_data / "financebench" / "pdfs" / "CVSHEALTH_2022_10K.pdf"
    if not source.is_file():
        pytest.skip("the FinanceBench filings are not in the shared data")
    return built_library({source: (108,)}, tmp_path_factory.mktemp("statement"))


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_statement_row_is_quoted_under_its_periods_and_checks_out(statement: Path, method: str):
    from docgraph import Workspace

    with Workspace(statement) as ws:
        answer = ws.ask("What was the net income attributable to CVS Health in 2022?", method)
    quotes = [line for line in answer.text.splitlines() if line.startswith("- ")]
    assert quotes[0].startswith("- \u201cNet income attributable to CVS Health \u2014 2022: $ 4,149; 2021: $ 7,910;")
    assert "Dece" not in answer.text, "the heading's broken words head no column"
    assert answer.claims and {claim.status for claim in answer.claims} == {"supported"}
