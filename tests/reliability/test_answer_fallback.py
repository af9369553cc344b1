"""The answer model failing after its retries does not fail ``ask`` (issue 15 item 2).

Every method's answer path (``methods.answers.answer_fallback``) gives the offline, extractive
answer over the same evidence instead, marked: ``model_used`` False, a warning naming
the stage and the error, the failed call and ``fallbacks=1`` in the answer's usage and in
``docgraph usage``. The faults come from the loopback ``OpenAIStub`` (an endpoint that
keeps answering HTTP 500, replies that stay empty) or from a port on 127.0.0.1 that
nothing listens on; the CLI prints the warning and the web API returns it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from docgraph import Workspace
from docgraph.cli import main
from docgraph.config import CONFIG_FILE
from docgraph.methods.answers.extractive import FALLBACK_NOTICE, OFFLINE_NOTICE
from docgraph.methods.baselines.nodocs import FAILED_TEXT
from docgraph.server import create_app
from docgraph.testing.answer_fallback import answer_fallback_cases
from docgraph.testing.files import checkpointed
from docgraph.testing.fixtures import stub_settings
from docgraph.testing.openai_stub import OpenAIStub
from docgraph.testing.ports import free_port

METHODS = ("kg4vd", "hvm", "dense", "bm25", "hybrid", "hipporag", "pages", "nodocs")
QUESTION = "Which university is Ryan J. Lynch at?"


@pytest.fixture(scope="module")
def _built(_openstax_template: Path, tmp_path_factory) -> Path:
    """The OpenStax excerpt with every method built offline."""
    root = Path(shutil.copytree(_openstax_template, tmp_path_factory.mktemp("fallback") / "ws"))
    with Workspace(root) as ws:
        for method in METHODS:
            ws.build(method)
    return checkpointed(root)


@pytest.fixture()
def built(_built: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(_built, tmp_path / "ws"))


def answer_settings(stub: OpenAIStub):
    """Only the answer role on the stub (the builds were offline): one retry, fast."""
    return stub_settings(stub, roles=("answer",), timeout_s=1.0, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02)


def fallback_stage(answer) -> str:
    [stage] = [name for name, used in answer.usage.items() if used.fallbacks]
    return stage


def assert_fallback(answer, method: str, error: str) -> str:
    assert not answer.model_used
    [warning] = answer.warnings
    assert warning.startswith("the answer model failed at ") and error in warning, warning
    assert "offline (extractive) answer over the same evidence" in warning
    stage = fallback_stage(answer)
    assert stage.startswith(f"{method}.") and stage in warning
    assert answer.usage[stage].failures == 1 and answer.usage[stage].fallbacks == 1
    if method == "nodocs":
        assert answer.text == FAILED_TEXT
    else:
        assert answer.text.startswith(FALLBACK_NOTICE) and answer.citations
    return stage


@pytest.mark.parametrize("method", METHODS)
def test_an_answer_endpoint_that_stays_down_gives_the_offline_answer_marked(method, built):
    with Workspace(built) as ws:
        offline = ws.ask(QUESTION, method=method)
    with OpenAIStub(default_reply="unused") as stub, Workspace(built, settings=answer_settings(stub)) as ws:
        stub.fault("500", times=10**6)
        answer = ws.ask(QUESTION, method=method)
        usage = ws.usage()
    stage = assert_fallback(answer, method, "HTTP 500")
    assert answer.usage[stage].retries == 1 and answer.usage[stage].calls == 0
    assert (usage[stage].fallbacks, usage[stage].failures) == (1, 1)
    # hipporag's fact filter (a model call too) falls back to another order; nodocs has no evidence
    if method not in ("hipporag", "nodocs"):
        assert answer.text == offline.text.replace(OFFLINE_NOTICE, FALLBACK_NOTICE)
        assert answer.citations == offline.citations
        assert [p.page for p in answer.evidence.pages] == [p.page for p in offline.evidence.pages]


@pytest.mark.parametrize("method", ["kg4vd", "hvm", "dense"])
def test_replies_that_stay_unusable_give_the_offline_answer_and_keep_earlier_usage(method, built):
    with OpenAIStub(default_reply="A good answer [1].") as stub, Workspace(built, settings=answer_settings(stub)) as ws:
        failing = "kg4vd.answer_final" if method == "kg4vd" else f"{method}.answer"
        stub.reply("", stage=failing)  # empty, re-asked, empty again: unusable
        answer = ws.ask(QUESTION, method=method)
    stage = assert_fallback(answer, method, "empty reply")
    assert stage == failing and answer.usage[stage].repairs == 1
    if method == "kg4vd":  # the preliminary answer came back before the final one failed
        assert answer.usage["kg4vd.answer_preliminary"].calls == 1


def test_the_cli_prints_the_fallback_warning_and_docgraph_usage_counts_it(built, capsys):
    (built / CONFIG_FILE).write_text(
        f'[models.answer]\nbase_url = "http://127.0.0.1:{free_port()}/v1"\n'
        'model = "nowhere"\nmax_retries = 1\nbackoff_base_s = 0.01\n',
        encoding="utf-8",
    )
    assert main(["--workspace", str(built), "ask", QUESTION, "--method", "dense"]) == 0
    out = capsys.readouterr().out
    assert FALLBACK_NOTICE in out and "model failed, offline fallback" in out
    assert "warning: the answer model failed at dense.answer" in out and "127.0.0.1" in out
    assert main(["--workspace", str(built), "usage"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    [row] = [r for r in rows if r.startswith("dense.answer")]
    assert header.split()[-1] == "fallbk" and row.split()[-4:] == ["1", "1", "0", "1"]


def test_the_web_api_returns_the_fallback_answer_with_its_warning(built):
    with OpenAIStub(default_reply="unused") as stub, Workspace(built, settings=answer_settings(stub)) as ws:
        stub.fault("500", times=10**6)
        with TestClient(create_app(ws)) as client:
            reply = client.post("/api/ask", json={"question": QUESTION, "method": "hvm"})
    assert reply.status_code == 200
    body = reply.json()
    assert body["model_used"] is False and body["citations"] and body["text"].startswith(FALLBACK_NOTICE)
    [warning] = body["warnings"]
    assert "hvm.answer" in warning and "HTTP 500" in warning
    assert body["usage"]["hvm.answer"]["fallbacks"] == 1


def test_the_matrix_cases_answer_mark_and_count_every_fallback(_built, tmp_path):
    """``benchmarks/faults.py``'s section, for two methods: 500s, a refused connection, empty replies."""
    results = answer_fallback_cases(_built, tmp_path, methods=("dense", "nodocs"), questions=(QUESTION,))
    assert len(results) == 3 and all(r.survived for r in results), [r.to_dict() for r in results]
    assert [(r.asked, r.counted, r.cited) for r in results] == [(2, 2, 1)] * 3
