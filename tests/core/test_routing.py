"""Routing in a library (``methods.retrieval.routing``): the documents a question names weigh more,
softly, and the router abstains when the question names none."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.documents.metadata import DocumentMeta
from docgraph.methods.retrieval.routing import DocumentRouter, PageDocuments, page_weights
from docgraph.methods.retrieval.routing_terms import question_kinds, question_quarters, question_years

SHELF = {
    "mmm18": DocumentMeta(organisation="3M COMPANY", period="FY2018", kind="10-K", file_name="3M_2018_10K"),
    "mmm22": DocumentMeta(organisation="3M COMPANY", period="FY2022", kind="10-K", file_name="3M_2022_10K"),
    "awk20": DocumentMeta(
        organisation="AMERICAN WATER WORKS COMPANY, INC.", period="FY2020", file_name="AMERICANWATERWORKS_2020_10K"
    ),
    "axp22": DocumentMeta(
        organisation="American Express Company", period="FY2022", file_name="AMERICANEXPRESS_2022_10K"
    ),
    "cvs18": DocumentMeta(organisation="CVS HEALTH CORPORATION", period="FY2018", file_name="CVSHEALTH_2018_10K"),
    "nhs": DocumentMeta(title="A guide to NHS services", period="2019", file_name="nhs-guide"),
}


@pytest.fixture(scope="module")
def router() -> DocumentRouter:
    return DocumentRouter.build(SHELF)


def named(router: DocumentRouter, question: str) -> dict[str, float]:
    route = router.route(question)
    assert route is not None, question
    return {d: float(m) for d, m in zip(route.doc_ids, route.match) if m > 0}


def explained(router: DocumentRouter, question: str, floor: float) -> list:
    """``Route.explain``: empty when the router abstains."""
    route = router.route(question)
    return [] if route is None else route.explain(floor)


def test_a_first_word_still_names_its_filings_when_their_titles_start_with_it():
    """The guesser titles a filing "CVS HEALTH CORPORATION Form 10-K FY2022": names of the same
    organisation starting alike do not make its first word ambiguous."""
    shelf = {
        doc: DocumentMeta(**{**meta.model_dump(), "title": f"{meta.organisation} Form 10-K {meta.period}".strip()})
        for doc, meta in SHELF.items()
        if doc != "nhs"
    }
    shelf["cvs22"] = DocumentMeta(
        organisation="CVS HEALTH CORPORATION",
        period="FY2022",
        title="CVS HEALTH CORPORATION Form 10-K FY2022",
        file_name="CVSHEALTH_2022_10K",
    )
    router = DocumentRouter.build(shelf)
    assert named(router, "Is CVS a capital-intensive business in FY2022?") == {"cvs22": 1.0, "cvs18": 1 / 3}


def test_the_router_says_what_named_each_document_and_the_weight_it_gives(router):
    routed = explained(router, "What is the FY2018 capital expenditure amount (in USD millions) for 3M?", 0.5)
    assert [(r.doc_id, r.weight, r.named_by) for r in routed] == [
        ("mmm18", 1.0, ["3M COMPANY", "period 2018"]),
        ("mmm22", 0.75, ["3M COMPANY"]),
    ]
    assert [(r.doc_id, r.named_by) for r in explained(router, "Is CVS a capital-intensive business?", 0.5)] == [
        ("cvs18", ["CVS"])
    ]
    assert explained(router, "How many card members did AMEX have?", 0.5)[0].named_by == ["AMEX"]
    assert explained(router, "Which company had the largest revenue?", 0.5) == []  # abstains
    assert explained(router, "What is the FY2018 capital expenditure for 3M?", 1.0) == []  # routing off


def test_a_named_company_and_year_pick_that_filing_first(router):
    assert named(router, "What is the FY2018 capital expenditure amount (in USD millions) for 3M?") == {
        "mmm18": 1.0,
        "mmm22": 0.5,
    }


def test_names_match_as_words_or_run_together_and_legal_words_do_not_count(router):
    assert named(router, "What was American Water Works' net income in 2020?") == {"awk20": 1.0}
    # the file name's run-together "AMERICANEXPRESS" and the organisation both name it
    assert named(router, "How many card members did AmericanExpress have?") == {"axp22": 1.0}
    # "company" alone names no one: it is a legal word in every organisation here
    assert router.route("Which company had the largest revenue?") is None


def test_a_first_word_no_other_document_starts_with_names_it_at_half_weight(router):
    assert named(router, "How much did CVS pay in dividends?") == {"cvs18": 1.0}
    # "American" starts two organisations: it names neither
    assert router.route("Which American firm grew fastest?") is None
    # only as a name is written: capitalised, not as the question's first word; never a title's first word
    assert router.route("Did the cvs stores grow?") is None
    titled = DocumentRouter.build(dict(SHELF, deck=DocumentMeta(title="What, Why and How of Certification")))
    assert titled.route("What is the average session duration?") is None


def test_the_period_picks_among_the_named_filings(router):
    # a year no period holds: the nearest period (FY2017 is printed in the FY2018 filing as comparatives;
    # a forecast for FY2023 is in the FY2022 filing)
    assert named(router, "What was 3M's FY2017 revenue?") == {"mmm18": 1.0, "mmm22": 2 / 3}
    assert named(router, "What does 3M forecast for FY2023?") == {"mmm18": 2 / 3, "mmm22": 1.0}
    # several years held: the latest, whose filing prints the earlier ones too
    assert named(router, "3M's average margin over FY2018 - FY2022") == {"mmm18": 0.75, "mmm22": 1.0}
    # no year: the latest filing, a little
    assert named(router, "Is 3M's business cyclical?") == {"mmm18": 0.8, "mmm22": 1.0}


def test_a_trading_symbol_names_its_company_as_written():
    shelf = dict(SHELF, jpm=DocumentMeta(organisation="JPMorgan Chase & Co.", ticker="JPM", period="Q1 2021"))
    router = DocumentRouter.build(shelf)
    assert named(router, "Which of JPM's segments had the lowest net revenue in 2021 Q1?") == {"jpm": 1.0}
    assert router.route("the jpm segments") is None  # a symbol counts in capitals only, as tickers are written


def test_a_trading_symbol_is_its_organisations_so_each_of_its_filings_has_it():
    """Covers list symbols only since 2019: the FY2018 filing of a company whose FY2022 cover
    prints "MMM" is still MMM's, and the year then picks it."""
    shelf = {d: m.model_copy(update={"ticker": "MMM"}) if d == "mmm22" else m for d, m in SHELF.items()}
    router = DocumentRouter.build(shelf)
    assert named(router, "What was MMM's operating income in FY2018?") == {"mmm18": 1.0, "mmm22": 0.5}
    assert router.tickers[router.doc_ids.index("awk20")] == set(), "another organisation's filings do not share it"


def test_the_first_words_of_a_name_no_other_name_starts_with_name_it_at_half_weight(router):
    """ "American" starts two organisations, "American Water" one."""
    assert named(router, "What was American Water's capex in FY2020?") == {"awk20": 1.0}
    assert named(router, "Did American Express grow?") == {"axp22": 1.0}
    assert router.route("Is American water scarce?") is None, "as names are written: each word capitalised"
    assert router.route("Which American firm grew fastest?") is None
    jpm = DocumentRouter.build(dict(SHELF, jpm=DocumentMeta(organisation="JPMorgan Chase & Co.", period="Q1 2021")))
    assert named(jpm, "What did J.P. Morgan earn in Q1 2021?") == {"jpm": 1.0}, "run together, each a capital"
    route = router.route("Compare American Water with CVS in FY2020")
    assert route is not None and route.explain(0.5)[0].named_by[0] == "American Water"


def test_an_abbreviation_of_every_word_of_an_organisation_names_it():
    shelf = {
        "ibm": DocumentMeta(organisation="International Business Machines Corporation", period="FY2021"),
        "fdx": DocumentMeta(organisation="Federal Express Corporation", period="FY2021"),
        "pg": DocumentMeta(organisation="The Procter & Gamble Company", period="FY2021"),
        "ge": DocumentMeta(organisation="General Electric Company", period="FY2021"),
        "gm": DocumentMeta(organisation="General Mills, Inc.", period="FY2021"),
    }
    router = DocumentRouter.build(shelf)
    assert named(router, "How much did IBM spend on research?") == {"ibm": 1.0}
    assert named(router, "What were FedEx's fuel costs?") == {"fdx": 1.0}
    assert named(router, "Which brands does P&G sell?") == {"pg": 1.0}
    assert named(router, "Compare GE and GM margins") == {"ge": 1.0, "gm": 1.0}
    for unnamed in ("What is the EBITDA margin?", "Is GAAP revenue higher?", "What did ibm spend?", "Was FY2021 good?"):
        assert router.route(unnamed) is None, "an abbreviation needs two capitals and every word of the name"


def test_names_written_with_an_ampersand_name_their_filings():
    shelf = {
        "att": DocumentMeta(organisation="AT&T INC.", period="FY2022", kind="10-K"),
        "pge": DocumentMeta(organisation="PG&E CORPORATION", period="FY2022", kind="10-K"),
        "jnj22": DocumentMeta(organisation="JOHNSON & JOHNSON", period="FY2022", kind="10-K"),
        "jnj21": DocumentMeta(organisation="JOHNSON & JOHNSON", period="FY2021", kind="10-K"),
        "mgm": DocumentMeta(organisation="MGM Resorts International", period="FY2020", kind="10-K"),
    }
    router = DocumentRouter.build(shelf)
    assert named(router, "What is AT&T's FY2022 free cash flow?") == {"att": 1.0}
    assert named(router, "How much did PG&E spend on capital in FY2022?") == {"pge": 1.0}
    assert named(router, "What was Johnson & Johnson's FY2022 revenue?") == {"jnj22": 1.0, "jnj21": 0.5}
    assert named(router, "What was J&J's FY2021 net income?") == {"jnj21": 1.0, "jnj22": 0.5}
    assert named(router, "How did MGM Resorts' revenue change in 2020?") == {"mgm": 1.0}


def test_a_question_in_capitals_names_documents_by_their_words_only():
    shelf = dict(SHELF, isep=DocumentMeta(organisation="ISEP student", file_name="ISEP_student_handbook_2020"))
    router = DocumentRouter.build(shelf)
    assert named(router, "Which courses must IS students take?") == {"isep": 1.0}  # an abbreviation, as written
    assert router.route("WHAT IS THE LAST YEAR IN THE TABLE?") is None  # shouted: "IS" is a word
    assert named(router, "WHAT DID 3M SPEND IN FY2018?") == {"mmm18": 1.0, "mmm22": 0.5}  # its name, as words


def test_the_router_abstains_when_nothing_is_named_or_one_document_is_there(router):
    assert router.route("What is the revenue growth between 2018 and 2019?") is None
    single = DocumentRouter.build({"mmm18": SHELF["mmm18"]})
    assert single.route("What is 3M's FY2018 revenue?") is None
    assert router.route("What is the revenue growth?") is None


def test_page_weights_keep_a_floor_for_documents_not_named(router):
    pages = PageDocuments.of(["mmm18", "mmm18", "mmm22", "awk20", "unknown", "mmm18"])
    assert pages.doc_ids == ["mmm18", "mmm22", "awk20", "unknown"] and pages.codes.tolist() == [0, 0, 1, 2, 3, 0]
    route = router.route("3M FY2018 capital expenditure")
    assert page_weights(route, 0.5, pages).tolist() == [1.0, 1.0, 0.75, 0.5, 0.5, 1.0]
    assert page_weights(route, 1.0, pages) is None  # floor 1: off
    assert page_weights(None, 0.5, pages) is None  # the router abstained


def test_question_years_read_fiscal_spellings():
    assert question_years("FY2018 and fiscal 2019, FY21, in 2020; not 12,2018.5") == {2018, 2019, 2021, 2020}
    assert question_years("JPM's 1Q23 results against Q2'22") == {2023, 2022}


def test_questions_name_quarters_and_kinds_as_people_write_them():
    assert question_quarters("net revenue in 2021 Q1") == {1}
    assert question_quarters("1Q23 and the second fiscal quarter of 2023") == {1, 2}
    assert question_quarters("Q10 of the form, the quarterly trend, FY2022") == set()
    assert question_kinds("What does the 10-Q say about liquidity?") == {"10-Q"}
    assert question_kinds("in its FY2022 10K") == {"10-K"}
    assert question_kinds("the annual report") == {"10-K", "20-F", "40-F", "annual report"}
    assert question_kinds("How many slides mention the budget?") == {"slides"}
    assert question_kinds("Which dataset does the paper use?") == {"paper"}
    for none in ("revenue above 10K units", "According to the report, who leads?", "paper products sales"):
        assert question_kinds(none) == frozenset(), none


SHELF_OF_KINDS = {
    "jpm21q1": DocumentMeta(organisation="JPMorgan Chase & Co.", period="Q1 2021", kind="10-Q", file_name="JPM_2021Q1"),
    "jpm22q2": DocumentMeta(organisation="JPMorgan Chase & Co.", period="Q2 2022", kind="10-Q", file_name="JPM_2022Q2"),
    "jpm22": DocumentMeta(organisation="JPMorgan Chase & Co.", period="FY2022", kind="10-K", file_name="JPM_2022_10K"),
    # a fiscal year ending in January: the cover dates the quarter by calendar, the file name by fiscal year
    "bby24q2": DocumentMeta(
        organisation="BEST BUY CO., INC.",
        period="Q3 2023",
        kind="10-Q",
        file_name="BESTBUY_2024Q2_10Q",
        sources={"period": "cover"},
    ),
    "bby24": DocumentMeta(
        organisation="BEST BUY CO., INC.", period="FY2024", kind="10-K", file_name="BESTBUY_2024_10K"
    ),
    "deck": DocumentMeta(title="Retail touchpoints", kind="slides"),
    "deck2": DocumentMeta(title="Caltrain ridership", kind="slides"),
    "paper": DocumentMeta(title="Weak-to-strong generalization", kind="paper"),
}


def test_the_grain_of_the_period_asked_picks_a_quarter_or_a_whole_year():
    router = DocumentRouter.build(SHELF_OF_KINDS)
    # named 1, the year 1, the grain 0.25: over the best match, 2.25
    assert named(router, "In 2022 Q2, which of JPM's segments had the highest net income?") == pytest.approx(
        {"jpm22q2": 1.0, "jpm22": 2 / 2.25, "jpm21q1": 1 / 2.25}
    )
    assert named(router, "What was JPM's FY2022 net revenue?") == pytest.approx(
        {"jpm22": 1.0, "jpm22q2": 2 / 2.25, "jpm21q1": 1 / 2.25}
    )
    routed = explained(router, "In 2022 Q2, which of JPM's segments had the highest net income?", 0.5)
    assert [(r.doc_id, r.named_by) for r in routed] == [
        ("jpm22q2", ["JPM", "period Q2 2022"]),
        ("jpm22", ["JPM", "period 2022"]),
        ("jpm21q1", ["JPM"]),
    ]


def test_the_date_of_an_8k_or_an_earnings_release_is_no_whole_year():
    amcor = "Amcor plc"
    router = DocumentRouter.build(
        {
            "10k": DocumentMeta(organisation=amcor, period="FY2023", kind="10-K", file_name="AMCOR_2023_10K"),
            "release": DocumentMeta(
                organisation=amcor, period="2023", kind="earnings release", file_name="AMCOR_2023Q4_EARNINGS"
            ),
            "8k": DocumentMeta(organisation=amcor, period="2023", kind="8-K", file_name="AMCOR_2023_8K"),
            "other": DocumentMeta(organisation="3M COMPANY", period="FY2023", kind="10-K"),
        }
    )
    assert named(router, "What were Amcor's FY2023 net sales?") == pytest.approx(
        {"10k": 1.0, "release": 2 / 2.25, "8k": 2 / 2.25}
    )
    assert named(router, "What was Amcor's adjusted EPS in Q4 2023?") == pytest.approx(
        {"release": 1.0, "10k": 2 / 2.25, "8k": 2 / 2.25}
    )


def test_a_period_is_read_from_the_cover_and_the_file_name_both():
    router = DocumentRouter.build(SHELF_OF_KINDS)
    # Best Buy's fiscal Q2 2024 ended in July 2023: the file name says so, the cover's date does not
    assert max(named(router, "Best Buy's Q2 FY2024 comparable sales?").items(), key=lambda kv: kv[1])[0] == "bby24q2"
    by_hand = SHELF_OF_KINDS["bby24q2"].model_copy(update={"sources": {"period": "user"}})
    hand_set = dict(SHELF_OF_KINDS, bby24q2=by_hand)
    ranked = named(DocumentRouter.build(hand_set), "Best Buy's Q2 FY2024 comparable sales?")
    assert ranked["bby24"] > ranked["bby24q2"], "a period the user set is the only reading"


def test_a_named_kind_picks_among_the_named_documents_or_names_its_documents_alone():
    router = DocumentRouter.build(SHELF_OF_KINDS)
    # named 1, the kind 0.5, no year asked: the latest period 0.25
    assert named(router, "What does JPM's 10-K say about credit losses?") == pytest.approx(
        {"jpm22": 1.0, "jpm22q2": 1.25 / 1.75, "jpm21q1": 1 / 1.75}
    )
    assert explained(router, "What does JPM's 10-K say about credit losses?", 0.5)[0].named_by == [
        "JPM",
        "kind 10-K",
        "period 2022",
    ]
    route = router.route("How many slides show a bar chart?")
    assert route is not None and not route.by_name
    assert {d for d, m in zip(route.doc_ids, route.match) if m > 0} == {"deck", "deck2"}
    assert [r.named_by for r in route.explain(0.5)] == [["kind slides"], ["kind slides"]]
    only_decks = DocumentRouter.build({d: SHELF_OF_KINDS[d] for d in ("deck", "deck2")})
    assert only_decks.route("How many slides show a bar chart?") is None  # every document is of the kind
    assert router.route("What is the gold medal count?") is None


# ---------------------------------------------------------------- real filings, both methods (conftest)
QUESTION = (
    "What is the FY2022 capital expenditure amount (in USD millions) for 3M? Give a response to the "
    "question by relying on the details shown in the cash flow statement."
)


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_library_question_reads_the_statement_of_the_company_and_year_it_names(filings_library: Path, method: str):
    from docgraph import Workspace

    with Workspace(filings_library) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        labels = ws.metadata()
        assert {files[d]: (m.organisation, m.period) for d, m in labels.items()} == {
            "3M_2018_10K.pdf": ("3M COMPANY", "FY2018"),
            "3M_2022_10K.pdf": ("3M COMPANY", "FY2022"),
            "BOEING_2018_10K.pdf": ("THE BOEING COMPANY", "FY2018"),
        }
        routed = {(files[p.doc_id], p.page): p.score for p in ws.retrieve(QUESTION, method=method).pages}
    assert next(iter(routed)) == ("3M_2022_10K.pdf", 2)
    # the other statements still rank (routing is soft), after the named filing's
    assert {("3M_2018_10K.pdf", 2), ("BOEING_2018_10K.pdf", 2)} <= set(routed)
    with Workspace(filings_library, overrides={"retrieval": {"route_floor": 1.0}}) as ws:
        unrouted = {(files[p.doc_id], p.page): p.score for p in ws.retrieve(QUESTION, method=method).pages}
    # the pages alone: both 3M statements read alike, the named one no better than the other
    assert set(list(unrouted)[:2]) == {("3M_2018_10K.pdf", 2), ("3M_2022_10K.pdf", 2)}
    assert unrouted[("3M_2022_10K.pdf", 2)] - unrouted[("3M_2018_10K.pdf", 2)] < 0.05
    assert routed[("3M_2022_10K.pdf", 2)] - routed[("3M_2018_10K.pdf", 2)] > 0.25


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_statement_the_question_names_is_the_named_companys(filings_library: Path, method: str):
    """ "The cash flow statement" in a question that names 3M is 3M's: Boeing's statement,
    which the lexicon reads as the same reference, takes no reference rank and falls below
    every page of the named company's filings (it stays ranked: routing is soft)."""
    from docgraph import Workspace

    with Workspace(filings_library) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        order = [(files[p.doc_id], p.page) for p in ws.retrieve(QUESTION, method=method).pages]
    boeing = order.index(("BOEING_2018_10K.pdf", 2))
    assert all(order.index((name, page)) < boeing for name in ("3M_2018_10K.pdf", "3M_2022_10K.pdf") for page in (1, 2))


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_search_and_ask_say_which_documents_the_question_named(filings_library: Path, method: str):
    from docgraph import Workspace
    from docgraph.cli.ask import format_answer
    from docgraph.cli.search import format_search
    from docgraph.results import ask_result

    with Workspace(filings_library) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        found = ws.search(QUESTION, method)
        answer = ws.ask(QUESTION, method)
        chosen = ws.search(QUESTION, method, documents=["3M_2018_10K.pdf"])
    routed = [(files[r.document_id], r.weight, r.named_by) for r in found.routed]
    assert routed == [
        ("3M_2022_10K.pdf", 1.0, ["3M COMPANY", "period 2022"]),
        ("3M_2018_10K.pdf", 0.75, ["3M COMPANY"]),
    ]
    assert found.routed[0].document_title == "3M COMPANY Form 10-K FY2022"
    assert "  1.00  3M COMPANY Form 10-K FY2022 \u2014 3M COMPANY, period 2022" in format_search(found).splitlines()
    assert ask_result(answer).routed == found.routed
    assert "  0.75  3M COMPANY Form 10-K FY2018 \u2014 3M COMPANY" in format_answer(answer).splitlines()
    assert chosen.routed == []  # documents chosen by hand: nothing was routed


def test_the_router_is_rebuilt_when_a_label_is_written_or_a_document_leaves(filings_library: Path, tmp_path: Path):
    """A query reads the labels' version stamp and the document list, not every label: the
    cached router is reused until ``docgraph meta`` writes a label or a document is removed."""
    import shutil

    from docgraph import Workspace
    from docgraph.methods.retrieval.routing import document_router

    shutil.copytree(filings_library, tmp_path / "ws")
    question = "What did Aerospace Holdings spend on capital expenditure in FY2018?"
    with Workspace(tmp_path / "ws") as ws:
        boeing = next(d.id for d in ws.documents() if "BOEING" in Path(d.path).name)
        first = document_router(ws.store)
        assert document_router(ws.store) is first
        assert first.route(question) is None or boeing not in named(first, question)
        ws.set_metadata(boeing, organisation="Aerospace Holdings")
        edited = document_router(ws.store)
        assert edited is not first and named(edited, question) == {boeing: 1.0}
        assert document_router(ws.store) is edited
        ws.remove(boeing)
        assert boeing not in document_router(ws.store).doc_ids


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_chosen_documents_are_the_only_ones_ranked(filings_library: Path, method: str):
    """``documents=`` restricts retrieval itself (``methods.retrieval.scope``): the page budget
    fills from the chosen filing although the question names another, and search, ask and
    the CLI's ``--doc`` all go through it."""
    from docgraph import Workspace
    from docgraph.cli import main

    with Workspace(filings_library) as ws:
        boeing = next(d.id for d in ws.documents() if Path(d.path).name == "BOEING_2018_10K.pdf")
        evidence = ws.retrieve(QUESTION, method=method, documents=[boeing], top_pages=2)
        assert [(p.doc_id, p.page) for p in evidence.pages] == [(boeing, 2), (boeing, 1)]
        assert all(m.doc_id == boeing for e in evidence.entities for m in e.entity.mentions)
        assert all(m.doc_id == boeing for r in evidence.relations for m in r.relation.mentions)
        assert "restricted to 1 document(s)" in evidence.notes
        found = ws.search(QUESTION, method=method, top_pages=2, documents=["BOEING_2018_10K.pdf"])
        assert [(p.document_id, p.page) for p in found.pages] == [(boeing, 2), (boeing, 1)]
        answer = ws.ask(QUESTION, method=method, documents=["BOEING_2018_10K.pdf"])
        assert answer.citations and {c.doc_id for c in answer.citations} == {boeing}
        unscoped = ws.retrieve(QUESTION, method=method, top_pages=2)
        assert unscoped.pages[0].doc_id != boeing  # the question names 3M's FY2022 filing
    assert (
        main(["ask", QUESTION, "-m", method, "--doc", "BOEING_2018_10K.pdf", "--json", "-w", str(filings_library)]) == 0
    )


def test_a_method_that_ranks_the_whole_workspace_refuses_chosen_documents(filings_library: Path, capsys):
    from docgraph import Workspace
    from docgraph.errors import InputError

    with Workspace(filings_library) as ws:
        with pytest.raises(InputError, match="bm25 ranks the whole workspace"):
            ws.ask(QUESTION, method="bm25", documents=["BOEING_2018_10K.pdf"])
        with pytest.raises(InputError, match="documents must be a list of document ids"):
            ws.retrieve(QUESTION, method="kg4vd", documents="BOEING_2018_10K.pdf")


def test_the_routing_check_sorts_a_sets_questions_by_what_the_router_made_of_them(
    filings_library: Path, library_benchmark
):
    asked = [
        ("What is the FY2022 capital expenditure for 3M?", ["3M_2022_10K.pdf"]),
        ("What was Boeing's revenue in 2018?", ["BOEING_2018_10K"]),  # FinanceBench writes no extension
        ("What was 3M's FY2018 revenue?", ["3M_2022_10K.pdf"]),  # the router puts the FY2018 filing first
        ("Which company spent the most?", ["BOEING_2018_10K.pdf"]),
        ("Did 3M spend more than Boeing in FY2018?", ["3M_2018_10K.pdf"]),  # two parties
    ]
    out = library_benchmark("routing_check.py", filings_library, [(q, {"gold_documents": g}) for q, g in asked])
    rows = dict(line.strip("|").split("|")[:2] for line in out.splitlines() if line.startswith("| named"))
    assert {row.strip(): int(n) for row, n in rows.items()} == {
        "named, gold alone on top": 2,
        "named, gold tied on top": 1,  # the two companies compared weigh alike
        "named, wrong": 1,
    }
    assert "| abstains | 1 |" in out
    assert "1 question(s) name several parties, 1 of them comparing them" in out
    assert "q2 [named, wrong] top ['3M_2018_10K']" in out


def test_kept_entities_and_relations_are_weighed_by_where_they_are_grounded(filings_library: Path):
    """KG4VD keeps entities and relations for the answer as it keeps pages: weighed by the
    routing weights of the pages they are grounded on, so Boeing's statement, which matches a
    cash flow question as well as 3M's, falls behind the named filings' entities."""
    from docgraph import Workspace

    def kept(overrides: dict) -> tuple[list[set[str]], list[set[str]]]:
        with Workspace(filings_library, overrides=overrides) as ws:
            files = {d.id: Path(d.path).name for d in ws.documents()}
            evidence = ws.retrieve(QUESTION, method="kg4vd")
        entities = [{files[m.doc_id] for m in e.entity.mentions} for e in evidence.entities]
        relations = [{files[m.doc_id] for m in r.relation.mentions} for r in evidence.relations]
        return entities, relations

    routed, routed_relations = kept({})
    unrouted, _ = kept({"retrieval": {"route_floor": 1.0}})
    boeing_only = [{"BOEING_2018_10K.pdf"}]
    first_boeing = [i for i, docs in enumerate(routed) if docs in boeing_only]
    first_boeing_unrouted = [i for i, docs in enumerate(unrouted) if docs in boeing_only]
    assert first_boeing_unrouted and first_boeing_unrouted[0] < 5, "unrouted, Boeing's statement is among the first"
    assert not first_boeing or first_boeing[0] > first_boeing_unrouted[0] + 5
    assert routed[0] == {"3M_2022_10K.pdf"} and routed_relations[0] == {"3M_2022_10K.pdf"}

    def named_share(lists: list[set[str]]) -> float:
        return sum(bool(docs & {"3M_2018_10K.pdf", "3M_2022_10K.pdf"}) for docs in lists) / len(lists)

    assert named_share(routed) > named_share(unrouted)
