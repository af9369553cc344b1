"""Questions that compare companies (``routing.Route.parties``, ``turns``): every party named
weighs in full, and each party's pages take turns in the first slots."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.documents.metadata import DocumentMeta
from docgraph.methods.retrieval.routing import DocumentRouter
from docgraph.methods.retrieval.turns import take_turns

SHELF = {
    "mmm18": DocumentMeta(organisation="3M COMPANY", period="FY2018", kind="10-K", file_name="3M_2018_10K"),
    "mmm22": DocumentMeta(organisation="3M COMPANY", period="FY2022", kind="10-K", file_name="3M_2022_10K"),
    "axp22": DocumentMeta(
        organisation="American Express Company", period="FY2022", file_name="AMERICANEXPRESS_2022_10K"
    ),
    "cvs18": DocumentMeta(organisation="CVS HEALTH CORPORATION", period="FY2018", file_name="CVSHEALTH_2018_10K"),
    "ko17": DocumentMeta(organisation="COCACOLA", period="FY2017", file_name="COCACOLA_2017_10K"),
}


def weights(question: str, shelf: dict[str, DocumentMeta] = SHELF) -> tuple[dict[str, float], list[list[str]]]:
    route = DocumentRouter.build(shelf).route(question)
    assert route is not None, question
    return {d: float(m) for d, m in zip(route.doc_ids, route.match) if m > 0}, route.parties


def test_each_company_a_question_names_is_a_party_of_its_own_filings():
    found, parties = weights("Did 3M grow faster than American Express in FY2022?")
    assert parties == [["mmm22", "mmm18"], ["axp22"]]  # in the question's order, each party's best first
    assert found == {"mmm22": 1.0, "mmm18": 0.5, "axp22": 1.0}
    explained = DocumentRouter.build(SHELF).route("Did 3M grow faster than American Express in FY2022?").explain(0.5)
    assert [(r.doc_id, r.party) for r in explained] == [("axp22", 1), ("mmm22", 0), ("mmm18", 0)]
    found, parties = weights("What was 3M's revenue in FY2018?")
    assert parties == [["mmm18", "mmm22"]] and found == {"mmm18": 1.0, "mmm22": 0.5}  # one party: no comparison
    assert not DocumentRouter.build(SHELF).route("What was 3M's revenue in FY2018?").comparing


@pytest.mark.parametrize(
    "question",
    [
        "Which had higher net income in FY2022, CVS Health or American Express?",  # joined by "or"
        "3M and American Express: FY2022 revenue",  # joined by "and"
        "3M, American Express: who paid more dividends in FY2022?",  # a comma, and "more" reads no cue
        "Compare the FY2022 capex of 3M with American Express's",
        "How does 3M's FY2022 leverage differ from American Express's?",
        "What was the revenue of 3M in FY2022 versus American Express?",
    ],
)
def test_a_question_that_asks_about_companies_together_compares_them(question: str):
    route = DocumentRouter.build(SHELF).route(question)
    assert route is not None and route.comparing, question
    assert {r.party for r in route.explain(0.5)} == {0, 1}


def test_a_company_named_in_passing_is_routed_to_but_compared_with_nothing():
    question = "What did 3M's FY2022 filing say about the litigation brought by American Express's card unit?"
    route = DocumentRouter.build(SHELF).route(question)
    assert route is not None and len(route.parties) == 2 and not route.comparing
    assert {"mmm22", "axp22"} <= {d for d, m in zip(route.doc_ids, route.match) if m == 1.0}  # both named, in full
    assert all(r.party is None for r in route.explain(0.5))  # no parties shown, no turns taken


def test_each_party_reads_the_years_the_question_names_against_its_own_filings():
    # the question's latest year is 2022, but CVS Health's own filing of a year named is FY2018's
    found, parties = weights("Which had higher net income, CVS Health in 2018 or American Express in 2022?")
    assert found == {"cvs18": 1.0, "axp22": 1.0} and len(parties) == 2
    # the same words naming two filings of one company are one party: its years as before
    assert weights("How did 3M's margin change from FY2018 to FY2022?")[0] == {"mmm22": 1.0, "mmm18": 0.75}


def test_naming_every_document_still_routes_by_party_and_period():
    shelf = {d: SHELF[d] for d in ("mmm18", "mmm22", "axp22")}
    found, parties = weights("Compare the FY2018 capex of 3M with American Express's", shelf)
    assert len(parties) == 2 and found["mmm18"] == 1.0 and found["axp22"] == 1.0 and found["mmm22"] < 1.0
    only_3m = DocumentRouter.build({d: SHELF[d] for d in ("mmm18", "mmm22")})
    assert weights("3M FY2018 revenue", {d: SHELF[d] for d in ("mmm18", "mmm22")})[0] == {"mmm18": 1.0, "mmm22": 0.5}
    # every document named alike: the period tells them apart
    assert only_3m.route("What are 3M's segments") is not None  # the latest filing, a little
    same = DocumentRouter.build({"a": SHELF["mmm18"], "b": SHELF["mmm18"]})
    assert same.route("3M FY2018 revenue") is None  # named alike and nothing tells them apart


def test_parties_take_turns_in_the_first_slots_then_the_list_fills_the_rest():
    a1, a2, a3, b1, b2, c1 = ("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("c", 1)
    ranked = [(a1, 0.9), (a2, 0.8), (a3, 0.7), (c1, 0.6), (b1, 0.5)]
    turns = take_turns(ranked, [[(a1, 0.9), (a2, 0.8), (a3, 0.7)], [(b1, 0.5), (b2, 0.2)]], 5)
    assert [p for p, _ in turns] == [a1, b1, a2, b2, a3]
    assert [s for _, s in turns] == [0.9, 0.5, 0.5, 0.2, 0.2]  # never increasing down the list
    assert [p for p, _ in take_turns(ranked, [[(a1, 0.9)], [(b1, 0.5)]], 4)] == [a1, b1, a2, a3]
    assert take_turns(ranked, [[(a1, 0.9)], []], 3) == ranked[:3]  # one party with pages: the list as it was


# ---------------------------------------------------------------- real filings, both methods
@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_question_comparing_companies_reads_each_ones_statement_first(filings_library: Path, method: str):
    """Two companies named (``Route.parties``): each one's cash flow statement takes one of the
    first two slots (``turns``), although 3M's two statements read alike and outscore Boeing's."""
    from docgraph import Workspace
    from docgraph.cli.search import format_search

    question = "Compare the FY2018 purchases of property, plant and equipment (PP&E) of 3M and Boeing."
    with Workspace(filings_library) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        found = ws.search(question, method, top_pages=3)
    with Workspace(filings_library, overrides={"retrieval": {"route_floor": 1.0}}) as ws:
        unrouted = ws.search(question, method, top_pages=3)  # routing off: no parties, no turns
    first = [(files[p.document_id], p.page) for p in found.pages]
    assert set(first[:2]) == {("3M_2018_10K.pdf", 2), ("BOEING_2018_10K.pdf", 2)}
    assert [(files[r.document_id], r.weight) for r in found.routed][:2] in (
        [("3M_2018_10K.pdf", 1.0), ("BOEING_2018_10K.pdf", 1.0)],
        [("BOEING_2018_10K.pdf", 1.0), ("3M_2018_10K.pdf", 1.0)],
    )
    assert [(files[p.document_id], p.page) for p in unrouted.pages][:2] != first[:2], "the scores alone"
    shown = format_search(found).splitlines()
    assert shown[0].endswith("; it compares 2, whose pages take turns:")
    assert any(line.startswith("  1.00  [2] THE BOEING COMPANY") for line in shown), shown[:4]


def test_the_comparisons_benchmark_adds_a_second_company_and_counts_its_pages(filings_library: Path, library_benchmark):
    asked = [
        ("What is the FY2018 purchase of property, plant and equipment of 3M?", ["3M_2018_10K|2"]),
        ("What were Boeing's FY2018 property, plant and equipment additions?", ["BOEING_2018_10K|2"]),
        ("Which company spent the most?", ["BOEING_2018_10K|2"]),  # names no company: not asked
    ]
    out = library_benchmark("comparisons.py", filings_library, [(q, {"gold": g}) for q, g in asked], "-k", "2")
    assert "2 of 3 questions name one company" in out
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:2]): line for line in out.splitlines()}
    ways = ("routing off", "routing, no turns", "routing with turns")
    assert set(rows) >= {(method, way) for method in ("kg4vd", "hvm") for way in ways}
    for method in ("kg4vd", "hvm"):  # with turns, each question's top 2 holds its own statement and the other's
        assert rows[(method, "routing with turns")].split("|")[3:6] == [" 100.0 ", " 100.0 ", " 100.0 "]


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_an_offline_answer_to_a_comparison_quotes_both_companies(filings_library: Path, method: str):
    from docgraph import Workspace
    from docgraph.results import ask_result

    question = "Compare the FY2018 purchases of property, plant and equipment (PP&E) of 3M and Boeing."
    with Workspace(filings_library) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        answer = ws.ask(question, method)
    cited = {files[c.doc_id] for c in answer.citations}
    assert {"3M_2018_10K.pdf", "BOEING_2018_10K.pdf"} <= cited
    routed = {files[r.document_id]: r.party for r in ask_result(answer).routed}
    assert routed["BOEING_2018_10K.pdf"] is not None and routed["3M_2018_10K.pdf"] is not None
    assert routed["BOEING_2018_10K.pdf"] != routed["3M_2018_10K.pdf"] == routed["3M_2022_10K.pdf"]
