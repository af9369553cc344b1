"""KG4VD end to end on the OpenStax World History excerpt (5 pages), ingested and built
offline once for this module: the test questions retrieve the pages holding their answers,
and every citation of every answer resolves to a real box on a real page.

Where an answer is not literally on a page, the best available evidence is asserted:
- test_q002 "4 (Chapters 14–17)" is a count; the table of contents on page 1 lists the
  chapters, so page 1 must rank in the top 3 and its chapter entities must be kept;
- test_q007 / test_q008 are syntheses; the table of contents (page 1) and the preface's
  pedagogy pages (3–4) are their evidence.
The ingestion marks the unit title on page 1 ("Unit 4 A Global Middle Ages, 1200–1500 CE")
as a page header, so it is neither in the page index text nor extracted into the graph;
the offline answer still quotes it (running-title headers are quotable).
"""

from __future__ import annotations

import json

import pytest

from docgraph import Workspace
from docgraph.methods.answers.extractive import OFFLINE_NOTICE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world_history(tmp_path_factory, shared_data):
    ws = Workspace(tmp_path_factory.mktemp("world_history"))
    [doc] = ws.add(shared_data / "kg4vd_test" / "world_history_p10-15.pdf")
    ws.build("kg4vd")
    questions = {}
    for line in (shared_data / "kg4vd_test" / "questions.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            questions[row["qid"]] = row
    answers = {qid: ws.ask(row["question"], method="kg4vd") for qid, row in questions.items()}
    yield ws, doc, questions, answers
    ws.close()


def page_text(ws, doc_id, number):
    return "\n".join(c.text for c in ws.store.get_page(doc_id, number).components)


def rank(answer, page):
    return [p.page for p in answer.evidence.pages].index(page) + 1


# qid -> (page holding the answer, best rank it must reach, literal text on that page or None)
EXPECTED = {
    # q001/q002 ask about "Unit 4", named in page 1's "Unit 4 …" line, which the layout model
    # types as a page header. That line is the document's title (issue 16: page 1 lists
    # chapters 14-16, so "CHAPTER 14" is no title), and the title heads every chunk's context:
    # every page now names Unit 4, so q001 no longer singles out page 1 (rank 4 → 5) while
    # q002 finds it first (5 → 1); q006 moved 2 → 3, q007 5 → 4. With the offline page
    # rerank weight at 0.25 (was 0.5) q002's contents page is the graph prior's second.
    "test_q001": (1, 5, "A Global Middle Ages, 1200–1500 CE"),
    "test_q002": (1, 2, None),
    "test_q003": (1, 1, "Pax Mongolica: The Steppe Empire of the Mongols"),
    "test_q004": (2, 1, "Creative Commons Attribution 4.0 International (CC BY)"),
    "test_q005": (2, 1, "Rice University"),
    "test_q006": (5, 3, "Julie Tatlock"),
    "test_q007": (1, 4, None),
    "test_q008": (3, 2, None),
}


def test_answer_pages_rank_high(world_history):
    ws, doc, questions, answers = world_history
    assert set(EXPECTED) == set(questions)
    for qid, (page, best, literal) in EXPECTED.items():
        answer = answers[qid]
        if literal is not None:
            assert literal in page_text(ws, doc.id, page), (qid, "the expected answer page moved")
        assert rank(answer, page) <= best, (qid, [p.page for p in answer.evidence.pages])
        assert 1 <= len(answer.evidence.pages) <= 10
        assert answer.evidence.entities and answer.evidence.relations


def test_modes_follow_the_question_style(world_history):
    _, _, questions, answers = world_history
    for qid, row in questions.items():
        assert answers[qid].mode == ("document" if row["style"] == "dlvqa" else "local"), qid


def test_offline_answers_quote_the_facts(world_history):
    ws, doc, _, answers = world_history
    quoted = {
        "test_q001": ("A Global Middle Ages, 1200–1500 CE", 1),
        "test_q004": ("Creative Commons Attribution 4.0 International (CC BY) license", 2),
        "test_q005": ("OpenStax is part of Rice University", 2),
    }
    for qid, (text, page) in quoted.items():
        answer = answers[qid]
        assert answer.text.startswith(OFFLINE_NOTICE) and not answer.model_used
        line = next(line for line in answer.text.splitlines() if text in line)
        number = int(line.rsplit("[", 1)[1].rstrip("]"))
        assert answer.citations[number - 1].page == page
    # the chapter entities of the table of contents are kept for the count and the title
    for qid in ("test_q002", "test_q003"):
        assert "CHAPTER 14" in [s.entity.name for s in answers[qid].evidence.entities], qid
    # both contributors profiled at the end of the preface are among the kept entities
    names = " ".join(s.entity.name for s in answers["test_q006"].evidence.entities)
    assert "Brooke Nelson" in names and "Julie Tatlock" in names
    # the pedagogy summary quotes the preface's pedagogy pages
    assert {c.page for c in answers["test_q008"].citations} & {3, 4}


def test_every_citation_resolves_to_a_real_box(world_history):
    ws, doc, _, answers = world_history
    for qid, answer in answers.items():
        assert answer.citations, qid
        for citation in answer.citations:
            assert citation.doc_id == doc.id and citation.document_title == doc.title
            page = ws.store.get_page(citation.doc_id, citation.page)
            assert page is not None, (qid, citation.page)
            assert citation.component_ids and len(citation.component_ids) == len(citation.bboxes)
            for cid, box in zip(citation.component_ids, citation.bboxes):
                component = page.component(cid)
                assert component is not None and component.bbox == box, (qid, cid)
                assert box.inside(page.width, page.height) and box.area > 0
            assert f"[{citation.number}]" in answer.text


def test_the_offline_page_rerank_weight_moves_pages_between_prior_and_reranker(world_history):
    """q002's table of contents (page 1) is the reranker's first page and the graph prior's second."""
    ws, _doc, questions, answers = world_history
    question = questions["test_q002"]["question"]
    order = {}
    for weight in (0.0, 0.25, 1.0):
        with Workspace(ws.root, overrides={"kg4vd": {"offline_page_rerank_weight": weight}}) as view:
            order[weight] = [p.page for p in view.retrieve(question, method="kg4vd").pages]
    assert order[0.25] == [p.page for p in answers["test_q002"].evidence.pages]  # the default
    assert order[1.0][0] == 1 and order[0.0].index(1) == 1
