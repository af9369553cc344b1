"""The lexicon (``methods.retrieval.lexicon``): a question's derived measures imply the statements
and line items they are computed from; statement titles define their pages; a question
about the document itself points at its first page; bad lexicon files fail with the file
named; and on real pages of the Nike 10-K a ratio question reaches the statements it is
computed from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docgraph.errors import ConfigError
from docgraph.methods.retrieval.lexicon import COVER, Lexicon, lexicon
from docgraph.methods.retrieval.references import LabelIndex
from docgraph.types import Chunk

BALANCE, INCOME, CASH_FLOWS = (
    ("statement", "balance_sheet"),
    ("statement", "income_statement"),
    ("statement", "cash_flow_statement"),
)


def test_a_measure_implies_its_statements_and_inputs_whatever_its_spelling():
    reading = lexicon().read("what is the FY2021 inventory turnover ratio for Nike?")
    assert reading.labels == (INCOME, BALANCE)
    assert {"cost of sales", "inventories"} <= set(reading.terms)
    assert lexicon().read("What is  cash_ratio in FY2021 for Nike?").labels == (BALANCE,)
    assert lexicon().read("What is the acid-test ratio?").labels == (BALANCE,)
    assert lexicon().read("What were the Capital Expenditures in 2018?").labels == (CASH_FLOWS,)
    # two measures found at one position ("working capital ratio", "working capital"): no error, one statement
    assert lexicon().read("What is the working capital ratio?").labels == (BALANCE,)


def test_a_named_statement_comes_before_those_a_measure_implies():
    reading = lexicon().read("What is the FY2018 capex based on the cash flow statement and the balance sheets?")
    assert reading.labels == (CASH_FLOWS, BALANCE)
    assert lexicon().read("What does the consolidated statements of operations show?").labels == (INCOME,)


def test_measure_names_are_textbook_names_and_line_items_have_their_usual_captions():
    # names no textbook gives a measure read nothing
    for question in (
        "What is the interest to average total debt?",
        "What is the effective tax ratio?",
        "How much invested capital does it have?",
    ):
        assert lexicon().read(question).labels == (), question
    # the average-balance forms come in pairs
    assert lexicon().read("return on average assets").terms == lexicon().read("return on assets").terms
    assert lexicon().read("return on average equity").terms == lexicon().read("return on equity").terms
    turnover = lexicon().read("What is the inventory turnover ratio?").terms
    assert {"cost of sales", "cost of goods sold", "cost of revenue", "inventories"} <= set(turnover)
    assert {"revenue", "net sales", "net revenues"} <= set(lexicon().read("asset turnover").terms)


def test_a_line_item_a_standard_has_a_statement_print_points_at_that_statement():
    assert lexicon().read("What goodwill does the company have at year end?").labels == (BALANCE,)
    assert lexicon().read("What is the gross profit to total assets ratio?").labels == (INCOME, BALANCE)
    assert lexicon().read("How much were net cash provided by operating activities?").labels == (CASH_FLOWS,)
    assert lexicon().read("What were Total Stockholders' Equity and PP&E?").labels == (BALANCE,)
    assert lexicon().read("What were COGS and SG&A in FY2021?").labels == (INCOME,)
    assert lexicon().read("How much D&A did it report?").labels == (CASH_FLOWS,)
    # after the statements the question names and those its measures imply; no input terms of their own
    reading = lexicon().read("Using the cash flow statement, what was net income?")
    assert reading.labels == (CASH_FLOWS, INCOME) and reading.terms == () and reading.items == ("net income",)
    assert lexicon().read("What is the current ratio given net income?").labels == (BALANCE, INCOME)
    # captions that head segment notes and the discussion as often as a statement read nothing
    for question in ("What was revenue by segment?", "How much cash did it hold?", "What were sales in Asia?"):
        assert lexicon().read(question).labels == (), question
    # asked of a part of the business, a line item is the segment note's (ASC 280), not the statement's
    for question in ("Which segment had the highest net income?", "What was net sales in each geographic area?"):
        assert lexicon().read(question).labels == (), question
    assert lexicon().read("What is the current ratio of the largest segment?").labels == (BALANCE,), "measures stay"
    assert lexicon().read("What goodwill does the company have?", line_items=False).labels == ()
    assert lexicon().read("What goodwill does the company have?", measures=False).labels == ()


def test_questions_without_measures_are_left_as_they_are():
    question = "How many charts provide no opinions only from the no lean group?"
    reading = lexicon().read(question)
    assert reading.labels == () and reading.terms == ()
    assert reading.sparse_query(question) == question
    assert lexicon().read("What is the ratio of women to men among the respondents?").labels == ()


def test_a_question_about_the_document_itself_points_at_its_cover():
    for question in (
        "What is the date of the document?",
        "who is the presenter of this slide?",
        "What is the title of the slide?",
        "Who is the defendant of this case?",
        "WHAT IS USCA CASE NUMBER?",
        "Who wrote this book?",
        "List this paper's authors.",
    ):
        assert lexicon().read(question).labels == (COVER,), question
    for question in (
        "What is the title of the chart on page 5?",
        "How many respondents were surveyed?",
        "What date did the survey end?",
        "Which paper proposes the method?",
    ):
        assert COVER not in lexicon().read(question).labels, question
    assert lexicon().read("What is the date of the document?", front_matter=False).labels == ()
    # a part of the document named by a clause or a number is no question about the document itself
    for question in (
        "What is the title of the slide that shows revenue?",
        "What is the date of the survey fieldwork?",
        "What is the title of the slide with the pie chart?",
        "What is the title of the slide 5?",
        "What is the date of the report in which the chart appears?",
    ):
        assert COVER not in lexicon().read(question).labels, question
    assert lexicon().read("What is the cash ratio on the date of this report?").labels == (BALANCE, COVER), (
        "statements first"
    )


def page_chunk(doc: str, page: int, text: str, section_path: list[str] | None = None) -> Chunk:
    """One chunk of one paragraph on ``page`` of ``doc``."""
    return Chunk(
        id=f"{doc}{page}",
        doc_id=doc,
        page=page,
        component_ids=["P1"],
        modality="text",
        text=text,
        section_path=section_path or [],
    )


def test_the_cover_is_the_first_page_of_each_document():
    from docgraph.config import RetrievalSettings
    from docgraph.methods.retrieval.evidence_layer import EvidenceLayer

    chunks = [page_chunk(doc, page, f"text of {doc} page {page}") for doc in ("a", "b") for page in (1, 2, 3)]
    layer = EvidenceLayer.build(chunks, np.eye(6, 8, dtype=np.float32), RetrievalSettings())
    question = "What is the date of the document?"
    labels = lexicon().read(question).labels
    assert layer.referenced_pages(question, labels).tolist() == [1, 0, 0, 1, 0, 0]
    content = np.array([0.1, 0.3, 0.2, 0.9, 0.1, 0.0])  # the pages' own scores: document b is the one asked about
    assert layer.referenced_pages(question, labels, content).tolist() == [0.5, 0, 0, 1, 0, 0], (
        "covers ordered by their own content, not by the documents' order"
    )
    passages = [
        Chunk(id=doc, doc_id=doc, page=1, component_ids=["P1"], modality="text", text=f"passage {doc}")
        for doc in ("a", "b", "c")
    ]
    layer = EvidenceLayer.build(passages, np.eye(3, 8, dtype=np.float32), RetrievalSettings())
    assert not layer.referenced_pages(question, labels).any(), "one-page documents (passages) have no cover"


def test_a_statement_title_is_a_heading_and_prose_or_a_contents_line_is_not():
    label = lexicon().heading_label
    assert label("CONSOLIDATED BALANCE SHEETS") == BALANCE
    assert label("Consolidated Statements of Cash Flows (in millions)") == CASH_FLOWS
    # a long registrant name and "and Subsidiary Companies" before the statement's name
    assert (
        label(
            "American Water Works Company, Inc. and Subsidiary Companies Consolidated Statements of "
            "Cash Flows (In millions)"
        )
        == CASH_FLOWS
    )
    assert label("Consolidated Statements of Operations for the years ended December 31") == INCOME
    assert label("Condensed Consolidated Statement of Financial Position") == BALANCE
    # as three real 10-Ks print them: the company first, a date after, a word's last letter split off
    assert (
        label("ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES CONSOLIDATED BALANCE SHEETS (Amounts in millions)") == BALANCE
    )
    assert (
        label("3M Company and Subsidiaries Consolidated Statement of Cash Flow s Years ended December 31") == CASH_FLOWS
    )
    assert label("Consolidated Statements of Earnings") == INCOME
    assert label(
        "ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES CONSOLIDATED STATEMENTS OF CHANGES IN "
        "SHAREHOLDERS\u2019 EQUITY For the Years Ended December 31, 2019"
    ) == ("statement", "equity_statement")
    assert label("Balance Sheet:") is None, "a run-in heading of the management discussion"
    assert label("The following table presents our balance sheet.") is None
    assert label("Consolidated Statements of Comprehensive Income") is None, "not the income statement"
    assert label("Balance sheet data decreased as inventories fell") is None
    assert label("Consolidated Balance Sheets 61") is None, "a contents line"
    assert label("Cash Flows") is None, "MD&A's discussion of cash flows"


def test_a_statement_heading_defines_the_statement_at_its_first_chunk():
    def chunk(page: int, section: str, text: str) -> Chunk:
        return Chunk(
            id=f"c{page}",
            doc_id="d",
            page=page,
            component_ids=["P1"],
            modality="text",
            text=text,
            section_path=["NIKE, Inc.", section],
        )

    chunks = [
        chunk(4, "ITEM 7. MANAGEMENT'S DISCUSSION", "Inventories rose 7% as the balance sheet shows"),
        chunk(61, "CONSOLIDATED BALANCE SHEETS", "Cash and equivalents 9,889 Inventories 6,854"),
        chunk(62, "CONSOLIDATED BALANCE SHEETS", "Total liabilities and shareholders' equity"),
    ]
    title = Chunk(
        id="t",
        doc_id="d",
        page=40,
        component_ids=["TI2"],
        modality="text",
        text="Consolidated Statements of Earnings",
        section_path=["BEST BUY FISCAL 2023 FORM 10-K"],
    )
    chunks.append(title)  # a title chunk under another section: the layout made no section of it
    index = LabelIndex.build(chunks, lexicon().heading_label)
    assert index.rows(BALANCE) == [1]
    assert index.rows(INCOME) == [3]
    assert LabelIndex.build(chunks).rows(BALANCE) == [], "without a lexicon no heading names a statement"


def test_the_primary_statement_is_the_one_a_question_refers_to():
    """A 10-K titles the balance sheet again in its notes (the guarantors' "Condensed
    Consolidating Balance Sheets") and a library holds several filings: each document's first
    run of pages titled as the statement is referenced, its later runs are not."""
    from docgraph.config import RetrievalSettings
    from docgraph.methods.retrieval.evidence_layer import EvidenceLayer

    titled = {
        ("k", 50): "Consolidated Balance Sheets",
        ("k", 51): "Consolidated Balance Sheets (continued)",
        ("k", 114): "Condensed Consolidating Balance Sheets",
        ("k", 115): "Condensed Consolidating Balance Sheets (continued)",
        ("w", 40): "Consolidated Balance Sheets",
        ("w", 90): "Parent Company Balance Sheets",
    }
    chunks = [
        page_chunk(doc, page, f"Total assets on page {page}", [title])
        for (doc, page), title in [(("k", 2), "Item 7"), *titled.items(), (("w", 2), "Item 7")]
    ]
    layer = EvidenceLayer.build(chunks, np.eye(len(chunks), 16, dtype=np.float32), RetrievalSettings())
    question = "What is the current ratio?"
    weights = dict(zip(layer.pages, layer.referenced_pages(question, lexicon().read(question).labels).tolist()))
    assert weights == {
        ("k", 2): 0.0,
        ("k", 50): 1.0,
        ("k", 51): 1.0,
        ("k", 114): 0.0,
        ("k", 115): 0.0,
        ("w", 2): 0.0,
        ("w", 40): 1.0,
        ("w", 90): 0.0,
    }
    # two filings packed into one PDF: each part (documents.parts) has its own primary statement
    packed = [
        page_chunk("p", page, "Total assets", path)
        for page, path in (
            (50, ["Acme Inc.", "Balance Sheets"]),
            (140, ["Globex Corp.", "Balance Sheets"]),
            (180, ["Globex Corp.", "Parent Company Balance Sheets"]),
        )
    ]
    layer = EvidenceLayer.build(packed, np.eye(3, 16, dtype=np.float32), RetrievalSettings(), parts={"p": [1, 100]})
    assert layer.referenced_pages(question, lexicon().read(question).labels).tolist() == [1.0, 1.0, 0.0]


def test_a_users_lexicon_adds_its_own_domain(tmp_path: Path):
    own = tmp_path / "clinical.toml"
    own.write_text(
        '[statements.adverse_events]\nnames = ["summary of adverse events"]\nitems = ["serious adverse events"]\n\n'
        '[[measures]]\nnames = ["number needed to harm", "NNH"]\ninputs = ["adverse event rate"]\n'
        'statements = ["adverse_events"]\n',
        encoding="utf-8",
    )
    lex = Lexicon.load([own])
    reading = lex.read("What is the NNH for the 10 mg arm?")
    assert reading.labels == (("statement", "adverse_events"),) and reading.terms == ("adverse event rate",)
    assert lex.heading_label("Table 14.3.1 Summary of Adverse Events") == ("statement", "adverse_events")
    assert lex.heading_label("A summary of adverse events follows") is None, "prose, not a title"
    assert lex.heading_label("SUMMARY OF ADVERSE EVENTS") == ("statement", "adverse_events")
    assert lex.read("What is the current ratio?").labels == (BALANCE,), "the bundled lexicon stays"
    assert lex.read("How many serious adverse events were there?").labels == (("statement", "adverse_events"),)


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


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_line_item_question_tops_with_the_statement_that_prints_it(filing_workspace: Path, method: str):
    from docgraph import Workspace
    from docgraph.eval.records import ranked_pages

    asked = {  # question -> the page of the statement printing its line item
        "How much goodwill did Nike carry in FY2021?": 61,
        "What was Nike's net income in FY2021?": 59,
        "What is Nike's accumulated other comprehensive income for FY2021?": 61,
    }
    for line_items in (True, False):
        with Workspace(filing_workspace, overrides={"retrieval": {"line_items": line_items}}, create=False) as ws:
            for question, statement in asked.items():
                top = FILING_PAGES[ranked_pages(ws.retrieve(question, method=method))[0].page - 1]
                assert (top == statement) is line_items, (question, line_items, top)


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_the_offline_answer_to_a_line_item_quotes_its_row_first(filing_workspace: Path, method: str):
    from docgraph import Workspace

    with Workspace(filing_workspace, create=False) as ws:
        income = ws.ask("What was Nike's net income in FY2021?", method=method)
        named = ws.ask("What were Nike's net income and total assets in FY2021?", method=method)
    first = [line for line in income.text.splitlines() if line.startswith("- ")]
    assert first[0].startswith("- \u201cNET INCOME \u2014") and "5,727" in first[0]
    quoted = [line for line in named.text.splitlines() if line.startswith("- ")][:2]
    assert quoted[0].startswith("- \u201cNET INCOME") and quoted[1].startswith("- \u201cTOTAL ASSETS"), quoted


CASE = "a4f3ced0696009fec3179f493e4f28c4.pdf"  # a court filing: its caption page (p. 1) carries the date
CASE_PAGES = (1, 2, 4, 7, 13)  # with the pages text similarity ranked first for the date question


@pytest.fixture(scope="module")
def case_workspace(mmlongbench_excerpt) -> Path:
    """A workspace holding five real pages of a court filing, kg4vd and hvm built offline."""
    return mmlongbench_excerpt(CASE, CASE_PAGES)


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_the_date_of_the_document_is_on_its_first_page(case_workspace: Path, method: str):
    from docgraph import Workspace
    from docgraph.eval.records import ranked_pages

    question = "What is the date of the document?"
    with Workspace(case_workspace, create=False) as ws:
        assert ranked_pages(ws.retrieve(question, method=method))[0].page == 1
    with Workspace(case_workspace, overrides={"retrieval": {"front_matter": False}}, create=False) as ws:
        assert ranked_pages(ws.retrieve(question, method=method))[0].page != 1, "the words alone miss the caption"


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_the_offline_answer_to_a_ratio_quotes_the_rows_it_is_computed_from(filing_workspace: Path, method: str):
    from docgraph import Workspace

    balance_sheet, income_statement = FILING_PAGES.index(61) + 1, FILING_PAGES.index(59) + 1
    with Workspace(filing_workspace, create=False) as ws:
        cash = ws.ask("What is the cash ratio in FY2021 for Nike?", method=method)
        turnover = ws.ask("What is the FY2021 inventory turnover ratio for Nike?", method=method)

    def quotes(answer, row: str, value: str) -> bool:
        return any(line.startswith(f"- \u201c{row} \u2014") and value in line for line in answer.text.splitlines())

    assert quotes(cash, "Cash and equivalents", "9,889") and quotes(cash, "Total current liabilities", "9,674")
    assert any(c.page == balance_sheet for c in cash.citations)
    assert quotes(turnover, "Cost of sales", "24,576") and quotes(turnover, "Inventories", "6,854")
    assert {balance_sheet, income_statement} <= {c.page for c in turnover.citations}
