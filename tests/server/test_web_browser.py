"""End to end in a real browser: Debian's chromium driven by Playwright (no browser download).

Starts the server on 127.0.0.1 (a free port, with a token) over a fresh workspace, then, as
a person would: signs in with the token link, uploads a shared document, builds it offline
(KG4VD when it is registered, else BM25; ``DOCGRAPH_BROWSER_METHOD`` overrides), reloads
during the build and finds its progress again, asks a question, clicks a citation and finds
the cited region outlined on the page image at the citation's box scaled to the rendered
image, toggles the Set-of-Marks overlay, and (KG4VD) goes from the evidence graph to a page.
Screenshots are kept under ``test-artifacts/browser/``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from live_server import serving

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
TOKEN = "browser-token"
QUESTION = "Which university is OpenStax affiliated with?"
BUILD_TIMEOUT_S = 1500


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[browser]'; never `playwright install`)"
    return None


if _missing():
    pytest.skip(_missing(), allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app under uvicorn on 127.0.0.1 in a thread, over a new workspace."""
    from docgraph.server import create_app

    root = tmp_path_factory.mktemp("browser") / "ws"
    with serving(create_app(root, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@contextmanager
def signed_in_page(url: str, token: str) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page signed in to the app at ``url`` with ``token`` and ready, and the list
    that collects the script errors and dialogs it meets (a test ends expecting it empty)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(base_url=url, viewport={"width": 1280, "height": 900}).new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
            page.goto(f"/?token={token}")
            page.wait_for_selector("body[data-ready='1']")
            yield page, errors
        finally:
            browser.close()


def shot(page, name: str, full: bool = False) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full)


def choose_method(page) -> str:
    wanted = os.environ.get("DOCGRAPH_BROWSER_METHOD")
    names = [m["name"] for m in page.request.get("/api/methods").json()]
    if wanted:
        assert wanted in names, f"DOCGRAPH_BROWSER_METHOD={wanted} is not registered ({names})"
        return wanted
    return "kg4vd" if "kg4vd" in names else "bm25"


def test_upload_build_ask_and_see_the_cited_region(server, browser, shared_data, tmp_path):
    pdf = tmp_path / "world_history_p10-15.pdf"
    shutil.copy(shared_data / "kg4vd_test" / "world_history_p10-15.pdf", pdf)
    context = browser.new_context(base_url=server, viewport={"width": 1440, "height": 960})
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # without the token: the sign-in form; the token link stores it and cleans the URL
    assert page.goto("/").status == 401 and page.locator("#login-form").is_visible()
    page.goto(f"/?token={TOKEN}")
    assert page.url == f"{server}/#workspace" or page.url.rstrip("/") == server
    page.wait_for_selector("body[data-ready='1']")
    shot(page, "01-empty-workspace")

    # upload the shared document
    page.set_input_files("#upload-input", str(pdf))
    page.click("#upload-button")
    row = page.locator("[data-test=document-row]")
    row.wait_for(timeout=180_000)
    assert row.locator("[data-test=document-pages]").inner_text() == "5"
    page.wait_for_function(
        "() => document.querySelector('[data-test=document-status]').innerText === 'ready'", timeout=180_000
    )
    doc_id = row.get_attribute("data-doc-id")
    shot(page, "02-uploaded")

    # the document's label, corrected through the API, shows under its title (once the upload
    # job has let go of the workspace: the row reads "ready" a moment before it does)
    deadline = time.monotonic() + 60
    while any(
        j["kind"] == "ingest" and j["state"] not in ("done", "failed") for j in page.request.get("/api/jobs").json()
    ):
        assert time.monotonic() < deadline, "the upload job did not finish"
        time.sleep(0.1)
    changed = page.request.patch(
        f"/api/documents/{doc_id}/metadata",
        data={"organisation": "OpenStax", "period": "2022"},
        headers={"Origin": server},
    )
    assert changed.ok, changed.text()
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert row.locator("[data-test=document-label]").inner_text() == "OpenStax · 2022"

    # build offline; a reload during the build finds the job again
    method = choose_method(page)
    method_row = page.locator(f"[data-test=method-row][data-method={method}]")
    method_row.locator("[data-test=method-build]").click()
    method_row.locator("[data-test=job]").wait_for()
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    job = method_row.locator("[data-test=job]")
    job.wait_for()
    assert job.get_attribute("data-state") in ("queued", "running", "done")
    if job.get_attribute("data-state") != "done":
        shot(page, "03-building")
    page.wait_for_selector(
        f"[data-test=method-row][data-method={method}] [data-test=job][data-state=done]", timeout=BUILD_TIMEOUT_S * 1000
    )
    assert method_row.locator("[data-test=method-built]").inner_text() == "5/5 pages built"
    shot(page, "04-built")

    # ask
    page.click("#tab-ask")
    page.fill("#ask-question", QUESTION)
    page.select_option("#ask-method", method)
    if method == "kg4vd":
        assert page.locator("#ask-mode").is_visible()
        page.select_option("#ask-mode", "auto")
    page.click("#ask-submit")
    first = page.locator("[data-test=citation]").first
    first.wait_for(timeout=180_000)
    answer = page.evaluate("JSON.parse(sessionStorage.getItem('docgraph.answer'))")
    assert answer["method"] == method and answer["citations"], answer
    assert "Rice University" in page.locator("#answer-text").inner_text()

    # click the citation: the page opens with the cited region outlined where the bbox says
    citation = next(c for c in answer["citations"] if "Rice University" in c["quote"])
    page.locator(f"[data-test=citation][data-number='{citation['number']}']").click()
    image = page.locator("#page-image")
    page.wait_for_function(
        "() => { const i = document.getElementById('page-image'); return i.complete && i.naturalWidth > 0; }"
    )
    box = page.locator(f"[data-test=highlight-box][data-citation='{citation['number']}']").first
    box.wait_for()
    stage = page.locator("#page-stage")
    assert stage.get_attribute("data-doc-id") == citation["doc_id"] == doc_id
    assert stage.get_attribute("data-page") == str(citation["page"])
    page_json = page.request.get(f"/api/documents/{doc_id}/pages/{citation['page']}").json()
    img_box, hl_box = image.bounding_box(), box.bounding_box()
    scale = img_box["width"] / page_json["width"]
    expected = citation["bboxes"][0]
    assert hl_box["x"] == pytest.approx(img_box["x"] + expected["x0"] * scale, abs=1.5)
    assert hl_box["y"] == pytest.approx(img_box["y"] + expected["y0"] * scale, abs=1.5)
    assert hl_box["width"] == pytest.approx((expected["x1"] - expected["x0"]) * scale, abs=1.5)
    assert hl_box["height"] == pytest.approx((expected["y1"] - expected["y0"]) * scale, abs=1.5)
    assert "active" in box.get_attribute("class")
    shot(page, "05-answer-with-highlight", full=True)
    page.locator("#viewer").screenshot(path=str(ARTIFACTS / "06-cited-page.png"))

    # the Set-of-Marks overlay and the page's components
    page.check("#marks-toggle")
    page.wait_for_function(
        "() => { const i = document.getElementById('page-image');"
        " return i.src.includes('/marks') && i.complete && i.naturalWidth > 0; }"
    )
    assert page.locator("[data-test=component]").count() == len(page_json["components"])
    page.locator("#viewer").screenshot(path=str(ARTIFACTS / "07-set-of-marks.png"))
    page.uncheck("#marks-toggle")

    if method == "kg4vd":
        check_graph_click_through(page)
    assert errors == [], errors
    context.close()


def check_graph_click_through(page) -> None:
    """Evidence → graph → a node → a page that mentions it, its components outlined."""
    entity_count = page.locator("[data-test=evidence-entity]").count()
    assert entity_count > 0
    page.click("#evidence-graph")
    page.wait_for_function("() => Number(document.getElementById('graph-canvas').dataset.nodes || 0) > 0")
    # the graph shown is the answering method's; the choice lists the methods with a graph only
    graphs = page.eval_on_selector_all("#graph-method option", "options => options.map((o) => o.value)")
    assert page.input_value("#graph-method") == "kg4vd" and "bm25" not in graphs, graphs
    node_id = page.evaluate(
        "() => { const cy = window.docgraph.graph(); const n = cy.nodes('[?seed]')[0]; n.emit('tap'); return n.id(); }"
    )
    panel = page.locator("#graph-node")
    panel.wait_for()
    assert panel.get_attribute("data-entity") == node_id
    shot(page, "08-graph")
    link = panel.locator("[data-test=graph-node-page]").first
    target_page = link.get_attribute("data-page")
    link.click()
    page.wait_for_function(f"() => document.getElementById('page-stage').dataset.page === '{target_page}'")
    page.locator("[data-test=highlight-box]").first.wait_for()
    shot(page, "09-graph-to-page")
