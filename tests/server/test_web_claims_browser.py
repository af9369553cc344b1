"""In Chromium (issue 57): the answer marks the sentence whose number its citation does not
hold, and its title says what is missing; document text that looks like HTML — a title
``<b onmouseover=…>``, page text with ``<img onerror>`` and ``<script>`` — shows as text
and runs nothing, in the answer, the citations and the evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from live_server import serving
from test_web_browser import _missing, signed_in_page

from docgraph import Workspace
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub

pytestmark = pytest.mark.browser

if _missing():
    pytest.skip(_missing(), allow_module_level=True)

TOKEN = "claims-token"
TITLE = '<b onmouseover="window.__pwned = 1">Acme</b> annual report'
PAGE_TEXT = [
    "Net sales were $1,076 million in 2022. The operating margin was 12.5%.",
    'Markup in the text: <img src=x onerror="window.__pwned = 2"> and <script>window.__pwned = 3</script>.',
]
QUESTION = "What were the net sales in 2022?"


def hostile_pdf(path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 72, 523, 120), "Acme annual report", fontsize=18, fontname="helv")
    for n, text in enumerate(PAGE_TEXT):
        page.insert_textbox(pymupdf.Rect(72, 220 + 150 * n, 523, 340 + 150 * n), text, fontsize=11, fontname="helv")
    doc.set_metadata({"title": TITLE})
    doc.save(path)
    return path


def scripted_answer(request) -> str:
    number = re.search(r"^\[(\d+)\] \(", request.prompt, re.M).group(1)
    return (
        f"Net sales were $1,076 million in 2022 [{number}]. The operating margin was 21.5% [{number}]. "
        f'The page also shows <img src=x onerror="window.__pwned = 2"> [{number}].'
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app over a workspace holding the hostile PDF (bm25 built), answering with the stub."""
    from docgraph.server import create_app

    root = tmp_path_factory.mktemp("claims-browser")
    with OpenAIStub() as stub:
        stub.reply(scripted_answer, stage="bm25.answer")
        ws = Workspace(root / "ws", settings=stub_settings(stub, roles=("answer",)))
        ws.add(hostile_pdf(root / "acme.pdf"))
        ws.build("bm25")
        app = create_app(ws, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost"])
        with serving(app) as url:
            yield url
        ws.close()


def test_an_unsupported_sentence_is_marked_and_markup_stays_text(served):
    with signed_in_page(served, TOKEN) as (page, errors):
        page.click("#tab-ask")
        page.fill("#ask-question", QUESTION)
        page.select_option("#ask-method", "bm25")
        page.click("#ask-submit")
        page.locator("[data-test=claim]").first.wait_for()

        claims = page.locator("[data-test=claim]")
        statuses = [claims.nth(i).get_attribute("data-status") for i in range(claims.count())]
        assert statuses == ["supported", "unsupported", "supported"], statuses
        bad = page.locator("[data-test=claim][data-status=unsupported]")
        assert "21.5%" in bad.inner_text()
        assert "not in the cited evidence: 21.5%" in bad.get_attribute("title")
        assert "text-decoration" not in (bad.get_attribute("style") or "")
        assert "wavy" in bad.evaluate("el => getComputedStyle(el).textDecorationStyle")
        assert "1 unsupported" in page.locator("[data-test=claim-summary]").inner_text()
        # the inline citation buttons still work inside a marked sentence
        assert bad.locator("[data-test=citation-inline]").count() == 1

        # markup from the document (title, page text, a quote of it in the answer) is text
        answer_text = page.locator("#answer-text").inner_text()
        assert '<img src=x onerror="window.__pwned = 2">' in answer_text
        citations = page.locator("#citations").inner_text()
        assert "<b onmouseover=" in citations
        assert "<script>window.__pwned = 3</script>" in page.locator("#evidence-chunks").text_content()
        page.hover("[data-test=citation]")
        assert (
            page.evaluate(
                "document.querySelectorAll('#answer img, #answer b, #answer script, "
                "#evidence img[onerror], #evidence script').length"
            )
            == 0
        )
        assert page.evaluate("window.__pwned") is None
        assert errors == []
