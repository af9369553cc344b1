"""The model-driven build through the real client code path, against the scripted stub server.

Page 4 of the World History excerpt (the authors' photo IM1 with caption C1, the bios
P5/P6) is scripted over two rounds that add, replace and delete; the other pages get an
empty patch and a stop signal. Cross-page judging is scripted in its own test.
"""

from __future__ import annotations

import base64
import io
import re

import pytest
from PIL import Image

from docgraph.boundary import strip_fences
from docgraph.documents.marks import MASK_FILL
from docgraph.methods.kg4vd import storage as st
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub

PAGE = 4
EMPTY_PATCH = {"nodes": [], "edges": []}
DONE = {"components": [], "gaps": [], "revision_targets": [], "stop_signal": 1}

EXTRACT = {
    1: {
        "nodes": [
            {
                "op": "add",
                "id": "e1",
                "name": "Ann Kordas",
                "type": "person",
                "modality": "text",
                "description": "Senior contributing author",
                "component_ids": ["C1", "P5"],
            },
            {"op": "add", "id": "e2", "name": "Temple University", "type": "organization", "component_ids": ["P5"]},
            {
                "op": "add",
                "id": "e3",
                "name": "Photo of the senior contributing authors",
                "type": "figure_panel",
                "modality": "visual",
                "component_ids": ["IM1", "C1"],
            },
            {"op": "add", "id": "e9", "name": "Nowhere", "type": "location", "component_ids": ["X99"]},
        ],
        "edges": [
            {"op": "add", "id": "r1", "source": "e1", "target": "e2", "label": "studied at", "component_ids": ["P5"]},
            {
                "op": "add",
                "id": "r2",
                "source": "e3",
                "target": "e1",
                "label": "depicts",
                "component_ids": ["IM1", "C1"],
            },
        ],
    },
    2: {
        "nodes": [
            {"op": "replace", "id": "e2", "description": "Where Ann Kordas earned her PhD in History"},
            {
                "op": "add",
                "id": "e4",
                "name": "Boston University School of Law",
                "type": "organization",
                "component_ids": ["P5"],
            },
        ],
        "edges": [
            {"op": "delete", "id": "r1"},
            {
                "op": "add",
                "id": "r3",
                "source": "e1",
                "target": "e2",
                "label": "earned_phd_at",
                "component_ids": ["P5"],
            },
            {"op": "add", "id": "r4", "source": "e1", "target": "e4", "label": "earned_jd_at", "component_ids": ["P5"]},
        ],
    },
}
REFLECT = {
    1: {
        "components": [
            {"component_id": "IM1", "status": "covered"},
            {"component_id": "C1", "status": "covered"},
            {"component_id": "P5", "status": "partially_covered", "note": "JD missing"},
        ],
        "gaps": ["P5: the law degree is missing"],
        "revision_targets": ["e2", "r1"],
        "stop_signal": 0,
    },
    2: DONE,
}


def _round_and_page(prompt: str) -> tuple[int, int]:
    match = re.search(r"round (\d+) of at most \d+ on page (\d+)", prompt)
    assert match, prompt[:300]
    return int(match.group(1)), int(match.group(2))


def script(req):
    if req.stage == "kg4vd.judge":
        return {"labels": []}
    rnd, page = _round_and_page(strip_fences(req.prompt))
    if req.stage == "kg4vd.extract":
        return EXTRACT.get(rnd, EMPTY_PATCH) if page == PAGE else EMPTY_PATCH
    return REFLECT.get(rnd, DONE) if page == PAGE else DONE


def _image(req) -> Image.Image:
    (url,) = req.image_urls
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        server.reply(script)
        yield server


def test_scripted_loop_adds_replaces_deletes_masks_and_stops(stub, wh_workspace):
    ws = wh_workspace(settings=stub_settings(stub, embeddings=True))
    report = ws.build("kg4vd")
    assert report.pages_built == 5 and report.stats["failed_pages"] == 0

    record = st.load_page_graph(ws.store, ws.documents()[0].id, PAGE)
    assert (record.rounds, record.stop_reason, record.strategy) == (2, "signal", "model")
    entities = {e.id: e for e in record.entities}
    assert set(entities) == {"e1", "e2", "e3", "e4"}  # e9 cited a component the page does not have
    assert entities["e2"].description == "Where Ann Kordas earned her PhD in History"  # replaced
    assert entities["e3"].modality == "visual"
    assert {(r.id, r.label) for r in record.relations} == {
        ("r2", "depicts"),
        ("r3", "earned_phd_at"),
        ("r4", "earned_jd_at"),
    }  # r1 deleted
    assert [(r["round"], r["rule"], r["op"]["id"]) for r in record.rejected] == [(1, "component_exists", "e9")]
    assert [f["masked"] for f in record.feedback] == [[], ["C1", "IM1"]]
    assert record.usage.calls == 4 and record.usage.input_tokens > 0

    extract = [r for r in stub.seen(stage="kg4vd.extract") if _round_and_page(strip_fences(r.prompt))[1] == PAGE]
    reflect = [r for r in stub.seen(stage="kg4vd.reflect") if _round_and_page(strip_fences(r.prompt))[1] == PAGE]
    assert len(extract) == 2 and len(reflect) == 2  # stopped on the signal, not after R=5 rounds
    # round 2 sees the covered components flagged in the manifest and greyed out in the image
    assert "[IM1] (image, covered, greyed out)" in extract[1].prompt
    assert "[IM1] (image)" in extract[0].prompt and "JD missing" in extract[1].prompt
    # round 2 also hears which operation the controller refused in round 1, and by which rule
    assert "controller rejected" not in extract[0].prompt
    rejected = extract[1].prompt.split("the controller rejected", 1)[1].split("\n\nReply with", 1)[0]
    assert "(1 operation)" in rejected
    (line,) = [ln for ln in rejected.splitlines() if ln.startswith("- ")]
    assert line.startswith('- node {"op":"add","id":"e9","name":"Nowhere"') and '"X99"' in line
    assert "rule component_exists: cites X99, not components of this page" in line
    page = ws.store.get_page(record.doc_id, PAGE)
    box = page.component("IM1").bbox
    first, second = _image(extract[0]), _image(extract[1])
    scale = first.width / page.width
    centre = (int((box.x0 + box.x1) / 2 * scale), int((box.y0 + box.y1) / 2 * scale))
    assert second.getpixel(centre) == MASK_FILL != first.getpixel(centre)
    # the reflector sees the same annotated image as the extractor of its round
    assert _image(reflect[1]).tobytes() == second.tobytes()

    # canonical graph: page-local ids became workspace ids, cross-page edges need other pages' entities
    entities = st.load_entities(ws.store)
    assert {e.name for e in entities.values()} == {
        "Ann Kordas",
        "Temple University",
        "Boston University School of Law",
        "Photo of the senior contributing authors",
    }
    assert all(e.mentions[0].page == PAGE for e in entities.values())
    relations = st.load_relations(ws.store)
    assert {(entities[r.source].name, r.label) for r in relations.values()} == {
        ("Photo of the senior contributing authors", "depicts"),
        ("Ann Kordas", "earned_phd_at"),
        ("Ann Kordas", "earned_jd_at"),
    }
    assert set(st.load_entities(ws.store)) == set(ws.store.load_vectors(st.VEC_ENTITY)[0])
    assert len(ws.store.load_vectors(st.VEC_PAGE)[0]) == 5

    # the structural layer stands under the model-built graph too: chunks of every page, each
    # entity grounded in the chunks holding its cited components, hybrid seeds and diffusion
    from docgraph.methods.kg4vd.retrieval import load_layer, retrieve_graph
    from docgraph.methods.retrieval.vector_index import load_index

    layer = load_layer(ws.context(), load_index(ws.store, st.VEC_PAGE))
    assert {p for _, p in layer.pages} == {1, 2, 3, 4, 5} and ws.store.count_records(st.NS_CHUNK) == len(layer.chunks)
    ann = next(e for e in entities.values() if e.name == "Ann Kordas")
    mention = ann.mentions[0]
    assert any((mention.doc_id, PAGE, cid) in layer.component_chunk for cid in mention.component_ids)
    trace = retrieve_graph(ws.context(), "Where did Ann Kordas earn her JD?", "local")
    assert trace.pages[0].page == PAGE and "structure_diffusion" in trace.timings
    assert "Ann Kordas" in {view_name for view_name in (s.entity.name for s in trace.entities)}

    # a finished build is not redone: no model call at all
    calls = stub.count("/chat/completions")
    again = ws.build("kg4vd")
    assert (again.pages_built, again.pages_skipped) == (0, 5)
    assert stub.count("/chat/completions") == calls


def test_single_pass_ablation_makes_one_extract_call_per_page(stub, wh_workspace):
    settings = stub_settings(stub, embeddings=True, overrides={"kg4vd": {"max_rounds": 1, "reflector": False}})
    ws = wh_workspace(settings=settings)
    ws.build("kg4vd")
    assert stub.count(stage="kg4vd.extract") == 5 and stub.count(stage="kg4vd.reflect") == 0
    record = st.load_page_graph(ws.store, ws.documents()[0].id, PAGE)
    assert (record.rounds, record.feedback) == (1, [])
    assert {e.name for e in record.entities} == {
        "Ann Kordas",
        "Temple University",
        "Photo of the senior contributing authors",
    }


def test_failed_page_is_reported_and_retried_by_the_next_build(stub, wh_workspace):
    stub.fault("500", times=100, stage="kg4vd.extract", when="on page 2")
    ws = wh_workspace(settings=stub_settings(stub, embeddings=True))
    report = ws.build("kg4vd")
    assert report.stats["failed_pages"] == 1 and "page 2" in report.stats["failures"][0]
    assert ws.status()["kg4vd"]["built_pages"] == 4
    stub.reset()
    stub.reply(script)
    report = ws.build("kg4vd")
    assert (report.pages_built, report.pages_skipped) == (1, 4)
    assert {_round_and_page(strip_fences(r.prompt))[1] for r in stub.seen(stage="kg4vd.extract")} == {2}


PAGE5 = {
    "nodes": [
        {"op": "add", "id": "e1", "name": "Julie C. Tatlock", "type": "person", "component_ids": ["P1"]},
        {"op": "add", "id": "e2", "name": "Mount Mary University", "type": "organization", "component_ids": ["P1"]},
    ],
    "edges": [{"op": "add", "source": "e1", "target": "e2", "label": "teaches_at", "component_ids": ["P1"]}],
}
PAGE4 = {
    "nodes": [
        {"op": "add", "id": "e1", "name": "Julie Tatlock", "type": "person", "component_ids": ["C1"]},
        {
            "op": "add",
            "id": "e2",
            "name": "Photo of the senior contributing authors",
            "type": "figure_panel",
            "component_ids": ["IM1", "C1"],
        },
    ],
    "edges": [{"op": "add", "source": "e2", "target": "e1", "label": "depicts", "component_ids": ["IM1"]}],
}


def judge_script(req):
    """same for two Tatlocks, related for Tatlock / Mount Mary, unparseable for the photo."""
    if req.stage != "kg4vd.judge":
        rnd, page = _round_and_page(strip_fences(req.prompt))
        if req.stage == "kg4vd.extract":
            return {4: PAGE4, 5: PAGE5}.get(page, EMPTY_PATCH) if rnd == 1 else EMPTY_PATCH
        return DONE
    anchor = strip_fences(req.prompt).split("Entity:\n", 1)[1].split(" [", 1)[0]
    if anchor.startswith("Photo"):
        return "this is not JSON"
    labels = []
    for number, name in re.findall(r"^(\d+)\. (.+?) \[", strip_fences(req.prompt).split("Candidates:\n", 1)[1], re.M):
        pair = {anchor, name}
        label = (
            "same"
            if all("Tatlock" in n for n in pair)
            else "related"
            if any("Tatlock" in n for n in pair) and "Mount Mary University" in pair
            else "unrelated"
        )
        labels.append({"candidate": int(number), "label": label, "reason": "scripted"})
    return {"labels": labels}


def test_model_judge_merges_same_and_links_related_across_pages(wh_workspace):
    with OpenAIStub() as server:
        server.reply(judge_script)
        ws = wh_workspace(settings=stub_settings(server, embeddings=True))
        report = ws.build("kg4vd")
        judge_calls = server.seen(stage="kg4vd.judge")
    entities = st.load_entities(ws.store)
    (tatlock,) = [e for e in entities.values() if "Tatlock" in e.name]
    assert {m.page for m in tatlock.mentions} == {4, 5} and len(tatlock.aliases) == 1
    relations = st.load_relations(ws.store).values()
    assert any(r.label == "teaches_at" and r.source == tatlock.id for r in relations)  # redirected
    (related,) = [r for r in relations if r.cross_page]
    university = next(e for e in entities.values() if e.name == "Mount Mary University")
    assert {related.source, related.target} == {tatlock.id, university.id}
    # every entity is judged against its own candidates, so each pair is judged from both sides
    assert report.stats["verdicts"] == {"same": 2, "related": 2, "unrelated": 4}
    anchors = {strip_fences(r.prompt).split("Entity:\n", 1)[1].split(" [", 1)[0] for r in judge_calls}
    assert anchors == {
        "Julie Tatlock",
        "Julie C. Tatlock",
        "Mount Mary University",
        "Photo of the senior contributing authors",
    }
    # the model's link carries its reason, so it is indexed (only bare offline links are not)
    assert related.description and related.id in ws.store.load_vectors(st.VEC_RELATION)[0]
    # the visual entity's crop goes to the judge as an image; its unparseable reply links nothing
    photo_calls = [r for r in judge_calls if "Photo of the senior" in strip_fences(r.prompt)]
    assert photo_calls and all(r.image_urls for r in photo_calls)
    assert ws.usage()["kg4vd.judge"].failures >= 1
    assert len(entities) == 3
