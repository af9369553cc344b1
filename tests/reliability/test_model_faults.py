"""Model faults through the loopback OpenAI-compatible stub (issue 15 item 2).

Each kind of fault on one call is retried or repaired and counted in the usage; a call that
keeps failing is counted as a failure with its retries. Builds through a scripted model:
an endpoint down for one chunk (HVM), one document (HippoRAG) or the cross-page judge
(KG4VD) costs that part only — named, left for the next build, which resumes it to the
result of a fault-free build — and 30 % random faults of every kind leave a complete build,
answered questions, every fault in ``docgraph usage`` and the rows of a fault-free build.
``benchmarks/faults.py`` runs the same cases for kg4vd, hvm and hipporag.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from docgraph import Workspace
from docgraph.cli import main
from docgraph.errors import ModelError
from docgraph.models.base import user
from docgraph.store.integrity import check_workspace
from docgraph.testing.faults import canonical_dump, compare_dumps
from docgraph.testing.fixtures import make_hub, stub_settings
from docgraph.testing.model_faults import fault_settings, model_fault_case
from docgraph.testing.openai_stub import OpenAIStub
from docgraph.testing.scripted_model import scripted_reply
from docgraph.testing.stub_rules import ENDPOINT_FAULTS, MODEL_FAULTS

OPENSTAX_ID = "040fed959f81"
DOWN = "Dr. Ryan J. Lynch is Associate Professor"  # chunk P6 of page 4 of the OpenStax excerpt


class City(BaseModel):
    name: str
    country: str


@pytest.fixture
def city_stub():
    with OpenAIStub(default_reply={"name": "Lisbon", "country": "Portugal"}, hang_s=0.6) as stub:
        yield stub


def quick_hub(stub: OpenAIStub, root: Path, retries: int = 2):
    return make_hub(
        stub_settings(stub, timeout_s=0.3, max_retries=retries, backoff_base_s=0.01, backoff_max_s=0.05), root
    )


@pytest.mark.parametrize("kind", MODEL_FAULTS)
def test_each_fault_on_a_structured_call_is_retried_or_repaired_and_counted(kind, city_stub, tmp_path):
    hub = quick_hub(city_stub, tmp_path / "ws")
    city_stub.fault(kind, times=1, retry_after=0.05)
    result = hub.chat("build").complete([user("capital of Portugal?")], stage="city", schema=City)
    assert result.parsed == City(name="Lisbon", country="Portugal")
    used = hub.store.usage()["city"]
    if kind in ENDPOINT_FAULTS:  # sent again; only the answered request is a call
        assert (used.retries, used.repairs, used.failures, used.calls) == (1, 0, 0, 1)
    elif kind == "broken":  # repaired locally, no second request
        assert (used.retries, used.repairs, used.failures, used.calls) == (0, 1, 0, 1)
    else:  # re-asked
        assert (used.retries, used.repairs, used.failures, used.calls) == (0, 1, 0, 2)
    assert city_stub.faults_seen() == {kind: 1}


@pytest.mark.parametrize("kind", ["empty", "truncated"])
def test_an_empty_or_cut_free_text_reply_is_re_asked(kind, tmp_path):
    with OpenAIStub(default_reply="Lisbon is the capital of Portugal.") as stub:
        hub = quick_hub(stub, tmp_path / "ws")
        stub.fault(kind, times=1)
        result = hub.chat("answer").complete([user("capital of Portugal?")], stage="say", max_tokens=40)
        assert result.text == "Lisbon is the capital of Portugal." and result.finish_reason == "stop"
        bodies = [r.body for r in stub.seen("/chat/completions")]
    assert hub.store.usage()["say"].repairs == 1 and len(bodies) == 2
    if kind == "truncated":
        assert (bodies[0]["max_tokens"], bodies[1]["max_tokens"]) == (40, 80)
    else:
        assert "was empty" in bodies[1]["messages"][-1]["content"]


def test_a_reply_that_stays_empty_is_an_error_not_an_empty_answer(tmp_path):
    with OpenAIStub(default_reply="") as stub:
        hub = quick_hub(stub, tmp_path / "ws")
        with pytest.raises(ModelError, match="empty reply 2 time"):
            hub.chat("answer").complete([user("capital of Portugal?")], stage="say")
    used = hub.store.usage()["say"]
    assert (used.calls, used.repairs, used.failures) == (2, 1, 1)


def test_a_call_that_keeps_failing_is_one_failure_with_its_retries_in_docgraph_usage(city_stub, tmp_path, capsys):
    hub = quick_hub(city_stub, tmp_path / "ws", retries=3)
    city_stub.fault("500", times=10)
    with pytest.raises(ModelError, match="failed after 4 attempt"):
        hub.chat("build").complete([user("capital?")], stage="city", schema=City)
    used = hub.store.usage()["city"]
    assert (used.calls, used.retries, used.failures) == (0, 3, 1) and used.seconds > 0
    hub.store.close()
    assert main(["--workspace", str(tmp_path / "ws"), "usage"]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert header.split()[-4:] == ["fail", "retry", "repair", "fallbk"] and row.split()[-4:] == ["1", "3", "0", "0"]


def test_the_stub_draws_a_seeded_share_of_faults_and_json_faults_only_for_json(tmp_path):
    with OpenAIStub(default_reply="plain text") as stub:
        stub.fault_rate(0.3, seed=7)
        hub = quick_hub(stub, tmp_path / "ws", retries=6)
        chat = hub.chat("answer")
        gave_up = 0
        for i in range(40):
            try:
                chat.complete([user(f"question {i}")], stage="text")
            except ModelError:  # two empty replies in a row: a failure, counted below
                gave_up += 1
        seen = stub.faults_seen()
    requests = stub.count("/chat/completions")
    assert 0.15 * requests <= sum(seen.values()) <= 0.45 * requests
    assert not {"schema", "broken"} & set(seen)  # no JSON asked: none to break
    used = hub.store.usage()["text"]
    assert sum(seen.values()) == used.retries + used.repairs + used.failures and used.failures == gave_up


# ----------------------------------------------------------------------------- builds
def assert_survived(result) -> None:
    assert result.examples == [] and result.answer_errors == []
    assert result.complete and result.accounted, result.to_dict()
    assert (result.lost, result.duplicated, result.changed, result.check_problems) == (0, 0, 0, 0)
    assert result.answered == result.answers == 3


@pytest.mark.slow
def test_hvm_isolates_a_chunk_whose_endpoint_is_down_and_the_next_build_resumes_it(_two_docs_template, tmp_path):
    """Before: an endpoint error aborted the whole HVM build. Now the failing chunk's document
    stops before it (what came before is kept), the other document is built, the failure is
    named, and the next build resumes there to the fault-free result."""
    reference = Path(shutil.copytree(_two_docs_template, tmp_path / "reference"))
    with OpenAIStub(default_reply=scripted_reply) as clean, Workspace(reference, settings=fault_settings(clean)) as ws:
        ws.build("hvm")
    root = Path(shutil.copytree(_two_docs_template, tmp_path / "ws"))
    with OpenAIStub(default_reply=scripted_reply) as stub, Workspace(root, settings=fault_settings(stub)) as ws:
        stub.fault("500", times=10**6, when=DOWN)
        first = ws.build("hvm")
        status = ws.status()["hvm"]
        assert first.stats["failed_documents"] == 1
        [failure] = first.stats["failures"]
        assert f"chunk {OPENSTAX_ID}:4:P6 on page 4" in failure and "HTTP 500" in failure
        assert "next build resumes at this chunk" in failure
        assert first.pages_built == 1 + 3  # the Acciona page and OpenStax pages 1-3
        assert (status["built_documents"], status["built_pages"], status["total_pages"]) == (1, 4, 6)
        used = ws.usage()["hvm.extract"]
        assert (stub.faults_seen()["500"], used.retries, used.failures) == (5, 4, 1)  # one call, 5 attempts
        stub.clear_faults()
        second = ws.build("hvm")
        assert second.pages_built == 2 and "failures" not in second.stats
        assert ws.status()["hvm"]["built_pages"] == 6
    diff = compare_dumps(canonical_dump(reference), canonical_dump(root))
    assert diff.equal, diff.examples
    assert check_workspace(root).findings == []


@pytest.mark.slow
def test_hipporag_isolates_a_document_whose_endpoint_is_down(_two_docs_template, tmp_path):
    result = model_fault_case("hipporag", _two_docs_template, tmp_path, outage=DOWN)
    assert_survived(result)
    assert result.builds == 2 and len(result.failed_parts) == 1
    assert OPENSTAX_ID in result.failed_parts[0] and "HTTP 500" in result.failed_parts[0]


@pytest.mark.slow
def test_kg4vd_keeps_its_pages_when_the_cross_page_judge_is_down(_openstax_template, tmp_path):
    result = model_fault_case("kg4vd", _openstax_template, tmp_path, outage=lambda req: req.stage == "kg4vd.judge")
    assert_survived(result)
    assert result.builds == 2 and result.failed_parts[0].startswith("build 1: cross-page connection:")


@pytest.mark.slow
def test_hvm_survives_30_percent_faults_of_every_kind(_openstax_template, tmp_path):
    result = model_fault_case("hvm", _openstax_template, tmp_path, rate=0.3, seed=15)
    assert_survived(result)
    assert result.faults_total >= 20 and len(result.faults) >= 6, result.faults
