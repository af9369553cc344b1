"""docs/reliability.md from the fault matrix's results (``benchmarks/faults.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

WORKSPACE = ("Workspace: the 5-page OpenStax World History excerpt (offline models, or the scripted model "
             "of `docgraph.testing.scripted_model` served by the loopback `OpenAIStub`); `eval` runs two "
             "methods over the first 4 questions of `kg4vd_test`.")


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def kills_section(kills: Sequence[Any]) -> list[str]:
    out = ["## Kills (SIGKILL of the process group, then the same command again)", "",
           "| case | command | kills landed | trials | survived | lost rows | duplicated rows | changed rows "
           "| `docgraph check` findings | incomplete |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in kills:
        out.append(f"| {r.case} | `{r.command}` | {r.kills} | {r.trials} | {r.survived} | {r.lost} | {r.duplicated} "
                   f"| {r.changed} | {r.check_problems} | {r.incomplete} |")
    failures = [f for r in kills for f in r.failures]
    if failures:
        out += ["", "Failures:", ""] + [f"- {_cell(f)}" for f in failures]
    return out


def model_section(results: Sequence[Any], rate: float) -> list[str]:
    out = ["## Model faults (build, then 3 questions, through the loopback OpenAI-compatible stub)", "",
           f"`random`: a seeded {rate:.0%} of the chat requests get one fault each, drawn from timeouts "
           "(`hang`, past the client's 1 s timeout), 429 with Retry-After, 500, connection resets "
           "(`reset`: TCP RST; `disconnect`: a body shorter than its Content-Length), `malformed` "
           "(a body that is not JSON), `truncated` (cut at the token limit), `schema` (JSON of the wrong "
           "shape), `empty` and `broken` (repairable JSON: Python literals after prose); the builds are "
           "rerun until the status says complete. `outage`: every request for one page (KG4VD, HippoRAG) "
           "or chunk (HVM) fails with HTTP 500 during the first build. The rows are compared with a "
           "fault-free build whose stub spoils exactly the exchanges that stayed unusable "
           "(`model_errors/`), so it takes the same logged offline fallbacks. `accounted`: faults served "
           "= retries + repairs + failures in `docgraph usage`.", "",
           "| case | method | requests | faults | retries | repairs | failures | accounted | builds | "
           "parts failed, then resumed | offline fallbacks logged | answers | lost rows | duplicated rows "
           "| changed rows | `docgraph check` findings | survived |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, r in results:
        kinds = ", ".join(f"{k} {n}" for k, n in r.faults.items())
        out.append(f"| {label} | {r.case} | {r.requests} | {r.faults_total} ({kinds}) | {r.retries} | {r.repairs} "
                   f"| {r.failures} | {'yes' if r.accounted else 'NO'} | {r.builds} | {len(r.failed_parts)} "
                   f"| {r.fallbacks} | {r.answered}/{r.answers} | {r.lost} | {r.duplicated} | {r.changed} "
                   f"| {r.check_problems} | {'yes' if r.survived else 'NO'} |")
    parts = [f"{label} {r.case}: {p}" for label, r in results for p in r.failed_parts]
    if parts:
        out += ["", "What the builds named as failed (each resumed by the next build):", ""]
        out += [f"- {_cell(p[:400])}" for p in parts[:12]] + ([f"- … {len(parts) - 12} more"] if len(parts) > 12 else [])
    problems = [f"{label} {r.case}: {e}" for label, r in results for e in r.examples]
    if problems:
        out += ["", "Differences and errors:", ""] + [f"- {_cell(e[:400])}" for e in problems]
    return out


def bad_inputs_section(bad: Sequence[dict]) -> list[str]:
    out = ["## Bad inputs (one `docgraph add` of all of them plus good files)", "",
           "| case | file | lines | message | ok |", "| --- | --- | --- | --- | --- |"]
    for r in bad:
        out.append(f"| {r['case']} | {r['file']} | {r['lines']} | {_cell(r['message'])} | {'yes' if r['ok'] else 'NO'} |")
    return out


def write_report(path: Path, command: str, *, kills: Sequence[Any] = (), models: Sequence[Any] = (),
                 rate: float = 0.3, bad: Sequence[dict] = (), extra: Sequence[str] = ()) -> None:
    out = ["# Reliability: the fault matrix (issue 15)", "",
           f"Reproduce: `{command}` (fast subset: `.venv/bin/pytest -q tests/reliability "
           "tests/documents/test_bad_inputs.py tests/server/test_server_security.py`, part of `make test` "
           "and so of `.ci/run`).", "", WORKSPACE, ""]
    if kills:
        out += kills_section(kills) + [""]
    if models:
        out += model_section(models, rate) + [""]
    if bad:
        out += bad_inputs_section(bad) + [""]
    out += list(extra)
    path.write_text("\n".join(out).rstrip() + "\n", encoding="utf-8")
