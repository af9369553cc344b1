"""Recall by what a question points at — a label, a lexicon reading, or only its content.

    .venv/bin/python benchmarks/question_kinds.py RECORDS.jsonl [RECORDS.jsonl …] [--baseline hybrid] [-k 5]
        [--no-line-items]

Reads the question records of ``benchmarks/retrieval.py`` / ``docgraph eval`` runs (any
setting: per document, packed, library) and splits every method's recall@k by the kind of
question, as docgraph's own readers see it: one that names a label ("figure 3", "slide 14",
"page 42": ``methods.retrieval.references``), one the bundled lexicon reads (a derived measure, a
statement, the document itself: ``methods.retrieval.lexicon``), and the rest, which only describe
content. Each cell gives the method's recall@k and, with ``--baseline``, its margin over
that method on the same questions; library runs add document recall@1. ``--no-line-items``
splits as a lexicon without line items reads (the split of runs before them). Nothing is run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

KINDS = ("label", "lexicon", "content")


def question_kind(question: str, line_items: bool = True) -> str:
    from docgraph.methods.retrieval.lexicon import lexicon
    from docgraph.methods.retrieval.references import query_references

    if query_references(question):
        return "label"
    reading = lexicon().read(question, line_items=line_items)
    return "lexicon" if reading.labels or reading.terms else "content"


def recall(record: dict, k: int) -> float:
    gold = set(record["gold"])
    return len(gold & set(record["retrieved"][:k])) / len(gold)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="+", type=Path)
    parser.add_argument("--baseline", default=None)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--no-line-items", action="store_true", help="split as a lexicon without line items reads")
    args = parser.parse_args(argv)
    rows: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    documents: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for path in args.records:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("kind") != "question" or record.get("error") or not record.get("gold"):
                continue
            kind = question_kind(record["question"], line_items=not args.no_line_items)
            for group in (kind, "all"):
                where = f"{record.get('benchmark', '')} {record['setting']}"
                rows[(where, group)][record["method"]].append(recall(record, args.k))
                if record.get("gold_documents"):
                    top = record["retrieved"][0].rsplit("|", 1)[0] if record["retrieved"] else None
                    documents[(where, group)][record["method"]].append(float(top in record["gold_documents"]))
    methods = sorted({m for cells in rows.values() for m in cells})
    print("| setting | questions | n | " + " | ".join(f"{m} R@{args.k}" for m in methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    for (setting, group), cells in sorted(rows.items(), key=lambda kv: (kv[0][0], (*KINDS, "all").index(kv[0][1]))):
        base = cells.get(args.baseline) if args.baseline else None
        out = []
        for m in methods:
            values = cells.get(m, [])
            mean = 100 * sum(values) / len(values) if values else float("nan")
            cell = f"{mean:.1f}"
            if base and m != args.baseline and len(base) == len(values):
                cell += f" ({mean - 100 * sum(base) / len(base):+.1f})"
            docs = documents.get((setting, group), {}).get(m)
            if docs:
                cell += f", doc R@1 {100 * sum(docs) / len(docs):.1f}"
            out.append(cell)
        n = max(len(v) for v in cells.values())
        print(f"| {setting} | {group} | {n} | " + " | ".join(out) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
