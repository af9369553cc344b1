"""A scripted-model HVM build over two real pages (OpenStax World History, "About the Authors"):
the extractor replies plant a conflicting figure (the book's year stated as 2020 on one chunk and
2019 on another) and a redundant fact across chunks; the detector and resolver, scripted through
the OpenAI-compatible stub, must confirm and resolve them so that the final holistic view M holds
the supported year only and one merged affiliation fact."""

from __future__ import annotations

import json
import re

import pymupdf
import pytest

from docgraph import Workspace
from docgraph.boundary import strip_fences
from docgraph.methods.hvm.state import NS_CONFLICT, NS_FACT, NS_STATE
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub

BOOK = "Arab Conquests and Early Islamic Historiography"
PHOTO = "Senior Contributing Authors photo"

# chunk text prefix -> (entities, relations) the scripted extractor returns
EXTRACTIONS = {
    "Ryan J. Lynch, Columbus State University": (
        [("Ryan J. Lynch", "person"), ("Columbus State University", "organization")],
        [("Ryan J. Lynch", "affiliated_with", "Columbus State University", "person", "organization")],
    ),
    "Dr. Ryan J. Lynch is Associate Professor": (
        [("Ryan J. Lynch", "person"), ("Columbus State University", "organization")],
        [("Ryan J. Lynch", "works_at", "Columbus State University", "person", "organization")],
    ),
    "interest in how modern terror groups": (
        [("Ryan J. Lynch", "person"), (BOOK, "work")],
        [("Ryan J. Lynch", "author_of", BOOK, "person", "work"), (BOOK, "published_in", "2020", "work", "date")],
    ),
    "Dr. Julie C. Tatlock chairs": (  # the planted mistake: the 2019 of another publication
        [("Julie C. Tatlock", "person"), ("Mount Mary University", "organization")],
        [
            ("Julie C. Tatlock", "works_at", "Mount Mary University", "person", "organization"),
            (BOOK, "published_in", "2019", "work", "date"),
        ],
    ),
}


def _chunk_text(prompt: str) -> str:
    match = re.search(r"Chunk:\n(.*?)\n\n", prompt, re.S)
    return match.group(1) if match else ""


def _facts_in(block: str) -> dict[str, str]:
    return dict(re.findall(r"(F\d+): (\(.*?\))  \[", block))


def script(req) -> dict:
    prompt = strip_fences(req.prompt)
    if req.stage == "hvm.extract":
        if "from a picture" in prompt:
            return {
                "image": {"name": PHOTO, "type": "photo", "description": "four authors side by side"},
                "entities": [{"name": "Ann Kordas", "type": "person", "description": "leftmost"}],
            }
        text = _chunk_text(prompt)
        for prefix, (entities, relations) in EXTRACTIONS.items():
            if text.startswith(prefix):
                if "You extract relations" in prompt:
                    return {
                        "relations": [
                            {"head": h, "relation": r, "tail": t, "head_type": ht, "tail_type": tt}
                            for h, r, t, ht, tt in relations
                        ]
                    }
                return {"entities": [{"name": n, "type": c, "description": f"{n} in this chunk"} for n, c in entities]}
        return {"entities": [], "relations": []}
    if req.stage == "hvm.detect":
        groups = []
        for label, block in re.findall(r"(G\d+) \(.*?\):\n((?:  F.*\n?)+)", prompt):
            facts = _facts_in(block)
            lines = " ".join(facts.values())
            if "2019" in lines and "2020" in lines:
                pair = sorted(facts)
                groups.append(
                    {
                        "group": label,
                        "conflict": True,
                        "type": "mutual",
                        "pairs": [pair],
                        "explanation": "two publication years",
                    }
                )
            elif "works_at" in lines and "affiliated_with" in lines:
                groups.append(
                    {
                        "group": label,
                        "conflict": True,
                        "type": "granularity",
                        "pairs": [sorted(facts)],
                        "explanation": "the same affiliation said twice",
                    }
                )
            else:
                groups.append({"group": label, "conflict": False, "type": "", "pairs": [], "explanation": "ok"})
        return {"groups": groups}
    if req.stage == "hvm.resolve":
        facts = _facts_in(prompt)
        label = {v.split(",")[1].strip() + ("|2019" if "2019" in v else ""): k for k, v in facts.items()}
        decisions = []
        if "published_in|2019" in label:
            decisions.append(
                {"fact": label["published_in|2019"], "action": "discard", "reason": "S1 states (I.B. Tauris, 2020)"}
            )
            decisions.append({"fact": label["published_in"], "action": "keep", "reason": "supported"})
        if "works_at" in label and "affiliated_with" in label:
            decisions.append(
                {
                    "fact": label["works_at"],
                    "action": "merge",
                    "into": label["affiliated_with"],
                    "reason": "same affiliation",
                }
            )
        return {"decisions": decisions, "unresolved": [], "summary": "resolved"}
    if req.stage == "hvm.answer":
        number = re.search(r"\[(\d+)\] \([^)]*page 2", prompt)
        return f"It was published in 2020 [{number.group(1) if number else 99}]."
    raise AssertionError(f"unexpected stage {req.stage}")


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("hvm-scripted")
    source = pymupdf.open(shared_data / "documents" / "openstax_world_history_v1_excerpt.pdf")
    pdf = pymupdf.open()
    pdf.insert_pdf(source, from_page=3, to_page=4)  # pages 4-5: "About the Authors"
    pdf.save(root / "authors.pdf")
    with OpenAIStub(default_reply="{}") as stub:
        stub.reply(script)
        settings = stub_settings(
            stub, roles=("build", "answer"), embeddings=True, overrides={"hvm": {"max_group_size": 4}}
        )
        ws = Workspace(root / "ws", settings=settings)
        doc = ws.add(root / "authors.pdf")[0]
        report = ws.build("hvm")
        yield ws, doc, stub, report
        ws.close()


def _facts(ws, doc_id):
    return {fid: f for fid, f in ws.store.iter_records(NS_FACT, doc_id=doc_id)}


def test_planted_figure_conflict_is_resolved_to_the_supported_year(built):
    ws, doc, stub, report = built
    facts = _facts(ws, doc.id)
    years = [f for f in facts.values() if f["relation"] == "published_in"]
    assert [(y["head"], y["tail"]) for y in years] == [(BOOK.lower(), "2020")]
    assert years[0]["chunks"] == [f"{doc.id}:2:P1"] and years[0]["conflict"] == "mutual"
    assert report.stats["confirmed"] == 2 and report.stats["discarded"] == 1 and report.stats["merged"] == 1
    # the resolver saw the group's supporting chunk B_g (where 2020 is stated), not only the current chunk
    resolve_prompts = [strip_fences(r.prompt) for r in stub.seen(stage="hvm.resolve")]
    assert any("I.B. Tauris, 2020" in p and "Dr. Julie C. Tatlock chairs" in p for p in resolve_prompts)


def test_redundant_affiliation_merges_with_provenance_from_both_chunks(built):
    ws, doc, _, _ = built
    facts = _facts(ws, doc.id)
    lynch = [f for f in facts.values() if f["head"] == "ryan j. lynch" and f["tail"] == "columbus state university"]
    assert len(lynch) == 1
    assert lynch[0]["relation"] == "affiliated_with"
    assert lynch[0]["chunks"] == [f"{doc.id}:1:TI8", f"{doc.id}:1:P6"]
    assert {(f["head"], f["relation"]) for f in facts.values()} >= {
        ("julie c. tatlock", "works_at"),
        ("ryan j. lynch", "author_of"),
        (BOOK.lower(), "published_in"),
    }


def test_conflict_log_records_types_and_decisions(built):
    ws, doc, _, _ = built
    log = [entry for _, entry in ws.store.iter_records(NS_CONFLICT, doc_id=doc.id)]
    assert sorted(e["type"] for e in log) == ["granularity", "mutual"]
    mutual = next(e for e in log if e["type"] == "mutual")
    assert mutual["page"] == 2 and not mutual["unresolved"] and mutual["resolver"] == "model"
    actions = {f["tail"]: f["decision"]["action"] for f in mutual["facts"]}
    assert actions == {"2019": "discard", "2020": "keep"}


def test_groups_sent_to_the_detector_are_bounded(built):
    _, _, stub, _ = built
    for req in stub.seen(stage="hvm.detect"):
        for _, block in re.findall(r"(G\d+) \(.*?\):\n((?:  F.*\n?)+)", strip_fences(req.prompt)):
            assert 2 <= len(_facts_in(block)) <= 4


def test_what_the_conflict_prompts_cut_is_counted(built, tmp_path):
    """The same build with tight limits: groups of two facts, 60 characters per chunk."""
    _, _, _, report = built
    assert report.stats["truncated"] == {}  # the defaults (groups of 4 here) cut nothing on these pages
    extra = [
        (BOOK, "written_by", "Ryan J. Lynch", "work", "person"),
        (BOOK, "about", "Arab conquests", "work", "topic"),
    ]

    def more_facts(req):  # the Tatlock chunk also states two more facts about the book: a group of four
        reply = script(req)
        if "You extract relations" in strip_fences(req.prompt) and _chunk_text(strip_fences(req.prompt)).startswith(
            "Dr. Julie C. Tatlock"
        ):
            reply["relations"] += [
                {"head": h, "relation": r, "tail": t, "head_type": ht, "tail_type": tt} for h, r, t, ht, tt in extra
            ]
        return reply

    with OpenAIStub(default_reply="{}") as stub:
        stub.reply(more_facts)
        settings = stub_settings(
            stub, roles=("build",), embeddings=True, overrides={"hvm": {"max_group_size": 2, "support_chars": 60}}
        )
        with Workspace(tmp_path / "ws", settings=settings) as ws:
            doc = ws.add(built[0].root.parent / "authors.pdf")[0]
            tight = ws.build("hvm")
            log = [entry for _, entry in ws.store.iter_records(NS_CONFLICT, doc_id=doc.id)]
        truncated = tight.stats["truncated"]
        detected = [
            _facts_in(block)
            for req in stub.seen(stage="hvm.detect")
            for _, block in re.findall(r"(G\d+) \(.*?\):\n((?:  F.*\n?)+)", strip_fences(req.prompt))
        ]
        supports = [
            text
            for req in stub.seen(stage="hvm.resolve")
            for text in re.findall(r"^S\d+ \(page \d+, \w+\):\n(.*)$", strip_fences(req.prompt), re.M)
        ]
    assert all(len(facts) == 2 for facts in detected)
    assert truncated["groups_cut"] >= 1 and truncated["group_facts_omitted"] >= truncated["groups_cut"]
    assert truncated["group_facts_omitted"] >= sum(e["omitted"] for e in log)  # the log has confirmed groups
    assert supports and all(len(text) <= 60 for text in supports) and truncated["texts_cut"] >= 1
    assert all("support_omitted" in e for e in log)


def test_picture_is_an_entity_and_its_crop_went_to_the_vision_model(built):
    ws, doc, stub, _ = built
    image_calls = [r for r in stub.seen(stage="hvm.extract") if "from a picture" in strip_fences(r.prompt)]
    assert len(image_calls) == 1 and image_calls[0].image_urls[0].startswith("data:image/jpeg;base64,"), (
        "the crop as ingested (JPEG, ingest.image_format)"
    )
    rows = dict(ws.store.iter_records("hvm.entity", doc_id=doc.id))
    photo = rows[f"{doc.id}|{PHOTO.lower()}"]
    assert photo["concept"] == "photo" and photo["mentions"] == [f"{doc.id}:1:IM1"]


def test_rebuild_skips_finished_work_and_answer_cites_real_regions(built):
    ws, doc, stub, _ = built
    calls = stub.count("/chat/completions")
    again = ws.build("hvm")
    assert again.pages_built == 0 and again.pages_skipped == 2
    assert stub.count("/chat/completions") == calls
    assert ws.store.get_record(NS_STATE, doc.id)["complete"] is True
    answer = ws.ask("In which year was Arab Conquests and Early Islamic Historiography published?", method="hvm")
    assert answer.model_used and "2020" in answer.text
    assert len(answer.citations) == 1
    cited = answer.citations[0]
    page = ws.store.get_page(cited.doc_id, cited.page)
    assert cited.page == 2 and cited.bboxes and all(page.component(c) for c in cited.component_ids)
    prompt = stub.seen(stage="hvm.answer")[-1].prompt
    assert prompt.index("## Text evidence") < prompt.index("## Table evidence") < prompt.index("## Picture evidence")
    assert json.dumps(answer.model_dump(mode="json"))  # serialisable


def test_a_document_built_before_the_support_limits_is_not_rebuilt(built):
    ws, doc, stub, _ = built
    state = ws.store.get_record(NS_STATE, doc.id)
    assert {"support_per_group": 4, "support_chars": 1200}.items() <= state["signature"].items()
    for key in ("support_per_group", "support_chars"):  # as recorded before these settings existed
        del state["signature"][key]
    ws.store.put_record(NS_STATE, doc.id, state, doc_id=doc.id)
    calls = stub.count("/chat/completions")
    assert ws.build("hvm").pages_built == 0 and stub.count("/chat/completions") == calls


def test_ablation_switches_rebuild_only_what_they_change(built):
    """Runs last: switches the workspace to the no-conflict-resolution and no-concept-graph ablations."""
    ws, doc, stub, _ = built
    extract_calls = stub.count(stage="hvm.extract")
    detect_calls = stub.count(stage="hvm.detect")
    ws.settings.hvm.conflict_resolution = False
    ws.settings.hvm.concept_graph = False
    report = ws.build("hvm")
    assert report.pages_built == 2 and report.stats["entity_vectors"] > 0
    assert stub.count(stage="hvm.extract") == extract_calls  # extractions were kept
    assert stub.count(stage="hvm.detect") == detect_calls  # no conflict handling at all
    years = sorted(f["tail"] for f in _facts(ws, doc.id).values() if f["relation"] == "published_in")
    assert years == ["2019", "2020"]  # without resolution both figures stay in M
    assert list(ws.store.iter_records(NS_CONFLICT, doc_id=doc.id)) == []
    evidence = ws.retrieve("Arab Conquests and Early Islamic Historiography", method="hvm")
    assert evidence.entities and all(e.entity.type != "concept" for e in evidence.entities)
    assert evidence.relations == []
