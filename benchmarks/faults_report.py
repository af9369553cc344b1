"""docs/reliability.md from the fault matrix's results (``benchmarks/faults.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

WORKSPACE = (
    "Workspace: the 5-page OpenStax World History excerpt (offline models, or the scripted model "
    "of `docgraph.testing.scripted_model` served by the loopback `OpenAIStub`); `eval` runs two "
    "methods over the first 4 questions of `kg4vd_test`."
)
CHECK = "`docgraph check` findings"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)] + [
        "| " + " | ".join(str(c) for c in row) + " |" for row in rows
    ]


def _listed(title: str, items: Sequence[str], limit: int = 12, width: int = 400) -> list[str]:
    if not items:
        return []
    more = [f"- … {len(items) - limit} more"] if len(items) > limit else []
    return ["", title, ""] + [f"- {_cell(i[:width])}" for i in items[:limit]] + more


def kills_section(kills: Sequence[Any]) -> list[str]:
    header = [
        "case",
        "command",
        "kills landed",
        "trials",
        "survived",
        "lost rows",
        "duplicated rows",
        "changed rows",
        CHECK,
        "incomplete",
    ]
    rows = [
        [
            r.case,
            f"`{r.command}`",
            r.kills,
            r.trials,
            r.survived,
            r.lost,
            r.duplicated,
            r.changed,
            r.check_problems,
            r.incomplete,
        ]
        for r in kills
    ]
    return (
        ["## Kills (SIGKILL of the process group, then the same command again)", ""]
        + _table(header, rows)
        + _listed("Failures:", [f for r in kills for f in r.failures])
    )


def model_section(results: Sequence[Any], rate: float) -> list[str]:
    intro = (
        f"`random`: a seeded {rate:.0%} of the chat requests get one fault each, drawn from timeouts "
        "(`hang`, past the client's 1 s timeout), 429 with Retry-After, 500, connection resets "
        "(`reset`: TCP RST; `disconnect`: a body shorter than its Content-Length), `malformed` "
        "(a body that is not JSON), `truncated` (cut at the token limit), `schema` (JSON of the wrong "
        "shape), `empty` and `broken` (repairable JSON: Python literals after prose); the builds are "
        "rerun until the status says complete. `outage`: every request for one page (KG4VD, HippoRAG) "
        "or chunk (HVM) fails with HTTP 500 during the first build. The rows are compared with a "
        "fault-free build whose stub spoils exactly the exchanges that stayed unusable "
        "(`model_errors/`), so it takes the same logged offline fallbacks. `accounted`: faults served "
        "= retries + repairs + failures in `docgraph usage`. A KG4VD judge reply that stays unusable is "
        "logged as a note (its candidates count as unrelated) and shows as a failure, not in the fallback "
        "column."
    )
    header = [
        "case",
        "method",
        "requests",
        "faults",
        "retries",
        "repairs",
        "failures",
        "accounted",
        "builds",
        "parts failed, then resumed",
        "offline fallbacks logged",
        "answers",
        "lost rows",
        "duplicated rows",
        "changed rows",
        CHECK,
        "survived",
    ]
    rows = [
        [
            label,
            r.case,
            r.requests,
            f"{r.faults_total} ({', '.join(f'{k} {n}' for k, n in r.faults.items())})",
            r.retries,
            r.repairs,
            r.failures,
            _yes(r.accounted),
            r.builds,
            len(r.failed_parts),
            r.fallbacks,
            f"{r.answered}/{r.answers}",
            r.lost,
            r.duplicated,
            r.changed,
            r.check_problems,
            _yes(r.survived),
        ]
        for label, r in results
    ]
    parts = [f"{label} {r.case}: {p}" for label, r in results for p in r.failed_parts]
    problems = [f"{label} {r.case}: {e}" for label, r in results for e in r.examples]
    return (
        ["## Model faults (build, then 3 questions, through the loopback OpenAI-compatible stub)", "", intro, ""]
        + _table(header, rows)
        + _listed("What the builds named as failed (each resumed by the next build):", parts)
        + _listed("Differences and errors:", problems, limit=50)
    )


def answer_fallback_section(results: Sequence[Any]) -> list[str]:
    header = [
        "case",
        "methods",
        "questions asked",
        "answered",
        "marked as fallback",
        "with citations",
        "fallbacks in `docgraph usage`",
        "failures",
        "retries",
        "slowest answer",
        "changed rows",
        "survived",
    ]
    rows = [
        [
            r.case,
            len(r.methods),
            r.asked,
            r.answered,
            r.marked,
            r.cited,
            r.counted,
            r.failures,
            r.retries,
            f"{r.slowest_s:.1f} s",
            r.changed_rows,
            _yes(r.survived),
        ]
        for r in results
    ]
    methods = ", ".join(results[0].methods) if results else ""
    return (
        [
            "## Answer model down (`docgraph.testing.answer_fallback`)",
            "",
            f"Every method ({methods}; built offline) asked while only its answer endpoint fails for good, "
            "with the shipped 4 retries: `ask` must return the offline (extractive) answer over the same "
            "evidence, marked — `model_used` false, one warning naming the failed stage and the error, "
            "`fallbacks` 1 in that stage's usage — and `docgraph usage` must count it (`fallbk`). `nodocs` "
            "has no evidence to cite, by design. `failures` counts the answer calls and the other query-time "
            "calls of the answer role, which fall back too: KG4VD's query analyzer (to its rules) and "
            "HippoRAG's fact filter (to the similarity ranking).",
            "",
        ]
        + _table(header, rows)
        + _listed("Errors:", [e for r in results for e in r.errors])
    )


def concurrency_section(results: Sequence[Any]) -> list[str]:
    intro = (
        'A second writer must be refused with "workspace busy" naming the build that holds the lock; '
        "readers go on; the store must end as the uninterrupted build leaves it (for the web clients: as "
        "`docgraph add` of the uploaded file and a dense build leave it). Slowest web read bound: 5 s, "
        "30 s for the mixed clients (answers wait behind ingestion on two cores)."
    )
    header = [
        "case",
        "writers refused / started",
        "requests answered",
        "slowest web read",
        "lost rows",
        "duplicated rows",
        "changed rows",
        CHECK,
        "survived",
    ]
    rows = [
        [
            r.case,
            f"{r.refused} / {r.writers}",
            f"{r.reads - len(r.read_errors)} / {r.reads}",
            f"{r.slowest_read_s:.2f} s" if r.slowest_read_s else "—",
            r.lost,
            r.duplicated,
            r.changed,
            r.check_problems,
            _yes(r.survived),
        ]
        for r in results
    ]
    answered = [f"{r.case}: " + ", ".join(f"{k} ×{n}" for k, n in r.answered.items()) for r in results if r.answered]
    return (
        ["## Concurrency (one workspace, several processes; `store.writelock`)", "", intro, ""]
        + _table(header, rows)
        + _listed("Answers (request kind, HTTP status × count):", answered, width=800)
        + _listed("Problems:", [f"{r.case}: {p}" for r in results for p in r.problems + r.read_errors])
    )


def disk_full_section(results: Sequence[Any], unavailable: str | None) -> list[str]:
    out = ["## Disk full (the workspace on a 16 MB tmpfs, a ballast file leaving little free space)", ""]
    if unavailable:
        return out + [f"Not run: {unavailable}."]
    intro = (
        'The command must stop with one clear "no space left" line (no traceback), `docgraph check` must '
        "find no error in what it left, and the same command after the ballast is deleted must finish with "
        "the workspace an uninterrupted run leaves."
    )
    header = [
        "case",
        "command",
        "runs (free space)",
        "disk filled",
        "clear error",
        "survived",
        "lost rows",
        "duplicated rows",
        "changed rows",
        "`docgraph check` errors",
    ]
    rows = [
        [
            r.case,
            f"`{r.command}`",
            f"{r.runs} ({', '.join(f'{k} KB' for k in free)})",
            r.hit,
            r.clear_errors,
            r.survived,
            r.lost,
            r.duplicated,
            r.changed,
            r.check_problems,
        ]
        for r, free in results
    ]
    return (
        out
        + [intro, ""]
        + _table(header, rows)
        + _listed("Failures:", [f"{r.case}: {f}" for r, _ in results for f in r.failures])
    )


def attacks_section(results: Sequence[Any]) -> list[str]:
    header = [
        "case",
        "requests",
        "refused (4xx)",
        "absorbed (served)",
        "leaks or 5xx",
        "slowest",
        "changed rows",
        CHECK,
        "survived",
    ]
    rows = [
        [
            r.case,
            r.tried,
            r.refused,
            r.absorbed,
            len(r.leaks),
            f"{r.slowest_s:.2f} s" if r.slowest_s else "—",
            r.changed_rows,
            r.check_problems,
            _yes(r.survived),
        ]
        for r in results
    ]
    notes = [f"{r.case}: {n}" for r in results for n in r.leaks + r.notes]
    return (
        ["## Web app attacks (`docgraph.testing.server_attacks`)", ""]
        + _table(header, rows)
        + _listed("Notes:", notes, width=300)
    )


BAD_INPUT_NOTES = [
    "- Broken fonts (`docgraph.testing.files.damaged_fonts_pdf` on the OpenStax excerpt): a file whose fonts are "
    "damaged still renders, so it is added as it renders, with one note per document and problem naming the file "
    "and its pages (`docgraph.documents.fonts`). A damaged embedded font program is drawn with a substitute font "
    "and its text still reads; a font whose objects are missing leaves most of a page's characters mapping to no "
    "letter (the page image shows the wrong glyphs too, so OCR cannot recover it either), and the note says "
    "search and answers over those pages will be poor.",
    "- The very long PDF (`docgraph.testing.long_input`: 5,000 pages generated in about 10 s, 2 MB, one heading "
    "and paragraph per page) is added with the `pymupdf-fast` parser: the scale is what is tested. It is killed "
    "once 40 % of its pages are stored (each page row is written in its own transaction); the same `docgraph add` "
    "resumes at the first missing page, prints progress naming the file every 30 s, and must leave one row and "
    "one image per page. With the default parser a page of this file costs about 0.2 s on two cores (200 pages: "
    "38 s), about 17 minutes for 5,000.",
]


def bad_inputs_section(bad: Sequence[dict]) -> list[str]:
    rows = [[r["case"], r["file"], r["lines"], _cell(r["message"]), _yes(r["ok"])] for r in bad]
    return (
        ["## Bad inputs (one `docgraph add` of all of them plus good files; the long input on its own)", ""]
        + _table(["case", "file", "lines", "message", "ok"], rows)
        + ["", "Notes:", ""]
        + BAD_INPUT_NOTES
    )


def write_report(
    path: Path,
    command: str,
    *,
    kills: Sequence[Any] = (),
    models: Sequence[Any] = (),
    rate: float = 0.3,
    answers: Sequence[Any] = (),
    concurrency: Sequence[Any] = (),
    attacks: Sequence[Any] = (),
    disk_full: Sequence[Any] = (),
    disk_unavailable: str | None = None,
    bad: Sequence[dict] = (),
    extra: Sequence[str] = (),
) -> None:
    out = [
        "# Reliability: the fault matrix (issue 15)",
        "",
        f"Reproduce: `{command}` (fast subset: `.venv/bin/pytest -q tests/reliability "
        "tests/documents/test_bad_inputs.py tests/documents/test_fonts_and_long_inputs.py "
        "tests/server/test_server_security.py`, part of `make test` "
        "and so of `.ci/run`).",
        "",
        WORKSPACE,
        "",
    ]
    sections = [
        (kills, lambda: kills_section(kills)),
        (models, lambda: model_section(models, rate)),
        (answers, lambda: answer_fallback_section(answers)),
        (concurrency, lambda: concurrency_section(concurrency)),
        (disk_full or disk_unavailable, lambda: disk_full_section(disk_full, disk_unavailable)),
        (attacks, lambda: attacks_section(attacks)),
        (bad, lambda: bad_inputs_section(bad)),
    ]
    for present, render in sections:
        if present:
            out += render() + [""]
    out += list(extra)
    path.write_text("\n".join(out).rstrip() + "\n", encoding="utf-8")
