"""KG4VD's offline answer and ``docgraph ask``: extractive quotes, citations to real boxes,
readable and JSON output, highlighted pages."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from query_graph import history_graph, write_graph

from docgraph import Workspace
from docgraph.cli import main
from docgraph.errors import InputError
from docgraph.methods.answers.citations import CitationBook
from docgraph.methods.answers.extractive import OFFLINE_NOTICE
from docgraph.methods.building.markdown_tables import rows_as_sentences
from docgraph.methods.kg4vd import query
from docgraph.methods.kg4vd.answer import (
    OFF_PAGE_MENTIONS,
    Item,
    number_items,
    offline_passages,
    quotable,
    quoted_mentions,
    resolve_markers,
)
from docgraph.types import Answer, ComponentKind, Entity, Mention


@pytest.fixture(scope="module")
def ws_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("offline") / "ws"
    with Workspace(path) as ws:
        write_graph(ws, history_graph())
    return path


def assert_citations_resolve(ws, answer):
    assert answer.citations
    for n, citation in enumerate(answer.citations, start=1):
        assert citation.number == n
        page = ws.store.get_page(citation.doc_id, citation.page)
        assert page is not None and citation.component_ids
        for cid, box in zip(citation.component_ids, citation.bboxes, strict=True):
            assert page.component(cid).bbox == box
            assert box.inside(page.width, page.height) and box.area > 0
        assert f"[{n}]" in answer.text


def test_offline_answer_quotes_the_fact_with_citations(ws_path):
    with Workspace(ws_path) as ws:
        answer = query.answer(ws.context(), "Which dynasty did Kublai Khan establish in China?")
        assert answer.text.startswith(OFFLINE_NOTICE)
        assert not answer.model_used and answer.usage == {}
        assert "established the Yuan dynasty in China in 1271" in answer.text
        assert_citations_resolve(ws, answer)
        assert answer.citations[0].page == 3
        assert {"analyzer", "page_retrieval", "entity_retrieval", "subgraph_ppr", "rerank", "answer"} <= set(
            answer.timings
        )


def test_offline_passages_are_component_texts(ws_path):
    with Workspace(ws_path) as ws:
        ev = query.retrieve(ws.context(), "Marco Polo", top_pages=2)
        book = CitationBook(ws.store)
        passages = offline_passages(ev, book)
        keys = [(p.doc_id, p.page, p.component_ids) for p in passages]
        assert len(keys) == len(set(keys))
        for p in passages:
            page = ws.store.get_page(p.doc_id, p.page)
            comps = [page.component(c) for c in p.component_ids]  # tables row by row, so a row can be quoted
            assert p.text == "\n\n".join(
                rows_as_sentences(c.content) if c.kind is ComponentKind.TABLE else c.content for c in comps
            )
            assert all(quotable(page.component(c)) for c in p.component_ids)
            assert not any(page.component(c).kind.value == "F" for c in p.component_ids)
        assert {p.page for p in passages[:3]} == {ev.pages[0].page}


def test_resolve_markers(ws_path):
    with Workspace(ws_path) as ws:
        book = CitationBook(ws.store)
        items = [
            Item(1, "entity", "Genghis Khan", [Mention(doc_id="hist0001", page=2, component_ids=["P1"])]),
            Item(
                2,
                "relation",
                "r",
                [
                    Mention(doc_id="hist0001", page=3, component_ids=["P1", "T1"]),
                    Mention(doc_id="hist0001", page=2, component_ids=["P1"]),
                ],
            ),
        ]
        text, unknown = resolve_markers("A [2]. B [1; 7]. C [1,2].", items, book)
        assert text == "A [1][2]. B [2]. C [2][1]."
        assert unknown == [7]
        assert [(c.page, c.component_ids) for c in book.citations] == [(3, ["P1", "T1"]), (2, ["P1"])]


def test_page_items_cite_grounded_components(ws_path):
    with Workspace(ws_path) as ws:
        ev = query.retrieve(ws.context(), "Kublai Khan", mode="local")
        items = number_items(ev, CitationBook(ws.store), ws.store)
        kinds = [i.kind for i in items]
        assert kinds == sorted(kinds, key=["entity", "relation", "page"].index)
        assert [i.number for i in items] == list(range(1, len(items) + 1))
        page3 = next(i for i in items if i.kind == "page" and i.page.number == 3)
        assert set(page3.mentions[0].component_ids) == {"P1", "T1"}
        page1 = next(i for i in items if i.kind == "page" and i.page.number == 1)
        assert "F1" not in page1.mentions[0].component_ids  # furniture is never cited


def test_cli_ask_readable_json_and_highlight(ws_path, tmp_path, capsys):
    assert main(["--workspace", str(ws_path), "ask", "Who founded the Mongol Empire?", "--mode", "local"]) == 0
    out = capsys.readouterr().out
    assert "Genghis Khan united the steppe tribes" in out
    assert "[1] A Short World History p.2 — P1" in out
    assert "mode local" in out and "model none (offline)" in out and "page retrieval" in out

    assert (
        main(
            [
                "--workspace",
                str(ws_path),
                "ask",
                "Who founded the Mongol Empire?",
                "--full-json",
                "--top-pages",
                "3",
                "--highlight",
                str(tmp_path / "hl"),
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    answer = Answer.model_validate(json.loads(captured.out))
    assert answer.method == "kg4vd" and len(answer.evidence.pages) == 3
    pngs = sorted((tmp_path / "hl").glob("*.png"))
    assert len(pngs) == len({(c.doc_id, c.page) for c in answer.citations}) > 0
    assert str(pngs[0]) in captured.err
    with Image.open(pngs[0]) as image:
        assert image.size == (300, 400)


def test_cli_ask_errors(ws_path, tmp_path, capsys):
    assert main(["--workspace", str(ws_path), "ask", "x", "--method", "nosuch"]) == 1
    assert "unknown method 'nosuch'" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["--workspace", str(tmp_path / "empty"), "ask", "anything"]) == 1
    assert "docgraph build --method kg4vd" in capsys.readouterr().err
    assert main(["--workspace", str(tmp_path / "missing"), "ask", "anything"]) == 1
    assert "no workspace at" in capsys.readouterr().err and not (tmp_path / "missing").exists()


def test_cli_passes_mode_to_methods_that_have_modes_only(capsys):
    from argparse import Namespace

    from docgraph.cli.ask import ask_options

    assert ask_options(Namespace(method="kg4vd", mode="document", top_pages=None)) == {"mode": "document"}
    assert ask_options(Namespace(method="dense", mode="auto", top_pages=4)) == {"top_pages": 4}
    assert ask_options(Namespace(method="dense", mode="local", top_pages=None)) == {}
    assert "dense has no retrieval modes; --mode local is ignored" in capsys.readouterr().err
    with pytest.raises(InputError, match="kg4vd has no mode 'loud'; use one of auto, local, multi_hop, document"):
        ask_options(Namespace(method="kg4vd", mode="loud", top_pages=None))


def test_quotable_components():
    from docgraph.types import BBox, Component, ComponentKind

    def comp(kind, text, furniture):
        return Component(id="X1", kind=kind, bbox=BBox(x0=0, y0=0, x1=1, y1=1), order=0, text=text, furniture=furniture)

    assert quotable(comp(ComponentKind.PARAGRAPH, "Any text.", False))
    assert not quotable(comp(ComponentKind.PARAGRAPH, "   ", False))
    assert quotable(comp(ComponentKind.HEADER, "Unit 4 A Global Middle Ages, 1200–1500 CE", True))
    assert not quotable(comp(ComponentKind.HEADER, "Preface 3", True))
    assert not quotable(comp(ComponentKind.FOOTER, "Access for free at openstax.org today", True))


def test_a_hub_quotes_its_mentions_on_the_ranked_pages_and_a_few_others():
    """An entity named on hundreds of pages gives passages from the pages the evidence ranks
    and from its first few other mentions, in its own order; a small one from all of them."""
    hub = Entity(
        id="e",
        name="stock units",
        type="concept",
        mentions=[Mention(doc_id="d", page=n, component_ids=["P1"]) for n in range(1, 301)],
    )
    ranked = {("d", 150), ("d", 7)}
    first_others = [n for n in range(1, 301) if n not in (7, 150)][:OFF_PAGE_MENTIONS]
    assert [m.page for m in quoted_mentions(hub, ranked)] == sorted([*first_others, 7, 150])
    small = hub.model_copy(update={"mentions": hub.mentions[:4]})
    assert quoted_mentions(small, set()) == small.mentions
