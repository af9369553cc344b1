"""Model faults for the reliability matrix (issue 15 item 2): a model-driven build and answers
through the loopback ``OpenAIStub`` serving a scripted model, with a seeded share of the
requests disturbed (timeouts, 429 with Retry-After, 500, connection resets, bodies cut short,
malformed bodies; truncated, schema-violating, empty and broken-but-repairable replies).

``model_fault_case(method, base, work, rate=0.3, seed=15, kinds=MODEL_FAULTS)``:

1. builds ``method`` on a copy of ``base`` against a stub that faults ``rate`` of the
   requests, again and again (as a user reruns ``docgraph build``) until the method's
   status says complete, collecting what each build reported as failed (pages, chunks,
   documents — each named, left for the next build), then asks ``QUESTIONS``;
2. balances the books: every fault the stub served must show in the workspace's usage
   (``docgraph usage``) as a retry, a repair (a broken reply fixed, or a re-ask) or a
   failure — ``faults == retries + repairs + failures`` over the model stages;
3. builds the reference on another copy against a fault-free stub that answers the
   exchanges whose replies stayed unusable in 1 (saved under ``model_errors/``) with
   unusable replies again, so the reference takes the same logged offline fallbacks and
   leaves the same pages for its next build;
4. compares the stored rows with the reference (``faults.compare_dumps``: nothing lost,
   duplicated or changed) and runs ``docgraph check``.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..api import Workspace
from ..config import CONFIG_FILE, Settings
from ..models.chat.structured import ERRORS_DIR
from ..models.hub import ROLES
from ..models.usage import model_stages, total
from ..store.integrity import check_workspace
from .faults import canonical_dump, compare_dumps
from .fixtures import stub_settings
from .openai_stub import OpenAIStub
from .scripted_model import first_message, scripted_reply
from .stub_rules import MODEL_FAULTS, Matcher

QUESTIONS = (
    "Who are the senior contributing authors?",
    "Which university is Ryan J. Lynch at?",
    "What does the book say about the Arab conquests?",
)
TIMEOUT_S = 1.0  # the client's timeout: a "hang" fault outlasts it
HANG_S = 1.6
MAX_RETRIES = 4  # the shipped default
MAX_BUILDS = 5
# The offline fallbacks a method logs in its build report's stats (a reply still unusable after its re-ask).
FALLBACK_STATS = ("notes", "fallbacks", "openie_fallbacks")


@dataclass
class ModelFaultResult:
    case: str
    rate: float
    kinds: list[str] = field(default_factory=list)
    requests: int = 0  # chat requests the stub served in the faulty run
    faults: dict[str, int] = field(default_factory=dict)
    retries: int = 0  # from the workspace's usage (docgraph usage)
    repairs: int = 0
    failures: int = 0
    builds: int = 0  # builds run until the status said complete
    complete: bool = False
    failed_parts: list[str] = field(default_factory=list)  # what builds reported failed (retried next build)
    fallbacks: int = 0  # offline fallbacks the builds logged
    unusable: int = 0  # exchanges whose replies stayed unusable (model_errors/)
    answers: int = 0
    answered: int = 0  # answers with text and at least one citation
    answer_errors: list[str] = field(default_factory=list)
    lost: int = 0
    duplicated: int = 0
    changed: int = 0
    check_problems: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def faults_total(self) -> int:
        return sum(self.faults.values())

    @property
    def accounted(self) -> bool:
        """Every fault served shows in the usage as a retry, a repair or a failure."""
        return self.faults_total == self.retries + self.repairs + self.failures

    @property
    def survived(self) -> bool:
        return (
            self.complete
            and self.accounted
            and self.answered == self.answers
            and not self.lost
            and not self.duplicated
            and not self.changed
            and not self.check_problems
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "faults_total": self.faults_total,
            "accounted": self.accounted,
            "survived": self.survived,
        }


def fault_settings(stub: OpenAIStub) -> Settings:
    """Every chat role on ``stub``: a short timeout, the default retries, fast backoff."""
    return stub_settings(stub, timeout_s=TIMEOUT_S, max_retries=MAX_RETRIES, backoff_base_s=0.02, backoff_max_s=0.2)


def point_at_stub(root: Path, stub: OpenAIStub) -> Path:
    """Write ``root/docgraph.toml`` with every chat role on ``stub`` (as ``fault_settings``),
    for ``docgraph`` commands run in another process (the kill matrix's scripted-model builds)."""
    role = (
        f'base_url = "{stub.url}"\nmodel = "stub-model"\ntimeout_s = {TIMEOUT_S * 5}\n'
        f"max_retries = {MAX_RETRIES}\nbackoff_base_s = 0.02\nbackoff_max_s = 0.2\n"
    )
    (root / CONFIG_FILE).write_text("".join(f"[models.{name}]\n{role}\n" for name in ROLES), encoding="utf-8")
    return root


def _complete(ws: Workspace, method: str) -> bool:
    status = ws.status()[method]
    return status.get("built_pages") == status.get("total_pages") and status.get("complete") is not False


def _fallbacks(stats: dict[str, Any]) -> int:
    return sum(int(stats.get(name) or 0) for name in FALLBACK_STATS)


def _note_heads(dump: dict[str, dict]) -> dict[str, dict]:
    """The dump with each record's ``notes`` cut to what happened ("model reply invalid, offline
    extraction used instead"): the rest names the endpoint's port, the error and a file."""

    def head(value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("notes"), list):
            return {**value, "notes": [str(n).split(":", 1)[0] for n in value["notes"]]}
        return value

    dump["records"] = {key: (doc, head(value)) for key, (doc, value) in dump["records"].items()}
    return dump


def unusable_exchanges(root: Path) -> Counter:
    """First message → how many exchanges with it ended with no usable reply (``model_errors/``)."""
    out: Counter = Counter()
    for path in sorted((root / ERRORS_DIR).glob("*.json")):
        messages = json.loads(path.read_text(encoding="utf-8")).get("messages") or []
        if messages:
            out[messages[0].get("text", "")] += 1
    return out


def _build(
    ws: Workspace, method: str, result: ModelFaultResult | None = None, after_first: Callable[[], None] | None = None
) -> bool:
    """Build until the status says complete (at most ``MAX_BUILDS`` times); whether it did.
    ``after_first`` runs after the first build (an outage ends)."""
    for number in range(1, MAX_BUILDS + 1):
        report = ws.build(method)
        if result is not None:
            result.builds = number
            result.failed_parts += [f"build {number}: {f}" for f in report.stats.get("failures") or []]
            result.fallbacks += _fallbacks(report.stats)
        if number == 1 and after_first is not None:
            after_first()
        if _complete(ws, method):
            return True
    return False


def _build_reference(method: str, base: Path, dest: Path, unusable: Counter) -> Path:
    """``method`` built through a fault-free scripted stub whose first ``2 × n`` replies to each
    prompt of ``unusable`` (an exchange is the request and its re-ask) are empty."""
    root = Path(shutil.copytree(base, dest))
    left = {prompt: 2 * n for prompt, n in unusable.items()}

    def spoilt(req) -> bool:  # called under the stub's lock
        prompt = first_message(req)
        if left.get(prompt, 0) > 0:
            left[prompt] -= 1
            return True
        return False

    with OpenAIStub(default_reply=scripted_reply) as clean:
        clean.reply("", when=spoilt)
        with Workspace(root, settings=fault_settings(clean)) as ws:
            _build(ws, method)
    return root


def model_fault_case(
    method: str,
    base: Path,
    work: Path,
    *,
    rate: float = 0.3,
    seed: int = 15,
    kinds: tuple[str, ...] = MODEL_FAULTS,
    outage: Matcher = None,
    questions: tuple[str, ...] = QUESTIONS,
) -> ModelFaultResult:
    """Run one case (see the module doc) in ``work`` (``faulty/`` and ``reference/``).

    ``outage``: instead of random faults, every request it matches (a text the prompt
    contains, or a predicate of the ``SeenRequest``) fails (HTTP 500, retried to the end)
    during the first build — the endpoint down for one page or chunk; the builds after it
    run without faults."""
    work.mkdir(parents=True, exist_ok=True)
    result = ModelFaultResult(
        method, 0.0 if outage is not None else rate, kinds=["500"] if outage is not None else list(kinds)
    )
    root = Path(shutil.copytree(base, work / "faulty"))
    with OpenAIStub(default_reply=scripted_reply, hang_s=HANG_S) as stub:
        if outage is not None:
            stub.fault("500", times=10**9, when=outage)
        else:
            stub.fault_rate(rate, kinds=kinds, seed=seed)
        with Workspace(root, settings=fault_settings(stub)) as ws:
            lift = stub.clear_faults if outage is not None else None
            result.complete = _build(ws, method, result, after_first=lift)
            for question in questions:
                result.answers += 1
                try:
                    answer = ws.ask(question, method=method)
                except Exception as exc:  # noqa: BLE001 - an answer that fails is what is measured
                    result.answer_errors.append(f"{question}: {type(exc).__name__}: {exc}")
                    continue
                result.answered += bool(answer.text.strip() and answer.citations)
            used = total(model_stages(ws.usage()))
        result.requests = stub.count("/chat/completions")
        result.faults = dict(sorted(stub.faults_seen().items()))
    result.retries, result.repairs, result.failures = used.retries, used.repairs, used.failures
    unusable = unusable_exchanges(root)
    result.unusable = sum(unusable.values())
    reference = _build_reference(method, base, work / "reference", unusable)
    diff = compare_dumps(_note_heads(canonical_dump(reference)), _note_heads(canonical_dump(root)))
    result.lost, result.duplicated = sum(diff.lost.values()), sum(diff.extra.values())
    result.changed = sum(diff.changed.values())
    check = check_workspace(root)
    result.check_problems = len(check.findings)
    result.examples = diff.examples + [f.message for f in check.findings] + result.answer_errors
    return result
