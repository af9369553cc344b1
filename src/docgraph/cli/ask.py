"""``docgraph ask``: answer a question with a method, print the answer and its citations.

Readable output: the answer, the numbered citations (``[1] <title> p.12 — P3, T1``), the
mode, the model usage and the per-stage timings. ``--json`` prints ``results.AskResult``,
``--full-json`` the whole ``Answer``; ``--highlight DIR`` writes each cited page with its
cited regions outlined; ``--questions FILE --out OUT`` answers many (``cli.batch``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..highlight import write_highlights
from ..methods.capabilities import modes_of
from ..progress import TerminalProgress
from ..results import ask_result
from ..types import Answer, Citation
from .batch import BatchQuestion, answer_all, answered_lines, read_questions
from .search import format_routed


def register(subparsers: argparse._SubParsersAction) -> None:
    ask = subparsers.add_parser(
        "ask",
        help="answer a question (or a file of questions) over the workspace's documents, with citations",
        description="Answer one question, or with --questions FILE --out OUT many in one process (models "
        "and indexes loaded once; one JSON line per answer, written as it is ready; rerun the "
        "same command after an interruption and finished questions are skipped).",
    )
    ask.add_argument("question", nargs="?", help="the question (quote it)")
    ask.add_argument("--method", "-m", default="kg4vd", help="method to answer with (default: kg4vd)")
    ask.add_argument(
        "--mode",
        default="auto",
        help="retrieval mode of a method that has modes (kg4vd: auto, local, multi_hop, document; "
        "default: auto = the query analyzer decides)",
    )
    ask.add_argument("--top-pages", type=int, metavar="N", help="page budget (default: the method's)")
    ask.add_argument(
        "--doc",
        action="append",
        metavar="DOC",
        dest="documents",
        help="answer from this document only (id, prefix, file name or title); repeatable",
    )
    ask.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: answer, citations, evidence pages, timings (docs/integrations.md)",
    )
    ask.add_argument(
        "--full-json",
        action="store_true",
        help="print the whole Answer as JSON (entities, relations, chunks, usage too)",
    )
    ask.add_argument("--highlight", metavar="DIR", help="write the cited pages with their regions outlined here")
    ask.add_argument(
        "--questions",
        metavar="FILE",
        help='ask every question of FILE (.txt: one per line; .jsonl: {"id", "question", "method"?, "mode"?} per line)',
    )
    ask.add_argument("--out", metavar="OUT.jsonl", help="with --questions: where the answers go (resumable)")
    ask.set_defaults(handler=cmd_ask)


def ask_options(args: argparse.Namespace) -> dict[str, Any]:
    """The method options the arguments ask for; ``mode`` only goes to a method that has modes
    (``methods.capabilities.HasModes``), and must be one of them."""
    options: dict[str, Any] = {}
    mode = mode_option(args.method, args.mode)
    if mode is not None:
        options["mode"] = mode
    if args.top_pages is not None:
        options["top_pages"] = args.top_pages
    return options


def mode_option(method: str, mode: str) -> str | None:
    """``mode`` for ``method``: None for a method without modes (a note when one was asked
    for), an InputError naming the modes when it is not one of them."""
    modes = modes_of(method)
    if not modes:
        if mode != "auto":
            print(f"note: {method} has no retrieval modes; --mode {mode} is ignored", file=sys.stderr)
        return None
    if mode not in modes:
        raise InputError(f"{method} has no mode {mode!r}; use one of {', '.join(modes)}")
    return mode


def format_citation(citation: Citation) -> str:
    """``[1] Title p.12 — P3, T1``."""
    title = citation.document_title or citation.doc_id
    regions = ", ".join(citation.component_ids) if citation.component_ids else "whole page"
    return f"[{citation.number}] {title} p.{citation.page} — {regions}"


def format_timings(timings: dict[str, float]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} {seconds * 1000:.0f} ms" for name, seconds in timings.items())


CLAIM_MARKS = {"supported": "\u2713", "partly": "~", "unsupported": "\u2717", "uncited": "?"}


def marked_text(answer: Answer) -> str:
    """The answer's text with the claim check's mark after each checked sentence
    (✓ supported, ~ partly, ✗ unsupported, ? uncited)."""
    text, out, last = answer.text, [], 0
    for claim in sorted(answer.claims, key=lambda c: c.start):
        if claim.start < last or claim.end > len(text):
            continue  # offsets of another text: leave the text unmarked there
        out += [text[last : claim.end], f" {CLAIM_MARKS[claim.status]}"]
        last = claim.end
    out.append(text[last:])
    return "".join(out)


def format_claims(answer: Answer) -> str | None:
    """The claim check in one line, e.g. ``claim check: 3 of 4 sentences supported, 1
    unsupported — not in the cited evidence: $1,067M``; None when no check ran."""
    if answer.verify in (None, "off"):
        return None
    if not answer.claims:
        return "claim check: no sentence states a number, date or name or cites evidence"
    counts = answer.claim_counts()
    line = f"claim check: {counts['supported']} of {len(answer.claims)} sentences supported"
    line += "".join(f", {counts[s]} {s}" for s in ("partly", "unsupported", "uncited") if counts[s])
    flagged = [c for c in answer.claims if c.status in ("partly", "unsupported")]
    lacking = list(dict.fromkeys(m for c in flagged for m in c.missing))
    if lacking:
        line += " \u2014 not in the cited evidence: " + ", ".join(lacking[:6]) + (" \u2026" if len(lacking) > 6 else "")
    return line


def format_answer(answer: Answer) -> str:
    """The answer as a person reads it in a terminal, each checked sentence marked."""
    lines = [marked_text(answer).strip(), ""]
    claims = format_claims(answer)
    if claims:
        lines += [claims, ""]
    if answer.citations:
        lines.append("Citations:")
        lines.extend(format_citation(c) for c in answer.citations)
    else:
        lines.append("Citations: none")
    lines.append("")
    routed = format_routed([(r.title or r.doc_id, r.weight, r.named_by, r.party) for r in answer.evidence.routed])
    if routed:
        lines += [*routed, ""]
    meta = f"method {answer.method}"
    if answer.mode:
        meta += f" · mode {answer.mode}"
    meta += " · model " + (
        "used" if answer.model_used else "failed, offline fallback" if answer.warnings else "none (offline)"
    )
    lines.append(meta)
    lines.extend(f"warning: {w}" for w in answer.warnings)
    if answer.usage:
        calls = sum(u.calls for u in answer.usage.values())
        tokens = sum(u.input_tokens + u.output_tokens for u in answer.usage.values())
        images = sum(u.images for u in answer.usage.values())
        lines.append(f"usage: {calls} call(s), {tokens} tokens, {images} image(s)")
    if answer.timings:
        lines.append("timings: " + format_timings(answer.timings))
    return "\n".join(lines)


def cmd_ask(args: argparse.Namespace, ws) -> int:
    if args.questions or args.out:
        return cmd_ask_many(args, ws)
    if not args.question:
        raise InputError("give a question, or --questions FILE --out OUT.jsonl")
    answer = ws.ask(args.question, method=args.method, documents=args.documents, **ask_options(args))
    as_json = args.json or args.full_json
    if args.full_json:
        print(answer.model_dump_json(indent=2))
    elif args.json:
        print(ask_result(answer).model_dump_json(indent=2))
    else:
        print(format_answer(answer))
    if args.highlight:
        paths = write_highlights(ws.store, ws.root, answer, Path(args.highlight))
        stream = sys.stderr if as_json else sys.stdout
        if paths:
            print(f"\nhighlighted {len(paths)} page(s):", file=stream)
            for path in paths:
                print(f"  {path}", file=stream)
        else:
            print("\nno citations to highlight", file=stream)
    return 0


def cmd_ask_many(args: argparse.Namespace, ws) -> int:
    """``--questions FILE --out OUT``: see ``cli.batch``."""
    if not (args.questions and args.out):
        raise InputError("--questions FILE and --out OUT.jsonl go together")
    if args.question or args.highlight or args.json or args.full_json:
        raise InputError("with --questions, give no question, --json or --highlight: every answer goes to --out")
    questions = read_questions(Path(args.questions))
    defaults = ask_options(args)

    def ask_one(question: BatchQuestion):
        method = question.options.get("method", args.method)
        options = {k: v for k, v in defaults.items() if k != "mode"}
        mode = mode_option(method, question.options.get("mode", args.mode))
        if mode is not None:
            options["mode"] = mode
        return ws.ask(question.question, method=method, documents=args.documents, **options)

    progress = TerminalProgress()
    failed = answered = 0
    try:
        for line in answer_all(questions, Path(args.out), ask_one, progress):
            answered += line.result is not None
            failed += line.result is None
    finally:
        progress.close()
    print(
        f"{answered} answered, {failed} failed this run; {args.out} holds "
        f"{len(answered_lines(Path(args.out))[0])} of {len(questions)} answers",
        file=sys.stderr,
    )
    return 1 if failed else 0
