"""One rule for every method (issue 16): an unbuilt method says so and names the command that
builds it (API, CLI, web); an unknown per-call option is one ``InputError`` naming the valid
ones; ``[baselines]`` in docgraph.toml sets the baselines. Run on the real OpenStax excerpt."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from docgraph import Workspace
from docgraph.cli import main
from docgraph.config import load_settings
from docgraph.errors import InputError, NotBuiltError
from docgraph.methods.base import available_methods
from docgraph.server import create_app

QUESTION = "Which empire spanned much of Eurasia?"
INDEXED = [m for m in available_methods() if m != "nodocs"]


def offline(ws_path) -> Workspace:
    return Workspace(ws_path, settings=load_settings(ws_path, environ={}))


def test_every_unbuilt_method_names_the_build_command(openstax_ws, capsys):
    with offline(openstax_ws) as ws:
        for method in INDEXED:
            for call in (ws.retrieve, ws.ask):
                with pytest.raises(NotBuiltError, match=f"not built yet; run: docgraph build --method {method}$"):
                    call(QUESTION, method=method)
        client = TestClient(create_app(ws))
        reply = client.post("/api/ask", json={"question": QUESTION, "method": "hvm"})
        assert reply.status_code == 409 and "docgraph build --method hvm" in reply.text
    for method in ("hvm", "bm25"):
        assert main(["ask", QUESTION, "-m", method, "-w", str(openstax_ws)]) == 1
        assert f"run: docgraph build --method {method}" in capsys.readouterr().err


def test_an_empty_workspace_says_to_add_documents(tmp_path):
    with offline(tmp_path / "empty") as ws:
        with pytest.raises(NotBuiltError, match="no documents yet; add some with `docgraph add FILE...`"):
            ws.retrieve(QUESTION, method="hvm")


def test_unknown_options_are_one_error_naming_the_valid_ones(openstax_ws):
    with offline(openstax_ws) as ws:
        for method in available_methods():
            with pytest.raises(InputError, match=f"^{method} does not take the option.s. bogus; it takes "):
                ws.retrieve(QUESTION, method=method, bogus=1)
        with pytest.raises(InputError, match="bm25 does not take the option.s. fact_top_k; it takes top_k, top_pages$"):
            ws.retrieve(QUESTION, method="bm25", fact_top_k=2)
        with pytest.raises(InputError, match="invalid bm25 option"):
            ws.retrieve(QUESTION, method="bm25", top_k=0)


def test_top_pages_works_for_every_method_from_the_cli(openstax_ws, capsys):
    for method in ("hvm", "bm25"):
        assert main(["build", "-m", method, "-w", str(openstax_ws)]) == 0
        capsys.readouterr()
        assert main(["ask", QUESTION, "-m", method, "--top-pages", "2", "--json", "-w", str(openstax_ws)]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert 1 <= len(answer["evidence_pages"]) <= 2


def test_baselines_section_of_docgraph_toml_is_read(openstax_ws):
    (openstax_ws / "docgraph.toml").write_text(
        "[baselines]\nchunk_words = 40\ntop_k = 3\n\n[baselines.hipporag]\nfact_top_k = 2\n"
    )
    with offline(openstax_ws) as ws:
        assert ws.settings.baselines.chunk_words == 40 and ws.settings.baselines.hipporag.fact_top_k == 2
        ws.build("bm25")
        chunks = ws.store.count_records("bm25.chunk")
        broad = "What does the chapter say about Asia, Europe and the Mongols in the world?"
        assert len(ws.retrieve(broad, method="bm25").chunks) == 3
        assert len(ws.retrieve(broad, method="bm25", top_k=5).chunks) == 5
    with Workspace(openstax_ws, settings=load_settings(None, environ={})) as ws:  # defaults: 160 words
        ws.build("bm25")
        assert ws.store.count_records("bm25.chunk") < chunks  # the setting changed what was built
