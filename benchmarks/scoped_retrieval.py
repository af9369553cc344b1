"""A library question asked of one chosen document: restricted retrieval against filtering.

    .venv/bin/python benchmarks/scoped_retrieval.py --workspace LIBRARY_WORKSPACE \\
        --records RUN/<set>-library-retrieval-records.jsonl [--methods kg4vd,hvm] [-k 5] [--depth 20]

Every question of a library run (``benchmarks/retrieval.py --sets …-library``) is asked again
as a user who knows its document would: ``documents=[that document]``
(``methods.retrieval.scope``), and, for comparison, the way a method without that capability
is served — the library's ``--depth`` best pages filtered to the document. Prints recall@k of
the gold pages and how many of the k slots each way fills. Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def main(argv: list[str] | None = None) -> int:
    from docgraph.api import Workspace

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", required=True, type=Path, help="the library workspace of the run")
    parser.add_argument("--records", required=True, type=Path)
    parser.add_argument("--methods", default="kg4vd,hvm")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--depth", type=int, default=20, help="pages the filtered ranking is taken from")
    args = parser.parse_args(argv)
    lines = args.records.read_text(encoding="utf-8").splitlines()
    first = args.methods.split(",")[0]
    questions = [
        r
        for r in map(json.loads, lines)
        if r.get("kind") == "question" and r["method"] == first and r.get("gold") and r.get("gold_documents")
    ]
    print(f"| method | ranking | R@{args.k} | slots of {args.k} filled (mean) | fewest |")
    print("|---|---|---|---|---|")
    with Workspace(args.workspace) as ws:
        id_of: dict[str, str] = {}
        for doc in ws.documents():
            name = os.path.basename(doc.path)
            id_of[name] = id_of[os.path.splitext(name)[0]] = doc.id
        for method in args.methods.split(","):
            found: dict[str, list[tuple[float, int]]] = {"filtered": [], "restricted": []}
            for record in questions:
                doc = id_of[record["gold_documents"][0]]
                gold = {int(g.rsplit("|", 1)[1]) for g in record["gold"]}
                deep = ws.retrieve(record["question"], method=method, top_pages=args.depth).pages
                lists = {
                    "filtered": [p.page for p in deep if p.doc_id == doc][: args.k],
                    "restricted": [
                        p.page
                        for p in ws.retrieve(
                            record["question"], method=method, top_pages=args.depth, documents=[doc]
                        ).pages
                    ][: args.k],
                }
                for way, pages in lists.items():
                    found[way].append((len(gold & set(pages)) / len(gold), len(pages)))
            for way, rows in found.items():
                recall = 100 * sum(r for r, _ in rows) / len(rows)
                filled = sum(n for _, n in rows) / len(rows)
                print(f"| {method} | {way} | {recall:.1f} | {filled:.2f} | {min(n for _, n in rows)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
