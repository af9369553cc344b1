"""In Chromium: over a library, the answer says which documents the question named — the
filing of the company and year it names first — with each one's weight and what named it in
the note's title; a question that names no document shows no such note. The user finds
documents by their labels (a filter over the list) and answers from the ones they choose."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_server import serving
from test_web_browser import _missing, signed_in_page

from docgraph import Workspace

pytestmark = pytest.mark.browser

if _missing():
    pytest.skip(_missing(), allow_module_level=True)

TOKEN = "routing-token"
FILINGS = {  # file name → (company, year, net sales)
    "ACME_2021_10K.pdf": ("ACME CORPORATION", 2021, "1,076"),
    "ACME_2022_10K.pdf": ("ACME CORPORATION", 2022, "1,254"),
    "GLOBEX_2022_10K.pdf": ("GLOBEX INC.", 2022, "3,310"),
}


def filing_pdf(path: Path, company: str, year: int, sales: str) -> Path:
    import pymupdf

    doc = pymupdf.open()
    cover = doc.new_page(width=612, height=792)
    cover.insert_textbox(pymupdf.Rect(72, 72, 540, 200), "UNITED STATES\nFORM 10-K", fontsize=16, fontname="helv")
    lines = (
        (220, f"For the fiscal year ended December 31, {year}", 11),
        (300, company, 14),
        (330, "(Exact name of registrant as specified in its charter)", 9),
    )
    for top, text, size in lines:
        cover.insert_textbox(pymupdf.Rect(72, top, 540, top + 2 * size), text, fontsize=size, fontname="helv")
    body = doc.new_page(width=612, height=792)
    body.insert_textbox(
        pymupdf.Rect(72, 72, 540, 300),
        f"Consolidated Statement of Income\nNet sales were ${sales} million in {year}.",
        fontsize=11,
        fontname="helv",
    )
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app over a library of three small filings, kg4vd built offline."""
    from docgraph.server import create_app

    root = tmp_path_factory.mktemp("routing-browser")
    ws = Workspace(root / "ws")
    ws.add([filing_pdf(root / name, *fields) for name, fields in FILINGS.items()])
    ws.build("kg4vd")
    app = create_app(ws, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost"])
    with serving(app) as url:
        yield url
    ws.close()


def ask(page, question: str) -> None:
    page.fill("#ask-question", question)
    page.select_option("#ask-method", "kg4vd")
    page.click("#ask-submit")
    page.locator("#answer-meta span").first.wait_for()


def test_the_answer_names_the_documents_the_question_named(served):
    with signed_in_page(served, TOKEN) as (page, errors):
        page.click("#tab-ask")

        ask(page, "What were Acme's net sales in FY2022?")
        note = page.locator("[data-test=answer-routed]")
        note.wait_for()
        assert "2022" in note.inner_text() and "(+1)" in note.inner_text()  # the FY2021 filing too, after it
        lines = note.get_attribute("title").splitlines()
        assert len(lines) == 2
        assert lines[0].endswith("weight 1.00, named by ACME CORPORATION, period 2022"), lines
        assert lines[1].endswith("weight 0.75, named by ACME CORPORATION"), lines

        page.locator("#answer-meta").evaluate("el => el.replaceChildren()")
        ask(page, "Compare the net sales of Acme and Globex in FY2022.")
        note = page.locator("[data-test=answer-routed]")
        note.wait_for()
        assert note.inner_text() == "compares: ACME CORPORATION Form 10-K FY2022 \u00b7 GLOBEX INC. Form 10-K FY2022"

        page.locator("#answer-meta").evaluate("el => el.replaceChildren()")
        ask(page, "Which statement shows the net sales?")
        assert page.locator("[data-test=answer-routed]").count() == 0
        assert errors == []


def test_the_document_list_filters_by_label_words(served):
    with signed_in_page(served, TOKEN) as (page, errors):
        rows = page.locator("[data-test=document-row]")
        rows.first.wait_for()
        page.fill("#documents-filter", "acme 2021")
        assert page.locator("[data-test=document-row]:visible").count() == 1
        assert "ACME CORPORATION" in page.locator("[data-test=document-row]:visible").inner_text()
        assert page.locator("#documents-shown").inner_text() == "1 of 3 shown"
        page.fill("#documents-filter", "10-k")  # the kind the covers give
        assert page.locator("[data-test=document-row]:visible").count() == 3
        page.fill("#documents-filter", "")
        assert rows.count() == 3 and page.locator("#documents-shown").inner_text() == ""
        assert errors == []


def test_an_answer_comes_from_the_documents_the_user_chose(served):
    with signed_in_page(served, TOKEN) as (page, errors):
        files = {d["file"]: d["id"] for d in page.request.get("/api/documents").json()["documents"]}
        page.click("#tab-ask")
        page.select_option("#ask-method", "kg4vd")
        page.click("#ask-docs-summary")
        page.locator(".doc-choice").nth(2).wait_for()  # drawn as the chooser opens
        titles = page.locator(".doc-choice > span:first-of-type").all_inner_texts()
        assert [t.replace(" Form 10-K", "") for t in titles] == [  # by title
            "ACME CORPORATION FY2021",
            "ACME CORPORATION FY2022",
            "GLOBEX INC. FY2022",
        ]
        page.fill("#ask-docs-filter", "globex")
        assert page.locator("[data-test=ask-doc-choice]:visible").count() == 1
        page.locator("[data-test=ask-doc-choice]:visible").check()
        assert page.locator("#ask-docs-summary").inner_text().startswith("Answer from GLOBEX")
        page.fill("#ask-question", "What were the net sales?")
        page.click("#ask-submit")
        page.locator("#answer-meta span").first.wait_for()
        cited = {c.get_attribute("data-doc-id") for c in page.locator("[data-test=citation]").all()}
        assert cited == {files["GLOBEX_2022_10K.pdf"]}
        assert page.locator("[data-test=answer-routed]").count() == 0  # chosen, not named
        # a method that ranks the whole workspace offers no chooser
        page.select_option("#ask-method", "bm25")
        assert page.locator("#ask-docs").is_hidden()
        page.select_option("#ask-method", "kg4vd")
        page.click("#ask-docs-clear")
        assert page.locator("#ask-docs-summary").inner_text() == "Answer from all documents"
        assert errors == []
