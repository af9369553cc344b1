"""Baselines with an answer model (the loopback stub): the prompt carries numbered evidence
whose numbers are the citation numbers, the reply's [n] markers become the answer's
citations, usage is reported per stage, and ``pages`` sends the page images."""

from __future__ import annotations

import re

import pytest

from docgraph import Workspace
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub

QUESTION = "Which university is OpenStax affiliated with?"


def cite_rice(request) -> str:
    """Answer 'Rice University' citing the evidence block that mentions it."""
    blocks = re.findall(r"^\[(\d+)\] \(.*?\)\n(.*?)(?=^\[\d+\] \(|\Z)", request.prompt, flags=re.M | re.S)
    numbers = [n for n, text in blocks if "Rice University" in text]
    return f"Rice University [{numbers[0]}]" if numbers else "Not answerable"


@pytest.fixture
def stub_ws(history_ws):
    with OpenAIStub() as stub, Workspace(history_ws.root, settings=stub_settings(stub, roles=("answer",))) as ws:
        yield stub, ws


@pytest.mark.parametrize("method", ["bm25", "dense", "hipporag", "pages"])
def test_model_answer_cites_what_it_used(stub_ws, method):
    stub, ws = stub_ws
    stub.reply(cite_rice, stage=f"{method}.answer")
    stub.reply({"keep": [1, 2, 3]}, stage="hipporag.fact_filter")
    answer = ws.ask(QUESTION, method=method)
    assert answer.model_used and answer.text.startswith("Rice University [")
    assert len(answer.citations) == 1, "only the cited evidence is kept"
    citation = answer.citations[0]
    assert citation.page == 2 and f"[{citation.number}]" in answer.text
    assert answer.usage[f"{method}.answer"].calls == 1
    request = stub.seen("/chat/completions", stage=f"{method}.answer")[-1]
    assert QUESTION in request.prompt and "Not answerable" in request.prompt


def test_pages_sends_the_top_pages_as_images(stub_ws):
    stub, ws = stub_ws
    stub.reply(cite_rice, stage="pages.answer")
    answer = ws.ask(QUESTION, method="pages", top_pages=3)
    request = stub.seen("/chat/completions", stage="pages.answer")[-1]
    assert len(request.image_urls) == 3 and all(u.startswith("data:image/") for u in request.image_urls)
    assert [p.page for p in answer.evidence.pages] == [int(n) for n in re.findall(r"page (\d+)\)", request.prompt)]
    assert answer.citations[0].bboxes, "a page citation still outlines the components that match"


def test_pages_respects_an_endpoint_image_limit(history_ws):
    with (
        OpenAIStub() as stub,
        Workspace(history_ws.root, settings=stub_settings(stub, roles=("answer",), max_images=2)) as ws,
    ):
        stub.reply(cite_rice, stage="pages.answer")
        answer = ws.ask(QUESTION, method="pages", top_pages=3)
        request = stub.seen("/chat/completions", stage="pages.answer")[-1]
    assert len(answer.evidence.pages) == 3 and len(request.image_urls) == 2
    assert len(re.findall(r"page (\d+)\)", request.prompt)) == 3  # every page's text still goes


def test_nodocs_asks_the_model_alone(stub_ws):
    stub, ws = stub_ws
    stub.reply("Rice University", stage="nodocs.answer")
    answer = ws.ask(QUESTION, method="nodocs")
    assert answer.text == "Rice University" and answer.model_used and not answer.citations
    request = stub.seen("/chat/completions", stage="nodocs.answer")[-1]
    assert "No document is available" in request.prompt and QUESTION in request.prompt
