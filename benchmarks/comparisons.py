"""Questions that compare two companies, made from a library run's single-company questions.

    .venv/bin/python benchmarks/comparisons.py --workspace LIBRARY_WORKSPACE \\
        --records RUN/financebench-library-retrieval-records.jsonl [--methods kg4vd,hvm] [-k 5]

Each question of the run that the router (``methods.retrieval.routing``) reads as naming one
company is asked again with another company of the library added — "… Compare it with
Boeing's." — the next company by name with a filing of a year the question names, else the
next. There is no gold page for the added company, so the table counts, over the top ``k``
pages: the recall of the question's own gold pages, how often a page of the added company's
filings is there, and how often both are. Three ways, in one run: routing off
(``route_floor`` 1), routing without turns (``party_turns`` off: the parties weighed alike,
the scores order the pages), and routing with turns (the default). Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

WAYS = {
    "routing off": {"retrieval": {"route_floor": 1.0}},
    "routing, no turns": {"retrieval": {"party_turns": False}},
    "routing with turns": {},
}


def spoken(organisation: str) -> str:
    """An organisation as a question writes it: legal words dropped, an all-capitals label in
    title case ("THE BOEING COMPANY" → "Boeing", "JPMorgan Chase & Co." → "JPMorgan Chase")."""
    from docgraph.methods.retrieval.routing import LEGAL_WORDS

    shouted = not any(c.islower() for c in organisation)
    kept = [w for w in re.findall(r"[\w&'’-]+", organisation) if w.lower() not in LEGAL_WORDS and w != "&"]
    return " ".join(w.capitalize() if shouted and not any(c.isdigit() for c in w) else w for w in kept)


def comparisons(ws, records: list[dict]) -> list[tuple[dict, str, set[str]]]:
    """(record, its question with a second company added, that company's document ids)."""
    from docgraph.methods.retrieval.routing import DocumentRouter, name_words
    from docgraph.methods.retrieval.routing_terms import document_periods, question_years

    labels = ws.metadata()
    router = DocumentRouter.build(labels)
    companies: dict[tuple[str, ...], set[str]] = {}
    for doc_id, label in labels.items():
        companies.setdefault(name_words(label.organisation), set()).add(doc_id)
    order = sorted(companies)
    out = []
    for record in records:
        route = router.route(record["question"])
        if route is None or len(route.parties) != 1:
            continue
        own = name_words(labels[route.parties[0][0]].organisation)
        years = question_years(record["question"])
        others = order[order.index(own) + 1 :] + order[: order.index(own)] if own in order else order
        held = {c: {y for d in companies[c] for y, _ in document_periods(labels[d])} for c in others}
        partner = next((c for c in others if held[c] & years), others[0])
        name = spoken(labels[next(iter(companies[partner]))].organisation)
        out.append((record, f"{record['question']} Compare it with {name}'s.", companies[partner]))
    return out


def main(argv: list[str] | None = None) -> int:
    from docgraph.api import Workspace

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", required=True, type=Path, help="the library workspace of the run")
    parser.add_argument("--records", required=True, type=Path)
    parser.add_argument("--methods", default="kg4vd,hvm")
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args(argv)
    first = args.methods.split(",")[0]
    records = [
        r
        for r in map(json.loads, args.records.read_text(encoding="utf-8").splitlines())
        if r.get("kind") == "question" and r["method"] == first and r.get("gold")
    ]
    with Workspace(args.workspace) as ws:
        asked = comparisons(ws, records)
        names = {d.id: os.path.splitext(os.path.basename(d.path))[0] for d in ws.documents()}
    print(f"{len(asked)} of {len(records)} questions name one company; each is asked with a second added\n")
    print(f"| method | ranking | R@{args.k} own gold | added company in top {args.k} | both |")
    print("|---|---|---|---|---|")
    for method in args.methods.split(","):
        for way, overrides in WAYS.items():
            recall = added = both = 0.0
            with Workspace(args.workspace, overrides=overrides or None) as ws:
                for record, question, partner in asked:
                    pages = ws.retrieve(question, method=method, top_pages=args.k).pages
                    found = {f"{names[p.doc_id]}|{p.page}" for p in pages}
                    gold = {_stem(g) for g in record["gold"]}
                    hit = len(found & gold) / len(gold)
                    other = any(p.doc_id in partner for p in pages)
                    recall, added, both = recall + hit, added + other, both + (hit > 0 and other)
            n = max(len(asked), 1)
            print(f"| {method} | {way} | {100 * recall / n:.1f} | {100 * added / n:.1f} | {100 * both / n:.1f} |")
    return 0


def _stem(gold: str) -> str:
    """A gold page "3M_2018_10K.pdf|60" as "3M_2018_10K|60"."""
    name, page = gold.rsplit("|", 1)
    return f"{os.path.splitext(name)[0] if name.lower().endswith('.pdf') else name}|{page}"


if __name__ == "__main__":
    raise SystemExit(main())
