"""``hvm.on_model_error`` (issue 19): a chunk whose model replies stay unusable after the
repair and re-asks is either extracted offline and marked so ("offline", the default — as
HVM always did, now marked "offline-fallback" and counted) or stops its document until the
next build ("retry-later") — through the real client code path against the scripted stub
server, over pages 4-5 of the shared excerpt ("About the Authors").
"""

from __future__ import annotations

import json
import re

import pymupdf
import pytest

from docgraph import Workspace
from docgraph.boundary import strip_fences
from docgraph.cli import main
from docgraph.methods.hvm.state import NS_CHUNK, NS_CONFLICT, NS_EXTRACT
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub

BAD = "Dr. Julie C. Tatlock chairs"  # the chunk whose extraction replies are never JSON
BROKEN = "sorry, I cannot produce JSON <end_of_turn>"
# chunk text prefix -> the relations the scripted extractor states: two affiliations to check
FACTS = {
    "Ryan J. Lynch, Columbus State University": ("affiliated_with", "Columbus State University"),
    "Dr. Ryan J. Lynch is Associate Professor": ("works_at", "Columbus State University"),
}


def _chunk_text(prompt: str) -> str:
    match = re.search(r"Chunk:\n(.*?)\n\n", prompt, re.S)
    return match.group(1) if match else ""


def script(req):
    """``BAD``'s extraction replies are never JSON; two chunks state Lynch's affiliation (a
    candidate conflict group for the detector, whose replies are never JSON either)."""
    if req.stage == "hvm.extract":
        if "from a picture" in strip_fences(req.prompt):
            return {"image": {"name": "authors photo", "type": "photo", "description": ""}, "entities": []}
        text = _chunk_text(strip_fences(req.prompt))
        if text.startswith(BAD):
            return BROKEN
        fact = next((f for prefix, f in FACTS.items() if text.startswith(prefix)), None)
        if fact is None:
            return {"entities": [], "relations": []}
        if "You extract relations" in strip_fences(req.prompt):
            return {
                "relations": [
                    {
                        "head": "Ryan J. Lynch",
                        "relation": fact[0],
                        "tail": fact[1],
                        "head_type": "person",
                        "tail_type": "organization",
                    }
                ]
            }
        return {"entities": [{"name": "Ryan J. Lynch", "type": "person"}, {"name": fact[1], "type": "organization"}]}
    if req.stage in ("hvm.detect", "hvm.resolve"):
        return BROKEN
    raise AssertionError(f"unexpected stage {req.stage}")


@pytest.fixture(scope="module")
def authors_pdf(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("hvm-fallback")
    source = pymupdf.open(shared_data / "documents" / "openstax_world_history_v1_excerpt.pdf")
    pdf = pymupdf.open()
    pdf.insert_pdf(source, from_page=3, to_page=4)
    pdf.save(root / "authors.pdf")
    return root / "authors.pdf"


@pytest.fixture
def stub():
    with OpenAIStub(default_reply="{}") as server:
        server.reply(script)
        yield server


def _settings(stub, **hvm):
    return stub_settings(stub, roles=("build",), embeddings=True, overrides={"hvm": hvm} if hvm else None)


def _complete(ws) -> bool:
    status = ws.status()["hvm"]
    return status["built_documents"] == status["total_documents"] == 1


def _bad_chunk(ws, doc_id) -> dict:
    return next(
        v["chunk"] for _, v in ws.store.iter_records(NS_CHUNK, doc_id=doc_id) if v["chunk"]["text"].startswith(BAD)
    )


def test_offline_extracts_the_chunk_offline_marks_and_counts_it(stub, authors_pdf, tmp_path, capsys):
    with Workspace(tmp_path / "ws", settings=_settings(stub)) as ws:
        assert ws.settings.hvm.on_model_error == "offline"  # the default: what HVM always did
        doc = ws.add(authors_pdf)[0]
        report = ws.build("hvm")
        assert report.stats["failed_documents"] == 0 and "failures" not in report.stats
        assert report.stats["offline_fallback_chunks"] == 1 and report.pages_built == 2
        assert report.stats["fallbacks"] >= 1  # the detector's replies: the offline conflict rules decided
        assert _complete(ws)
        bad = _bad_chunk(ws, doc.id)
        extractions = dict(ws.store.iter_records(NS_EXTRACT, doc_id=doc.id))
        marked = extractions.pop(bad["id"])
        assert marked["strategy"] == "offline-fallback" and marked["entities"]  # the offline NLP found entities
        assert any("offline extraction used instead" in n and "JSON" in n for n in marked["notes"])
        assert {e["strategy"] for e in extractions.values()} == {"model:stub-model"}
        # the model's attempts at the chunk were made (with a re-ask) before it fell back
        assert sum(_chunk_text(strip_fences(r.prompt)).startswith(BAD) for r in stub.seen(stage="hvm.extract")) >= 2
        log = [e for _, e in ws.store.iter_records(NS_CONFLICT, doc_id=doc.id)]
        root = ws.root

    assert main(["--workspace", str(root), "graph", "stats", "--method", "hvm", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["chunks_by_strategy"] == {"model:stub-model": len(extractions), "offline-fallback": 1}
    assert stats["offline_fallback_chunks"] == [f"{doc.id} page {bad['page']} chunk {bad['id']}"]
    assert stats["complete_documents"] == 1 and stats["usage"]["hvm.extract"]["calls"] > 0
    assert stats["conflicts_offline_fallback"] == sum(e["note"].startswith("model reply invalid") for e in log)
    assert main(["--workspace", str(root), "graph", "stats", "--method", "hvm"]) == 0
    text = capsys.readouterr().out
    assert "offline-fallback" in text and f"chunk {bad['id']}" in text and "hvm.extract" in text

    # changing the setting redoes nothing and calls no model
    calls = stub.count("/chat/completions")
    with Workspace(root, settings=_settings(stub, on_model_error="retry-later")) as ws:
        report = ws.build("hvm")
        assert (report.pages_built, report.pages_skipped) == (0, 2) and "rebuilt" not in report.stats
    assert stub.count("/chat/completions") == calls


def test_retry_later_stops_the_document_at_the_chunk_and_resumes_there(stub, authors_pdf, tmp_path):
    settings = _settings(stub, on_model_error="retry-later", conflict_resolution=False)
    with Workspace(tmp_path / "ws", settings=settings) as ws:
        doc = ws.add(authors_pdf)[0]
        report = ws.build("hvm")
        bad = _bad_chunk(ws, doc.id)
        assert report.stats["failed_documents"] == 1 and report.stats["offline_fallback_chunks"] == 0
        assert f"chunk {bad['id']}" in report.stats["failures"][0] and "unusable" in report.stats["failures"][0]
        assert not _complete(ws)
        assert bad["id"] not in dict(ws.store.iter_records(NS_EXTRACT, doc_id=doc.id))
        stored = ws.store.count_records(NS_EXTRACT)

        stub.reset()  # the model now answers for the chunk
        stub.reply(
            lambda req: (
                {"entities": [{"name": "Julie C. Tatlock", "type": "person"}], "relations": []}
                if _chunk_text(strip_fences(req.prompt)).startswith(BAD)
                else script(req)
            )
        )
        again = ws.build("hvm")  # the document resumes at the chunk
        assert again.stats["failed_documents"] == 0 and _complete(ws)
        extractions = dict(ws.store.iter_records(NS_EXTRACT, doc_id=doc.id))
        assert extractions[bad["id"]]["strategy"] == "model:stub-model"
        assert {e["strategy"] for e in extractions.values()} == {"model:stub-model"}
        assert ws.store.count_records(NS_EXTRACT) >= stored + 1


def test_retry_later_stops_the_document_when_the_conflict_check_stays_unusable(stub, authors_pdf, tmp_path):
    with Workspace(tmp_path / "ws", settings=_settings(stub, on_model_error="retry-later")) as ws:
        ws.add(authors_pdf)
        report = ws.build("hvm")
    assert report.stats["failed_documents"] == 1 and report.stats["fallbacks"] == 0
    failure = report.stats["failures"][0]
    assert "hvm.detect" in failure or "JSON" in failure, failure
