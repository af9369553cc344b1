"""The JSON API route by route: documents, pages and their images, build jobs, ask, graph."""

from __future__ import annotations

import io
import threading
import time

import pytest
from PIL import Image
from server_workspace import DOC_ID, DPI, HVM_RICE, HVM_TRUST, PAGE_H, PAGE_W, page_url, write_hvm_graph


def wait_job(client, job_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/api/jobs/{job_id}").json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish in {timeout}s")


def png(response) -> Image.Image:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    return Image.open(io.BytesIO(response.content)).convert("RGB")


# ---------------------------------------------------------------------- page and documents
def test_index_page_and_static_assets(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for asset in ("/static/app.css", "/static/js/main.js", "/static/vendor/cytoscape.min.js"):
        assert asset in page.text
        assert client.get(asset).status_code == 200, asset
    for module in ("api", "ask", "graph", "viewer", "workspace"):
        assert client.get(f"/static/js/{module}.js").status_code == 200, module
    assert "cytoscape" in client.get("/static/vendor/cytoscape.min.js").text[:2000].lower()
    assert "Permission is hereby granted" in client.get("/static/vendor/cytoscape.LICENSE").text


def test_documents_list_with_pages_and_method_status(client):
    data = client.get("/api/documents").json()
    [doc] = data["documents"]
    assert doc["id"] == DOC_ID and doc["page_count"] == 2 and doc["pages_stored"] == 2
    assert doc["file"] == "harbour.pdf" and doc["title"] == "Harbour Trust report"
    assert "bm25" in data["methods"] and "total_pages" in data["methods"]["bm25"]


def test_document_detail_and_unknown_document(client):
    doc = client.get(f"/api/documents/{DOC_ID}").json()
    assert [p["number"] for p in doc["pages"]] == [1, 2]
    assert doc["pages"][0]["components"] == 3
    assert client.get(f"/api/documents/{DOC_ID[:6]}").json()["id"] == DOC_ID  # prefix works
    missing = client.get("/api/documents/nope")
    assert missing.status_code == 404 and "no document" in missing.json()["detail"]


def test_a_documents_label_is_listed_and_corrected(client):
    [doc] = client.get("/api/documents").json()["documents"]
    assert doc["metadata"]["title"] == "Harbour Trust report" and doc["metadata"]["sources"]["title"] == "ingest"
    changed = client.patch(
        f"/api/documents/{DOC_ID}/metadata",
        json={"organisation": "Harbour Trust", "period": "2021", "title": "Harbour report 2021"},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["title"] == "Harbour report 2021"
    [doc] = client.get("/api/documents").json()["documents"]
    label = doc["metadata"]
    assert (label["organisation"], label["period"], doc["title"]) == ("Harbour Trust", "2021", "Harbour report 2021")
    assert label["sources"]["organisation"] == "user"
    assert client.patch("/api/documents/nope/metadata", json={"title": "x"}).status_code == 404
    assert (
        client.patch(f"/api/documents/{DOC_ID}/metadata", json={"colour": "red"}).json()["title"]
        == "Harbour report 2021"
    )  # unknown fields are ignored, nothing changes


def test_delete_document(client, workspace):
    response = client.delete(f"/api/documents/{DOC_ID}")
    assert response.status_code == 200 and response.json()["removed"] == DOC_ID
    assert client.get("/api/documents").json()["documents"] == []
    assert client.delete(f"/api/documents/{DOC_ID}").status_code == 404


# ---------------------------------------------------------------------- pages
def test_page_json_has_components_scale_and_urls(client):
    page = client.get(page_url(1)).json()
    assert page["width"] == PAGE_W and page["height"] == PAGE_H and page["dpi"] == DPI
    assert page["scale"] == pytest.approx(DPI / 72)
    assert [c["id"] for c in page["components"]] == ["TI1", "P1", "T1"]
    table = page["components"][2]
    assert table["modality"] == "table" and table["kind_name"] == "table"
    assert table["bbox"] == {"x0": 72.0, "y0": 250.0, "x1": 540.0, "y1": 400.0}
    assert table["crop_url"] == page_url(1, "/components/T1/crop")
    assert page["components"][0]["crop_url"] is None
    assert page["image_url"] == page_url(1, "/image") and page["marks_url"] == page_url(1, "/marks")
    assert client.get(page_url(3)).status_code == 404
    assert client.get(page_url(1).replace("/1", "/x")).status_code == 422


def test_page_image_is_the_rendered_file(client, workspace):
    response = client.get(page_url(2, "/image"))
    assert response.content == (workspace.root / f"pages/{DOC_ID}/0002.png").read_bytes()
    assert png(response).size == (round(PAGE_W * DPI / 72), round(PAGE_H * DPI / 72))


def test_set_of_marks_image_and_mask(client, workspace):
    plain = png(client.get(page_url(1, "/image")))
    marks = png(client.get(page_url(1, "/marks")))
    assert marks.size == plain.size and marks.tobytes() != plain.tobytes()
    masked = png(client.get(page_url(1, "/marks"), params={"mask": "P1"}))
    assert masked.tobytes() != marks.tobytes()
    # cached inside the workspace (marks/ is removed with the document)
    assert len(list((workspace.root / "marks" / DOC_ID).glob("p0001-*.png"))) == 2
    bad = client.get(page_url(1, "/marks"), params={"mask": "Q9"})
    assert bad.status_code == 400 and "Q9" in bad.json()["detail"]


def test_highlight_outlines_the_given_components_and_boxes(client):
    scale = DPI / 72
    image = png(client.get(page_url(1, "/highlight"), params={"components": "T1", "n": 3}))
    red = image.getpixel((round(72 * scale) + 1, round(325 * scale)))  # left edge of T1
    assert red[0] > 200 and red[1] < 80 and red[2] < 80
    inside = image.getpixel((round(300 * scale), round(325 * scale)))
    assert inside[0] > 200 and inside[1] > 200  # the inside is not painted over
    boxed = png(client.get(page_url(1, "/highlight"), params={"bbox": "300,500,400,600"}))
    px = boxed.getpixel((round(300 * scale) + 1, round(550 * scale)))
    assert px[0] > 200 and px[1] < 80
    assert client.get(page_url(1, "/highlight")).status_code == 400
    assert client.get(page_url(1, "/highlight"), params={"components": "X7"}).status_code == 400
    assert client.get(page_url(1, "/highlight"), params={"bbox": "1,2,3"}).status_code == 400


def test_component_crop(client, workspace):
    crop = client.get(page_url(1, "/components/T1/crop"))
    assert crop.content == (workspace.root / f"crops/{DOC_ID}/0001-T1.png").read_bytes()
    assert client.get(page_url(1, "/components/P1/crop")).status_code == 404  # text has no crop
    assert client.get(page_url(1, "/components/ZZ/crop")).status_code == 404


def test_entities_grounded_on_a_page(client):
    page1 = client.get(page_url(1, "/entities")).json()["entities"]
    assert {e["id"] for e in page1} == {"e:trust", "e:rice"}
    trust = next(e for e in page1 if e["id"] == "e:trust")
    assert trust["component_ids"] == ["P1", "TI1"] and trust["type"] == "organization"
    assert {(p["page"], tuple(p["component_ids"])) for p in trust["pages"]} == {(1, ("P1", "TI1")), (2, ("P1",))}
    page2 = client.get(page_url(2, "/entities")).json()["entities"]
    photo = next(e for e in page2 if e["id"] == "e:photo")
    assert photo["modality"] == "visual" and photo["component_ids"] == ["IM1"]


# ---------------------------------------------------------------------- graph
def test_graph_neighbourhood_respects_hops(client):
    one = client.get("/api/graph", params={"entity": "e:rice", "hops": 1}).json()
    assert {n["id"] for n in one["nodes"]} == {"e:rice", "e:trust", "e:houston"}
    assert {e["id"] for e in one["edges"]} == {"r1", "r4"}
    assert [n["id"] for n in one["nodes"] if n["seed"]] == ["e:rice"]
    two = client.get("/api/graph", params={"entity": "e:rice", "hops": 2}).json()
    assert {n["id"] for n in two["nodes"]} == {"e:rice", "e:trust", "e:houston", "e:museum"}
    assert next(e for e in two["edges"] if e["id"] == "r2")["cross_page"] is True
    museum = next(n for n in two["nodes"] if n["id"] == "e:museum")
    assert museum["pages"] == [{"doc_id": DOC_ID, "page": 2, "component_ids": ["P1"]}]


def test_graph_limit_several_seeds_and_missing(client):
    capped = client.get("/api/graph", params={"entity": "e:rice", "hops": 3, "limit": 2}).json()
    assert len(capped["nodes"]) == 2 and capped["truncated"] is True
    several = client.get(
        "/api/graph", params=[("entity", "e:photo"), ("entity", "e:houston"), ("entity", "e:nope"), ("hops", "0")]
    ).json()
    assert {n["id"] for n in several["nodes"]} == {"e:photo", "e:houston"} and several["edges"] == []
    assert several["missing"] == ["e:nope"]
    assert client.get("/api/graph", params={"entity": "e:nope"}).status_code == 404
    assert client.get("/api/graph").status_code == 422


def test_entity_search(client):
    found = client.get("/api/entities", params={"q": "rice"}).json()["entities"]
    assert found[0]["id"] == "e:rice"  # alias "Rice" matches exactly
    hubs = client.get("/api/entities", params={"limit": 2}).json()["entities"]
    assert [e["id"] for e in hubs] == ["e:trust", "e:museum"]  # most connected first (3, 2 links)
    assert client.get("/api/entities", params={"q": "zzz"}).json()["entities"] == []


def test_graph_routes_say_when_there_is_no_graph(client, workspace):
    workspace.store.delete_records("kg4vd.entity")
    workspace.store.delete_records("kg4vd.relation")
    response = client.get("/api/graph", params={"entity": "e:rice"})
    assert response.status_code == 404 and "build" in response.json()["detail"]
    assert client.get("/api/entities").status_code == 404
    entities = client.get(page_url(1, "/entities")).json()
    assert entities["entities"] == [] and "build" in entities["note"]


def test_hvm_graph_is_browsed_through_the_same_routes(client, workspace):
    write_hvm_graph(workspace)
    graph = client.get("/api/graph", params={"entity": HVM_RICE, "hops": 1, "method": "hvm"}).json()
    assert graph["method"] == "hvm" and {n["id"] for n in graph["nodes"]} == {HVM_RICE, HVM_TRUST}
    [edge] = graph["edges"]
    assert (edge["source"], edge["target"], edge["label"]) == (HVM_TRUST, HVM_RICE, "part_of")
    trust = next(n for n in graph["nodes"] if n["id"] == HVM_TRUST)
    assert trust["type"] == "organization" and trust["pages"] == [
        {"doc_id": DOC_ID, "page": 1, "component_ids": ["P1", "TI1"]}
    ]
    found = client.get("/api/entities", params={"q": "rice", "method": "hvm"}).json()
    assert [e["id"] for e in found["entities"]] == [HVM_RICE]
    on_page = client.get(page_url(1, "/entities"), params={"method": "hvm"}).json()["entities"]
    assert {e["id"] for e in on_page} == {HVM_TRUST, HVM_RICE}
    assert client.get(page_url(2, "/entities"), params={"method": "hvm"}).json()["entities"] == []
    # without a method the graph is the first method's with one: KG4VD's
    assert client.get("/api/entities", params={"q": "rice"}).json()["entities"][0]["id"] == "e:rice"


def test_graph_routes_refuse_a_method_without_a_graph(client):
    for url, params in (("/api/graph", {"entity": "e:rice"}), ("/api/entities", {}), (page_url(1, "/entities"), {})):
        response = client.get(url, params={**params, "method": "bm25"})
        assert response.status_code == 400, url
        assert "no entity graph" in response.json()["detail"] and "kg4vd" in response.json()["detail"]
        assert client.get(url, params={**params, "method": "nope"}).status_code == 400
    flags = {m["name"]: m["graph"] for m in client.get("/api/methods").json()}
    assert flags["kg4vd"] and flags["hvm"] and not flags["bm25"]


# ---------------------------------------------------------------------- methods, build, ask
def test_methods_list_labels_and_kg4vd_modes(client):
    methods = {m["name"]: m for m in client.get("/api/methods").json()}
    assert methods["bm25"]["label"] == "BM25 (baseline)" and methods["bm25"]["modes"] == []
    if "kg4vd" in methods:
        assert methods["kg4vd"]["modes"] == ["auto", "local", "multi_hop", "document"]
    # which methods answer from chosen documents (the ask view offers the chooser for those)
    assert methods["bm25"]["scoped"] is False and methods["hybrid"]["scoped"] is False
    assert all(methods[m]["scoped"] for m in ("kg4vd", "hvm") if m in methods)


def test_build_runs_in_background_with_progress_and_status(client):
    started = client.post("/api/build", json={"method": "bm25"})
    assert started.status_code == 202
    job = wait_job(client, started.json()["id"])
    assert job["state"] == "done", job
    assert job["kind"] == "build" and job["method"] == "bm25"
    assert job["result"]["pages_built"] == 2 and job["finished_at"]
    assert job["usage"]["calls"] == 0  # offline: no model calls
    status = client.get("/api/build").json()
    assert status["busy"] is False
    assert status["methods"]["bm25"]["built_pages"] == 2
    assert status["methods"]["bm25"]["job"]["id"] == job["id"]
    assert [j["id"] for j in client.get("/api/jobs").json()] == [job["id"]]
    assert client.get("/api/jobs/build-999").status_code == 404


def test_build_unknown_method_is_400(client):
    response = client.post("/api/build", json={"method": "nope"})
    assert response.status_code == 400 and "bm25" in response.json()["detail"]


def test_ask_answers_with_citations_to_page_regions(client):
    wait_job(client, client.post("/api/build", json={"method": "bm25"}).json()["id"])
    answer = client.post(
        "/api/ask", json={"question": "Which university is the Harbour Trust part of?", "method": "bm25"}
    ).json()
    assert answer["method"] == "bm25" and "Rice University" in answer["text"]
    first = answer["citations"][0]
    assert first["number"] == 1 and first["doc_id"] == DOC_ID and first["page"] == 1
    assert "P1" in first["component_ids"]
    assert {"x0": 72.0, "y0": 120.0, "x1": 540.0, "y1": 220.0} in first["bboxes"]
    assert answer["evidence"]["chunks"] and answer["evidence"]["pages"][0]["doc_id"] == DOC_ID


def test_ask_validation(client):
    assert client.post("/api/ask", json={"question": "x", "method": "nope"}).status_code == 400
    assert client.post("/api/ask", json={"question": "", "method": "bm25"}).status_code == 422
    assert client.post("/api/ask", json={"question": "   ", "method": "bm25"}).status_code == 400
    bad_mode = client.post("/api/ask", json={"question": "x", "method": "bm25", "mode": "local"})
    assert bad_mode.status_code == 400 and "no mode" in bad_mode.json()["detail"]
    whole = client.post("/api/ask", json={"question": "x", "method": "bm25", "documents": [DOC_ID]})
    assert whole.status_code == 400 and "cannot answer from chosen documents" in whole.json()["detail"]
    unknown = client.post("/api/ask", json={"question": "x", "method": "kg4vd", "documents": ["nope.pdf"]})
    assert unknown.status_code == 400 and "no document 'nope.pdf'" in unknown.json()["detail"]


def test_ask_kg4vd_before_its_build_is_409(client):
    if "kg4vd" not in {m["name"] for m in client.get("/api/methods").json()}:
        pytest.skip("the kg4vd method is not registered in this build")
    response = client.post("/api/ask", json={"question": "Who runs the museum?", "method": "kg4vd", "mode": "local"})
    assert response.status_code == 409 and "build" in response.json()["detail"]
    bad_mode = client.post("/api/ask", json={"question": "x", "method": "kg4vd", "mode": "global"})
    assert bad_mode.status_code == 400


def test_openapi_documents_every_route(client):
    paths = client.get("/openapi.json").json()["paths"]
    expected = {
        "/api/documents": {"get"},
        "/api/documents/{doc_id}": {"get", "delete"},
        "/api/upload": {"post"},
        "/api/documents/{doc_id}/metadata": {"patch"},
        "/api/methods": {"get"},
        "/api/build": {"get", "post"},
        "/api/jobs": {"get"},
        "/api/jobs/{job_id}": {"get"},
        "/api/ask": {"post"},
        "/api/documents/{doc_id}/pages/{number}": {"get"},
        "/api/documents/{doc_id}/pages/{number}/image": {"get"},
        "/api/documents/{doc_id}/pages/{number}/marks": {"get"},
        "/api/documents/{doc_id}/pages/{number}/highlight": {"get"},
        "/api/documents/{doc_id}/pages/{number}/components/{component_id}/crop": {"get"},
        "/api/documents/{doc_id}/pages/{number}/entities": {"get"},
        "/api/graph": {"get"},
        "/api/entities": {"get"},
        "/login": {"get", "post"},
    }
    for path, methods in expected.items():
        assert path in paths, path
        assert methods <= set(paths[path]), path
    assert all(p.startswith("/api/") or p == "/login" for p in paths)
    upload = paths["/api/upload"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    assert {"413", "415"} <= set(upload["responses"])


def test_live_progress_of_a_running_job_and_delete_waits_for_it(client):
    """What the page polls while a build runs: pages done/total, stats, ETA; removing a
    document meanwhile is refused."""
    gate, reported = threading.Event(), threading.Event()

    def slow_build(progress):
        progress.start(4, "extracting pages")
        progress.advance(1, rounds=2, calls=3, tokens=900)
        reported.set()
        gate.wait(10)
        progress.advance(3)
        return {"pages_built": 4}

    jobs = client.app.state.docgraph.jobs
    job, _ = jobs.submit("build", "build:slow", "build slow", slow_build, method="slow")
    assert reported.wait(10)
    live = client.get(f"/api/jobs/{job.id}").json()
    assert live["state"] == "running" and client.get("/api/build").json()["busy"] is True
    progress = live["progress"]
    assert (progress["done"], progress["total"], progress["description"]) == (1, 4, "extracting pages")
    assert progress["stats"] == {"rounds": 2, "calls": 3, "tokens": 900} and "eta_s" in progress
    refused = client.delete(f"/api/documents/{DOC_ID}")
    assert refused.status_code == 409 and "running" in refused.json()["detail"]
    gate.set()
    done = wait_job(client, job.id)
    assert done["state"] == "done" and done["progress"]["done"] == 4 and done["progress"]["eta_s"] == 0.0


def test_upload_of_a_broken_file_fails_the_job_with_the_reason(client):
    response = client.post(
        "/api/upload",
        params={"wait": "true"},
        files=[("files", ("broken.pdf", b"%PDF-1.7\nthis is not a pdf", "application/pdf"))],
    )
    job = response.json()
    assert job["state"] == "failed" and "broken.pdf" in job["error"]
    assert [d["id"] for d in client.get("/api/documents").json()["documents"]] == [DOC_ID]


def test_docgraph_errors_map_to_http_statuses():
    from docgraph.errors import (
        ConfigError,
        DocgraphError,
        InputError,
        ModelError,
        ModelOutputError,
        NotBuiltError,
        StoreError,
    )
    from docgraph.server.app import error_status

    assert [
        error_status(e)
        for e in (
            NotBuiltError("x"),
            InputError("x"),
            ConfigError("x"),
            ModelError("x"),
            ModelOutputError("x"),
            StoreError("x"),
            DocgraphError("x"),
        )
    ] == [409, 400, 400, 502, 502, 500, 400]
