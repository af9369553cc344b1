"""The measure lexicon (``methods.measures``): a question's derived measures imply the
statements and line items they are computed from; statement titles define their pages;
bad lexicon files fail with the file named; and on real pages of the Nike 10-K a ratio
question reaches the statements it is computed from."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.errors import ConfigError
from docgraph.methods.measures import Lexicon, lexicon
from docgraph.methods.references import LabelIndex
from docgraph.types import Chunk

BALANCE, INCOME, CASH_FLOWS = ("statement", "balance_sheet"), ("statement", "income_statement"), \
    ("statement", "cash_flow_statement")


def test_a_measure_implies_its_statements_and_inputs_whatever_its_spelling():
    reading = lexicon().read("what is the FY2021 inventory turnover ratio for Nike?")
    assert reading.statements == (INCOME, BALANCE)
    assert {"cost of sales", "inventories"} <= set(reading.terms)
    assert lexicon().read("What is  cash_ratio in FY2021 for Nike?").statements == (BALANCE,)
    assert lexicon().read("What is the acid-test ratio?").statements == (BALANCE,)
    assert lexicon().read("What were the Capital Expenditures in 2018?").statements == (CASH_FLOWS,)


def test_a_named_statement_comes_before_those_a_measure_implies():
    reading = lexicon().read("What is the FY2018 capex based on the cash flow statement and the balance sheets?")
    assert reading.statements == (CASH_FLOWS, BALANCE)
    assert lexicon().read("What does the consolidated statements of operations show?").statements == (INCOME,)


def test_questions_without_measures_are_left_as_they_are():
    question = "How many charts provide no opinions only from the no lean group?"
    reading = lexicon().read(question)
    assert reading.statements == () and reading.terms == ()
    assert reading.sparse_query(question) == question
    assert lexicon().read("What is the ratio of women to men among the respondents?").statements == ()


def test_a_statement_title_is_a_heading_and_prose_or_a_contents_line_is_not():
    label = lexicon().heading_label
    assert label("CONSOLIDATED BALANCE SHEETS") == BALANCE
    assert label("Consolidated Statements of Cash Flows (in millions)") == CASH_FLOWS
    assert label("Consolidated Statements of Operations for the years ended December 31") == INCOME
    assert label("Condensed Consolidated Statement of Financial Position") == BALANCE
    # as three real 10-Ks print them: the company first, a date after, a word's last letter split off
    assert label("ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES CONSOLIDATED BALANCE SHEETS (Amounts in millions)") \
        == BALANCE
    assert label("3M Company and Subsidiaries Consolidated Statement of Cash Flow s Years ended December 31") \
        == CASH_FLOWS
    assert label("Consolidated Statements of Earnings") == INCOME
    assert label("ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES CONSOLIDATED STATEMENTS OF CHANGES IN "
                 "SHAREHOLDERS\u2019 EQUITY For the Years Ended December 31, 2019") == ("statement", "equity_statement")
    assert label("Balance Sheet:") is None, "a run-in heading of the management discussion"
    assert label("The following table presents our balance sheet.") is None
    assert label("Consolidated Statements of Comprehensive Income") is None, "not the income statement"
    assert label("Balance sheet data decreased as inventories fell") is None
    assert label("Consolidated Balance Sheets 61") is None, "a contents line"
    assert label("Cash Flows") is None, "MD&A's discussion of cash flows"


def test_a_statement_heading_defines_the_statement_at_its_first_chunk():
    def chunk(page: int, section: str, text: str) -> Chunk:
        return Chunk(id=f"c{page}", doc_id="d", page=page, component_ids=["P1"], modality="text", text=text,
                     section_path=["NIKE, Inc.", section])

    chunks = [chunk(4, "ITEM 7. MANAGEMENT'S DISCUSSION", "Inventories rose 7% as the balance sheet shows"),
              chunk(61, "CONSOLIDATED BALANCE SHEETS", "Cash and equivalents 9,889 Inventories 6,854"),
              chunk(62, "CONSOLIDATED BALANCE SHEETS", "Total liabilities and shareholders' equity")]
    title = Chunk(id="t", doc_id="d", page=40, component_ids=["TI2"], modality="text",
                  text="Consolidated Statements of Earnings", section_path=["BEST BUY FISCAL 2023 FORM 10-K"])
    chunks.append(title)  # a title chunk under another section: the layout made no section of it
    index = LabelIndex.build(chunks, lexicon().heading_label)
    assert index.rows(BALANCE) == [1]
    assert index.rows(INCOME) == [3]
    assert LabelIndex.build(chunks).rows(BALANCE) == [], "without a lexicon no heading names a statement"


def test_a_users_lexicon_adds_its_own_domain(tmp_path: Path):
    own = tmp_path / "clinical.toml"
    own.write_text('[statements.adverse_events]\nnames = ["summary of adverse events"]\n\n'
                   '[[measures]]\nnames = ["number needed to harm", "NNH"]\ninputs = ["adverse event rate"]\n'
                   'statements = ["adverse_events"]\n', encoding="utf-8")
    lex = Lexicon.load([own])
    reading = lex.read("What is the NNH for the 10 mg arm?")
    assert reading.statements == (("statement", "adverse_events"),) and reading.terms == ("adverse event rate",)
    assert lex.heading_label("Table 14.3.1 Summary of Adverse Events") == ("statement", "adverse_events")
    assert lex.heading_label("A summary of adverse events follows") is None, "prose, not a title"
    assert lex.heading_label("SUMMARY OF ADVERSE EVENTS") == ("statement", "adverse_events")
    assert lex.read("What is the current ratio?").statements == (BALANCE,), "the bundled lexicon stays"


def test_bad_lexicon_files_name_the_file_and_the_fix(tmp_path: Path):
    with pytest.raises(ConfigError, match="missing.toml.*retrieval.lexicons"):
        Lexicon.load([tmp_path / "missing.toml"])
    broken = tmp_path / "broken.toml"
    broken.write_text("[[measures]]\ninputs = ['x']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="broken.toml.*not a lexicon file"):
        Lexicon.load([broken])
    orphan = tmp_path / "orphan.toml"
    orphan.write_text("[[measures]]\nnames = ['burn rate']\nstatements = ['runway']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="runway"):
        Lexicon.load([orphan])


FILING = "NIKE_2021_10K.pdf"  # statements of income p. 59, balance sheets p. 61
FILING_PAGES = (4, 26, 37, 39, 59, 61, 65)  # with the pages text similarity ranked first for ratio questions


@pytest.fixture(scope="module")
def filing_workspace(mmlongbench_excerpt) -> Path:
    """A workspace holding seven real pages of Nike's 10-K, kg4vd and hvm built offline."""
    return mmlongbench_excerpt(FILING, FILING_PAGES)


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_ratio_question_reaches_the_statements_it_is_computed_from(filing_workspace: Path, method: str):
    from docgraph import Workspace
    from docgraph.eval.records import ranked_pages

    statements = {FILING_PAGES.index(59) + 1, FILING_PAGES.index(61) + 1}
    balance_sheet = FILING_PAGES.index(61) + 1
    turnover = "What is the FY2021 inventory turnover ratio for Nike?"
    cash = "What is the cash ratio in FY2021 for Nike?"
    with Workspace(filing_workspace, create=False) as ws:
        assert {p.page for p in ranked_pages(ws.retrieve(turnover, method=method))[:2]} == statements
        assert ranked_pages(ws.retrieve(cash, method=method))[0].page == balance_sheet
    with Workspace(filing_workspace, overrides={"retrieval": {"measures": False}}, create=False) as ws:
        top = ranked_pages(ws.retrieve(turnover, method=method))[:2]
        assert not statements & {p.page for p in top}, "the words alone find the discussion, not the statements"
