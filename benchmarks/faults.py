"""The reliability matrix (issue 15): kills, model faults and bad inputs; writes docs/reliability.md.

    nice -n 10 .venv/bin/python benchmarks/faults.py [--kills 20] [--per-trial 4] [--cases add,dense,...]
        [--model-methods kg4vd,hvm,hipporag] [--model-runs 2] [--rate 0.3] [--seed 15] [--by time|rows]
        [--work DIR] [--no-bad-inputs] [--long-pages 5000] [--only bad-inputs,answer-fallback --out FILE]

Kills: for each case (``add``; the offline builds of dense, hipporag, hvm and kg4vd; the
scripted-model builds ``hvm-scripted`` and ``kg4vd-scripted``, whose workspace's
docgraph.toml points every chat role at a loopback stub serving
``docgraph.testing.scripted_model``; ``eval`` of dense and bm25 over 4 questions),
``--kills`` SIGKILLs (of the whole process group: page workers too) at seeded random points
of an uninterrupted run (``--by time``: fractions of its duration; ``rows``: numbers of rows
written), ``--per-trial`` of them on one workspace copy before it is run to completion; the
result is compared with the uninterrupted run (``docgraph.testing.faults.canonical_dump``:
documents, pages, records, vectors, meta and files, timestamps aside; for eval its records
and corpus workspaces, ``eval_dump``) and checked (``docgraph check``).

Model faults (``docgraph.testing.model_faults``): per method, ``--model-runs`` builds plus
three answers with ``--rate`` of the chat requests faulted, and one outage of a page or
chunk during the first build; see that module for what is compared.

Concurrency (``docgraph.testing.concurrency``), web app attacks
(``docgraph.testing.server_attacks``) and disk full (``docgraph.testing.disk_full``: a tmpfs,
so root; skipped with the reason otherwise) on real processes; see those modules.

Bad inputs: one ``docgraph add`` of every bad file, three good ones and two with broken fonts;
each bad file must get one line naming it, the good ones must be added, the broken-font ones
added with one note naming the file and its pages, and nothing else in the workspace may
change. The very long input (``docgraph.testing.long_input``): a ``--long-pages`` PDF added,
SIGKILLed part-way and added again.

Answer model down (``docgraph.testing.answer_fallback``): every method asked while its answer
endpoint fails for good must give the marked offline answer and count it.
``--only bad-inputs,answer-fallback`` runs just those sections.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from faults_inputs import bad_inputs, noted_inputs, shared_documents
from faults_report import write_report

from docgraph.testing.answer_fallback import answer_fallback_cases
from docgraph.testing.concurrency import TOKEN, cli_writers_case, mixed_clients_case, web_app_case
from docgraph.testing.disk_full import disk_full_case, tmpfs_unavailable
from docgraph.testing.faults import (
    add_complete,
    build_complete,
    canonical_dump,
    compare_dumps,
    docgraph_command,
    eval_check,
    eval_dump,
    kill_case,
    run_to_completion,
    subprocess_env,
)
from docgraph.testing.long_input import long_input_case
from docgraph.testing.model_faults import model_fault_case, point_at_stub
from docgraph.testing.openai_stub import OpenAIStub
from docgraph.testing.scripted_model import scripted_reply
from docgraph.testing.server_attacks import flood_case, slow_upload_case, token_case, traversal_case

REPO = Path(__file__).resolve().parents[1]
DOC = "openstax_world_history_v1_excerpt.pdf"
DOC_ID = "040fed959f81"
UPLOAD = "acciona_sustainability_report_2020_p1.pdf"  # what the web clients upload


def run_bad_inputs(base: Path, work: Path) -> list[dict]:
    bad, good = bad_inputs(work / "inputs")
    noted = noted_inputs(work / "inputs")
    root = Path(shutil.copytree(base, work / "ws"))
    before = canonical_dump(root)
    env = subprocess_env()
    env["PATH"] = str(Path(sys.executable).parent)  # no soffice: the Office case
    done = subprocess.run(
        docgraph_command(
            "--workspace", str(root), "add", *map(str, bad.values()), *map(str, good), *map(str, noted.values())
        ),
        cwd=work,
        env=env,
        capture_output=True,
    )
    err = done.stderr.decode("utf-8", "backslashreplace")
    lines = [ln for ln in err.splitlines() if ln.startswith("failed ")]
    after = canonical_dump(root)
    added = sorted(set(after["documents"]) - set(before["documents"]))
    for table in ("documents", "pages", "records", "vectors"):  # the good files' rows aside
        after[table] = {
            k: v for k, v in after[table].items() if not any(d in repr(k) or d in repr(v)[:200] for d in added)
        }
    after["files"] = {k: v for k, v in after["files"].items() if not any(f"/{d}/" in k for d in added)}
    diff = compare_dumps(before, after)
    expected = len(good) + len(noted)  # files to be added
    rows = []
    for kind, path in bad.items():
        mine = [ln for ln in lines if ln.startswith(f"failed   {path}")]
        rows.append(
            {
                "case": kind,
                "file": path.name,
                "lines": len(mine),
                "message": mine[0][len("failed   ") :].replace(str(path.parent) + "/", "") if mine else "(no line)",
                "ok": len(mine) == 1 and diff.equal and len(added) == expected,
            }
        )
    for kind, path in noted.items():  # added, with one note naming the file and its pages
        mine = [ln for ln in err.splitlines() if ln.startswith(f"{path.name} (page")]
        rows.append(
            {
                "case": kind,
                "file": path.name,
                "lines": len(mine),
                "message": (mine[0] if mine else "(no line)") + " [added]",
                "ok": len(mine) == 1 and diff.equal and len(added) == expected,
            }
        )
    rows.append(
        {
            "case": "good files of the batch (non-UTF-8 name, symlink loop folder, image with no text)",
            "file": ", ".join(os.fsencode(p.name).decode("utf-8", "backslashreplace") for p in good),
            "lines": 0,
            "message": f"{len(added)} of {expected} added (these and the broken-font files); rest of workspace "
            f"{'unchanged' if diff.equal else 'CHANGED: ' + '; '.join(diff.examples)}",
            "ok": len(added) == expected and diff.equal,
        }
    )
    return rows


def run_long_input(base: Path, work: Path, pages: int) -> list[dict]:
    """The very long input (``docgraph.testing.long_input``) as a bad-input row."""
    r = long_input_case(base, work, pages=pages)
    message = (
        f"added with progress naming the file; SIGKILLed at {r.killed_at_pages:,} pages stored, the same "
        f"add resumed the other {r.resumed_pages:,} in {r.resume_s:.0f} s ({r.parser} parser); "
        f"{r.stored_pages:,} pages stored once, {r.lost} lost, {r.duplicated} duplicated, status {r.status}, "
        f"{r.check_findings} check findings, rest of workspace "
        f"{'unchanged' if not r.rest_changed else 'CHANGED: ' + '; '.join(r.messages)}"
    )
    print(r.to_dict())
    return [{"case": r.case, "file": r.file, "lines": r.progress_lines, "message": message, "ok": r.ok}]


KILL_CASES = ("add", "dense", "hipporag", "hvm", "kg4vd", "hvm-scripted", "kg4vd-scripted", "eval")
EVAL_ARGS = [
    "eval",
    "kg4vd_test",
    "{benchmark}",
    "--methods",
    "dense,bm25",
    "--limit",
    "4",
    "--out",
    "{ws}/results",
    "--workspace-root",
    "{ws}/corpora",
]


def run_kills(
    cases: list[str], source: Path, base: Path, work: Path, args: argparse.Namespace, stub: OpenAIStub
) -> list:
    """The kill matrix: ``args.kills`` kills per case, ``args.per_trial`` per workspace copy."""
    trials = max(1, math.ceil(args.kills / args.per_trial))
    common = dict(trials=trials, kills_per_trial=args.per_trial, seed=args.seed, min_kills=args.kills)
    scripted = point_at_stub(Path(shutil.copytree(base, work / "base-scripted")), stub)
    results = []
    for case in cases:
        method = case.split("-")[0]
        if case == "add":
            r = kill_case(
                "add", work / "empty", ["add", str(source)], work / case, complete=add_complete, by=args.by, **common
            )
        elif case == "eval":  # kills by time: an eval adds rows to several workspaces
            benchmark = str(shared_documents().parent / "kg4vd_test")
            r = kill_case(
                "eval",
                work / "empty",
                [a.replace("{benchmark}", benchmark) for a in EVAL_ARGS],
                work / case,
                dump=eval_dump,
                check=eval_check,
                **common,
            )
        else:
            r = kill_case(
                case,
                scripted if case.endswith("-scripted") else base,
                ["build", "--method", method],
                work / case,
                complete=build_complete(method),
                by=args.by,
                **common,
            )
        print(
            f"kill {case}: {r.kills} kills landed, {r.survived}/{r.trials} survived, lost {r.lost}, "
            f"duplicated {r.duplicated}, changed {r.changed}, check {r.check_problems}",
            flush=True,
        )
        results.append(r)
    return results


OUTAGES = {
    "kg4vd": "on page 4",
    "hipporag": "Dr. Ryan J. Lynch is Associate Professor",
    "hvm": "Dr. Ryan J. Lynch is Associate Professor",
}


def run_model_faults(methods: list[str], base: Path, work: Path, args: argparse.Namespace) -> list:
    results = []
    for method in methods:
        for run in range(args.model_runs):
            r = model_fault_case(method, base, work / f"{method}-random{run}", rate=args.rate, seed=args.seed + run)
            results.append((f"random (seed {args.seed + run})", r))
        results.append(("outage", model_fault_case(method, base, work / f"{method}-outage", outage=OUTAGES[method])))
        for label, r in results[-args.model_runs - 1 :]:
            print(
                f"model {label} {method}: {r.faults_total} faults, accounted {r.accounted}, builds {r.builds}, "
                f"answers {r.answered}/{r.answers}, lost {r.lost}, duplicated {r.duplicated}, changed {r.changed}, "
                f"survived {r.survived}",
                flush=True,
            )
    return results


def dense_reference(base: Path, work: Path) -> Path:
    """``base`` with the dense baseline built (the concurrency cases' reference, the attacks' workspace)."""
    reference = work / "dense-reference"
    if not reference.exists():
        work.mkdir(parents=True, exist_ok=True)
        shutil.copytree(base, reference)
        run_to_completion(docgraph_command("--workspace", str(reference), "build", "--method", "dense"), work)
    return reference


def run_concurrency(base: Path, reference: Path, work: Path, source: Path) -> list:
    results = [
        cli_writers_case(base, reference, work, add=source),
        web_app_case(base, reference, work, doc_id=DOC_ID),
        mixed_clients_case(reference, shared_documents() / UPLOAD, work, clients=8, seconds=60),
    ]
    for r in results:
        print(
            f"concurrency {r.case}: refused {r.refused}/{r.writers}, reads {r.reads}, "
            f"slowest {r.slowest_read_s:.2f}s, "
            f"lost {r.lost}, duplicated {r.duplicated}, changed {r.changed}, survived {r.survived}",
            flush=True,
        )
    return results


DISK_FREE_KB = {"add": (300, 700, 1500), "dense": (60, 120, 400)}


def run_disk_full(source: Path, base: Path, dense: Path, work: Path) -> list:
    results = [
        (
            disk_full_case("add", work / "none", ["add", str(source)], base, work, DISK_FREE_KB["add"]),
            DISK_FREE_KB["add"],
        ),
        (
            disk_full_case("dense", base, ["build", "--method", "dense"], dense, work, DISK_FREE_KB["dense"]),
            DISK_FREE_KB["dense"],
        ),
    ]
    for r, _ in results:
        print(
            f"disk full {r.case}: {r.hit}/{r.runs} filled, {r.clear_errors} clear, {r.survived} survived, "
            f"lost {r.lost}, duplicated {r.duplicated}, changed {r.changed}, check {r.check_problems}",
            flush=True,
        )
    return results


def run_attacks(dense: Path, work: Path) -> list:
    from fastapi.testclient import TestClient

    from docgraph import Workspace
    from docgraph.server import create_app

    def fresh(name: str) -> Path:
        return Path(shutil.copytree(dense, work / name))

    root = fresh("traversal")
    with Workspace(root) as ws, TestClient(create_app(ws, token=TOKEN)) as client:
        results = [
            traversal_case(
                client,
                root,
                {"doc_id": DOC_ID, "number": "2", "component_id": "IM1", "job_id": "build-1"},
                secret=b"TOP-SECRET",
            )
        ]
    root, clients = fresh("tokens"), []
    with Workspace(root) as ws:

        def make(token: str):
            client = TestClient(create_app(ws, token=token))
            clients.append(client.__enter__())
            return client

        results.append(token_case(make, root, token=TOKEN, previous="tok-yesterday"))
        for client in clients:
            client.__exit__(None, None, None)
    results.append(slow_upload_case(fresh("slow"), clients=8, seconds=15.0))
    results.append(flood_case(fresh("flood"), DOC_ID, threads=16, per_thread=40))
    for r in results:
        print(
            f"attack {r.case}: {r.tried} tried, {r.refused} refused, {r.absorbed} absorbed, leaks {len(r.leaks)}, "
            f"slowest {r.slowest_s:.2f}s, changed {r.changed_rows}, survived {r.survived}",
            flush=True,
        )
    return results


def all_bad_inputs(base: Path, work: Path, args: argparse.Namespace) -> list[dict]:
    bad = run_bad_inputs(base, work / "bad")
    if args.long_pages:
        bad += run_long_input(base, work / "long", args.long_pages)
    for row in bad:
        print(f"{'ok ' if row['ok'] else 'BAD'} {row['case']}: {row['message']}")
    return bad


def run_answer_fallback(base: Path, work: Path) -> list:
    results = answer_fallback_cases(base, work)
    for r in results:
        print(f"{'ok ' if r.survived else 'BAD'} answer model down: {r.to_dict()}")
    return results


def only(sections: list[str], base: Path, work: Path, args: argparse.Namespace) -> int:
    unknown = set(sections) - {"bad-inputs", "answer-fallback"}
    if unknown:
        raise SystemExit(f"unknown --only section(s): {', '.join(sorted(unknown))}")
    bad = all_bad_inputs(base, work, args) if "bad-inputs" in sections else []
    answers = run_answer_fallback(base, work / "answers") if "answer-fallback" in sections else []
    write_report(args.out, " ".join(["python benchmarks/faults.py", *sys.argv[1:]]), bad=bad, answers=answers)
    print(f"wrote {args.out}")
    return 0 if all(b["ok"] for b in bad) and all(r.survived for r in answers) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--per-trial", type=int, default=4)
    parser.add_argument("--cases", default=",".join(KILL_CASES), help=f"kill cases among {', '.join(KILL_CASES)}")
    parser.add_argument("--model-methods", default="kg4vd,hvm,hipporag")
    parser.add_argument("--model-runs", type=int, default=2, help="random-fault runs per method (seeds)")
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--by", choices=["time", "rows"], default="time")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--no-bad-inputs", action="store_true")
    parser.add_argument("--long-pages", type=int, default=5000, help="pages of the very long input (0: none)")
    parser.add_argument(
        "--only",
        default="",
        help="run only these sections (bad-inputs, answer-fallback; comma-separated) and write them to --out",
    )
    parser.add_argument("--no-concurrency", action="store_true")
    parser.add_argument("--no-attacks", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "reliability.md")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="docgraph-faults-"))
    work.mkdir(parents=True, exist_ok=True)
    source = shared_documents() / DOC
    base = work / "base"
    run_to_completion(docgraph_command("--workspace", str(base), "add", str(source)), work)
    if args.only:
        return only(args.only.split(","), base, work, args)
    with OpenAIStub(default_reply=scripted_reply) as stub:
        kills = run_kills([c for c in args.cases.split(",") if c], source, base, work / "kills", args, stub)
    models = run_model_faults([m for m in args.model_methods.split(",") if m], base, work / "models", args)
    answers = run_answer_fallback(base, work / "answers")
    dense = dense_reference(base, work)
    concurrency = [] if args.no_concurrency else run_concurrency(base, dense, work / "concurrency", source)
    attacks = [] if args.no_attacks else run_attacks(dense, work / "attacks")
    disk_unavailable = tmpfs_unavailable()
    disk = [] if disk_unavailable else run_disk_full(source, base, dense, work / "disk-full")
    bad = [] if args.no_bad_inputs else all_bad_inputs(base, work, args)
    command = " ".join(["python benchmarks/faults.py", *sys.argv[1:]])
    write_report(
        args.out,
        command,
        kills=kills,
        models=models,
        rate=args.rate,
        answers=answers,
        concurrency=concurrency,
        attacks=attacks,
        disk_full=disk,
        disk_unavailable=disk_unavailable,
        bad=bad,
    )
    print(f"wrote {args.out}")
    ok = (
        all(r.survived == r.trials for r in kills)
        and all(r.survived for _, r in models)
        and all(r.survived for r in [*answers, *concurrency, *attacks])
        and all(r.survived == r.runs for r, _ in disk)
        and all(b["ok"] for b in bad)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
