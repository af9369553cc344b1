"""The answer model failing for good, for the reliability matrix (issue 15 item 2): every
method asked while its answer endpoint is down, refuses connections, or keeps sending
unusable replies must still answer — the offline answer over the same evidence, marked as
the fallback (``methods.answers.answer_fallback``) — and count it in ``docgraph usage``.

``answer_fallback_cases(base, work)`` builds every method offline on a copy of ``base``,
then per case asks each method ``questions`` with only the answer role pointed at the
failing endpoint (the shipped retries, fast backoff), and compares the stored rows with
those before the questions.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..api import Workspace
from ..config import Settings, load_settings
from ..models.usage import model_stages, total
from .faults import canonical_dump, compare_dumps
from .model_faults import MAX_RETRIES, QUESTIONS, TIMEOUT_S
from .openai_stub import OpenAIStub
from .ports import free_port

METHODS = ("kg4vd", "hvm", "dense", "bm25", "hybrid", "hipporag", "pages", "nodocs")
NO_EVIDENCE = ("nodocs",)  # answers without documents: nothing to cite, by design


@dataclass
class AnswerFallbackResult:
    case: str
    methods: list[str]
    asked: int = 0
    answered: int = 0  # an Answer came back (no exception)
    marked: int = 0  # model_used False, one warning naming the failed stage, fallbacks=1 in its usage
    cited: int = 0  # with citations (methods in NO_EVIDENCE aside)
    counted: int = 0  # fallbacks added to docgraph usage
    failures: int = 0  # failed model calls added to docgraph usage
    retries: int = 0
    slowest_s: float = 0.0
    changed_rows: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def survived(self) -> bool:
        expected_cited = self.asked * sum(m not in NO_EVIDENCE for m in self.methods) // len(self.methods)
        return (
            self.answered == self.marked == self.counted == self.asked
            and self.cited == expected_cited
            and not self.changed_rows
            and not self.errors
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "survived": self.survived}


def answer_settings(url: str) -> Settings:
    """Only the answer role on ``url``: the shipped retries, a short timeout, fast backoff."""
    role = {
        "base_url": url,
        "model": "stub-model",
        "timeout_s": TIMEOUT_S,
        "max_retries": MAX_RETRIES,
        "backoff_base_s": 0.02,
        "backoff_max_s": 0.2,
    }
    return load_settings(None, environ={}, overrides={"models": {"answer": role}})


def closed_port_url() -> str:
    """An endpoint on 127.0.0.1 that nothing listens on (connections are refused)."""
    return f"http://127.0.0.1:{free_port()}/v1"


def _stub(setup: Callable[[OpenAIStub], object]) -> Callable[[], Iterator[str]]:
    def endpoint() -> Iterator[str]:
        with OpenAIStub(default_reply="An answer [1].") as stub:
            setup(stub)
            yield stub.url

    return endpoint


def _closed() -> Iterator[str]:
    yield closed_port_url()


CASES: dict[str, Callable[[], Iterator[str]]] = {
    "endpoint down (HTTP 500 to every request)": _stub(lambda s: s.fault("500", times=10**9)),
    "connection refused (nothing listening on the port)": _closed,
    "replies unusable (empty, re-asked, empty again)": _stub(lambda s: s.reply("")),
}


def answer_fallback_cases(
    base: Path, work: Path, *, methods: tuple[str, ...] = METHODS, questions: tuple[str, ...] = QUESTIONS[:2]
) -> list[AnswerFallbackResult]:
    root = Path(shutil.copytree(base, work / "ws"))
    with Workspace(root) as ws:
        for method in methods:
            ws.build(method)
    before = canonical_dump(root)
    results = []
    for case, endpoint in CASES.items():
        result = AnswerFallbackResult(case, list(methods))
        for url in endpoint():
            with Workspace(root, settings=answer_settings(url)) as ws:
                used_before = total(model_stages(ws.usage()))
                for method in methods:
                    for question in questions:
                        result.asked += 1
                        started = time.perf_counter()
                        try:
                            answer = ws.ask(question, method=method)
                        except Exception as exc:  # noqa: BLE001 - what is measured
                            result.errors.append(f"{method}: {type(exc).__name__}: {exc}")
                            continue
                        result.slowest_s = max(result.slowest_s, time.perf_counter() - started)
                        result.answered += 1
                        stages = [s for s, u in answer.usage.items() if u.fallbacks == 1]
                        result.marked += (
                            not answer.model_used
                            and len(answer.warnings) == 1
                            and len(stages) == 1
                            and stages[0] in answer.warnings[0]
                        )
                        result.cited += bool(answer.citations)
                used = total(model_stages(ws.usage()))
            result.counted = used.fallbacks - used_before.fallbacks
            result.failures = used.failures - used_before.failures
            result.retries = used.retries - used_before.retries
        diff = compare_dumps(before, canonical_dump(root))
        result.changed_rows = sum(diff.lost.values()) + sum(diff.extra.values()) + sum(diff.changed.values())
        result.errors += diff.examples
        results.append(result)
    return results
