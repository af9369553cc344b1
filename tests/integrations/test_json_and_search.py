"""``docgraph search`` and ``docgraph ask --json``: the JSON validates against the schemas the
docs show (docs/schemas), and regions point at real boxes on the pages they name."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from docgraph import Workspace
from docgraph.cli import main
from docgraph.config import load_settings
from docgraph.results import SCHEMAS

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "schemas"
QUESTION = "Under what license is this textbook published?"


def schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    for name in [n for n in __import__("os").environ if n.startswith("DOCGRAPH_")]:
        monkeypatch.delenv(name)


def test_documented_schemas_are_the_models():
    for name, model in SCHEMAS.items():
        assert schema(name) == model.model_json_schema(), (
            f"docs/schemas/{name}.schema.json is stale; regenerate: python -m docgraph.results docs/schemas"
        )


def test_search_json_pages_and_regions(example_ws, capsys):
    assert main(["search", "Creative Commons license", "--json", "--top-pages", "2", "-w", str(example_ws)]) == 0
    out = json.loads(capsys.readouterr().out)
    jsonschema.validate(out, schema("search"))
    assert out["method"] == "kg4vd" and 1 <= len(out["pages"]) <= 2
    top = out["pages"][0]
    assert top["page"] == 2, "the licence paragraph is on page 2 of the excerpt"
    assert Path(top["image"]).is_file()
    assert "Creative Commons" in top["regions"][0]["text"]
    with Workspace(example_ws, settings=load_settings(example_ws, environ={})) as ws:
        page = ws.page(top["document_id"], top["page"])
        boxes = {c.id: c.bbox.model_dump() for c in page.components}
    for region in top["regions"]:
        assert boxes[region["component_id"]] == region["bbox"]
        assert 0.0 <= region["score"] <= 1.0
    scores = [r["score"] for r in top["regions"]]
    assert scores == sorted(scores, reverse=True)


def test_search_readable_filtered_and_errors(example_ws, capsys):
    assert main(["search", "license", "-m", "hybrid", "--top-pages", "1", "-w", str(example_ws)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. ") and " p.2 " in out and "image: " in out and "2. " not in out
    assert (
        main(
            [
                "search",
                "license",
                "--doc",
                "world_history_excerpt.pdf",
                "--top-pages",
                "3",
                "--json",
                "-w",
                str(example_ws),
            ]
        )
        == 0
    )
    assert len(json.loads(capsys.readouterr().out)["pages"]) == 3
    assert main(["search", "license", "--doc", "nosuch.pdf", "-w", str(example_ws)]) == 1
    assert "no document 'nosuch.pdf'" in capsys.readouterr().err
    assert main(["search", "license", "-m", "hvm", "-w", str(example_ws)]) == 1
    assert "not built yet; run: docgraph build --method hvm" in capsys.readouterr().err


def test_search_only_the_named_documents(example_ws, shared_data):
    extra = shared_data / "documents" / "acciona_sustainability_report_2020_p1.pdf"  # one page
    with Workspace(example_ws, settings=load_settings(example_ws, environ={})) as ws:
        example = ws.documents()[0].id
        other = ws.add([extra])[0].id
        ws.build("hybrid")
        everything = ws.search("history", method="hybrid", top_pages=6)
        assert {p.document_id for p in everything.pages} == {example, other}
        only = ws.search("history", method="hybrid", top_pages=4, documents=["world_history_excerpt.pdf"])
        assert [p.document_id for p in only.pages] == [example] * 4
        assert [p.document_id for p in ws.search("history", method="hybrid", documents=[other]).pages] == [other]


def test_ask_json_is_the_documented_object(example_ws, capsys):
    assert main(["ask", QUESTION, "--json", "-w", str(example_ws)]) == 0
    out = json.loads(capsys.readouterr().out)
    jsonschema.validate(out, schema("ask"))
    assert out["model_used"] is False and out["method"] == "kg4vd"
    assert "Creative Commons" in out["answer"] and out["citations"][0]["page"] == 2
    assert out["evidence_pages"] and all(seconds >= 0 for seconds in out["timings"].values())
    assert out["verify"] == "mark" and out["claims"], "the claim check travels with the JSON answer"
    assert all(claim["status"] == "supported" for claim in out["claims"]), "quotes check as supported"
    assert main(["ask", QUESTION, "--full-json", "-m", "hybrid", "-w", str(example_ws)]) == 0
    full = json.loads(capsys.readouterr().out)
    assert "evidence" in full and "chunks" in full["evidence"]
