"""Where the packed setting loses recall: a breakdown of `benchmarks/retrieval.py` records.

In the packed setting (``--sets mmlongbench-packed``) every MMLongBench-Doc document is one
run of pages of a single long PDF, so a method can lose a question in two ways: its best
page lies in another source document (the question often names none: "figure 3", "this
report"), or it finds the right document but fills the remaining slots with pages of other
documents. This script splits each method's recall@k by question type and by whether the
best page lies in the question's own source document, and, with the per-document run's
records beside it, puts the per-document recall of the same questions next to it:

    .venv/bin/python benchmarks/packed_breakdown.py \\
        --packed OUT/mmlongbench-packed-retrieval-records.jsonl \\
        --per-document OUT/mmlongbench-retrieval-records.jsonl

Columns: ``n`` questions with gold pages; ``R@k`` in the packed run; ``own-doc R@k``: the
same ranking with other documents' pages struck out first (the recall a perfect document
filter would give from the ranked list the record holds, usually 10 deep); ``per-doc R@k``:
the per-document run. A second table gives, for questions whose best page is in the right
document, the share of each slot held by another document's pages and the gold pages per
slot. With ``--baseline METHOD`` a third table gives each method's recall@k margin over that
method, packed and per document, by question type and by whether the question names a part
by label ("figure 3", "slide 14", "page 42": ``methods.retrieval.references``), the kind of question a
packed PDF makes ambiguous. The packed layout is rebuilt from the benchmark (``--data``)
exactly as the run built it: the questions' documents in sorted order.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ingest import shared_documents  # noqa: E402  (benchmarks/ingest.py, beside this file)


def read_records(path: Path) -> dict[str, dict[str, dict]]:
    """``{method: {qid: record}}`` of the question records with gold evidence."""
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "question" and record.get("gold") and not record.get("error"):
            out[record["method"]][record["qid"]] = record
    return out


def source_of(data: Path, qids: set[str]):
    """A function packed page number → source document id, and each question's document."""
    from docgraph.eval.loaders.mmlongbench import load_mmlongbench, pack_documents

    bench = load_mmlongbench(data)
    items = [item for item in bench.items if item.id in qids]
    layout, _ = pack_documents(items, bench.page_counts)
    return (lambda page: layout.from_packed(page)[0]), {item.id: item.doc_ids[0] for item in items}


def recall(gold: list[str], ranked: list[str], k: int) -> float:
    return len(set(gold) & set(ranked[:k])) / len(gold)


def page_number(key: str) -> int:
    return int(key.rsplit("|", 1)[1])


def breakdown(
    packed: dict[str, dict], per_document: dict[str, dict], document_of, question_doc: dict[str, str], k: int
) -> tuple[dict[str, list[tuple[float, float, float | None]]], list[int], list[int], int]:
    """Per group ``(R@k, own-doc R@k, per-doc R@k or None)`` of each question, and over the
    questions whose best page is right: other-document pages and gold pages per slot."""
    groups: dict[str, list[tuple[float, float, float | None]]] = defaultdict(list)
    slots = max((len(r["retrieved"]) for r in packed.values()), default=0)
    other, gold_at, right = [0] * slots, [0] * slots, 0
    for qid, record in packed.items():
        own = question_doc[qid]
        ranked = record["retrieved"]
        in_own = [document_of(page_number(p)) == own for p in ranked]
        kind = (record.get("categories", {}).get("question_type") or ["?"])[0]
        best_right = bool(in_own) and in_own[0]
        filtered = [p for p, mine in zip(ranked, in_own) if mine]
        per_doc = per_document.get(qid)
        row = (
            recall(record["gold"], ranked, k),
            recall(record["gold"], filtered, k),
            recall(per_doc["gold"], per_doc["retrieved"], k) if per_doc else None,
        )
        for group in ("all", kind, f"{kind}, best page {'in' if best_right else 'outside'} its document"):
            groups[group].append(row)
        if best_right:
            right += 1
            for slot, (page, mine) in enumerate(zip(ranked, in_own)):
                other[slot] += not mine
                gold_at[slot] += page in record["gold"]
    return groups, other, gold_at, right


def label_group(question: str) -> str:
    """Whether a question points at a part of its document by label, as the methods read it."""
    from docgraph.methods.retrieval.references import query_references

    return "names a label" if query_references(question) else "names no label"


def margins(
    method: dict[str, dict],
    baseline: dict[str, dict],
    method_per_doc: dict[str, dict],
    baseline_per_doc: dict[str, dict],
    k: int,
) -> dict[str, tuple[int, float, float | None]]:
    """Per group: ``(questions, packed margin, per-document margin)``, recall@k points of
    ``method`` over ``baseline`` on the questions both answered (per document: those of them
    both per-document runs answered too, else None)."""
    rows: dict[str, list[tuple[float, float | None]]] = defaultdict(list)
    for qid in sorted(method.keys() & baseline.keys()):
        record = method[qid]
        packed_gain = recall(record["gold"], record["retrieved"], k) - recall(
            baseline[qid]["gold"], baseline[qid]["retrieved"], k
        )
        mine, theirs = method_per_doc.get(qid), baseline_per_doc.get(qid)
        doc_gain = (
            recall(mine["gold"], mine["retrieved"], k) - recall(theirs["gold"], theirs["retrieved"], k)
            if mine and theirs
            else None
        )
        kind = (record.get("categories", {}).get("question_type") or ["?"])[0]
        for group in ("all", kind, label_group(record.get("question", ""))):
            rows[group].append((packed_gain, doc_gain))
    return {
        group: (
            len(values),
            100 * sum(v[0] for v in values) / len(values),
            100 * sum(v[1] for v in values) / len(values) if all(v[1] is not None for v in values) else None,
        )
        for group, values in rows.items()
    }


def mean(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{100 * sum(known) / len(known):.1f}" if known else "—"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packed", type=Path, required=True, help="records of a mmlongbench-packed run")
    parser.add_argument("--per-document", type=Path, help="records of the per-document run of the same questions")
    parser.add_argument("--data", type=Path, default=None, help="MMLongBench-Doc folder (default: the shared data's)")
    parser.add_argument("--methods", default=None, help="comma-separated (default: every method in the records)")
    parser.add_argument("--baseline", default=None, help="a method to give every other method's margin over")
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args(argv)
    packed = read_records(args.packed)
    per_document = read_records(args.per_document) if args.per_document else {}
    methods = args.methods.split(",") if args.methods else sorted(packed)
    data = args.data or shared_documents().parent / "mmlongbench_doc"
    document_of, question_doc = source_of(data, {q for m in methods for q in packed.get(m, {})})
    k = args.k
    print(f"| method | questions | n | R@{k} | own-doc R@{k} | per-doc R@{k} |\n|---|---|---|---|---|---|")
    slot_rows = []
    for method in methods:
        groups, other, gold_at, right = breakdown(
            packed.get(method, {}), per_document.get(method, {}), document_of, question_doc, k
        )
        for group in sorted(groups, key=lambda g: (g != "all", g)):
            rows = groups[group]
            print(
                f"| {method} | {group} | {len(rows)} | {mean([r[0] for r in rows])} | "
                f"{mean([r[1] for r in rows])} | {mean([r[2] for r in rows])} |"
            )
        share = " ".join(f"{100 * o / right:.0f}" for o in other) if right else "—"
        slot_rows.append(f"| {method} | {right} | {share} | {' '.join(str(g) for g in gold_at)} |")
    print("\nQuestions whose best page is in their own document, slot by slot (1, 2, …):\n")
    print("| method | n | % other-document pages | gold pages |\n|---|---|---|---|")
    print("\n".join(slot_rows))
    if args.baseline:
        print(f"\nRecall@{k} margin over {args.baseline}, points (packed / per document):\n")
        print("| method | questions | n | packed | per document |\n|---|---|---|---|---|")
        for method in methods:
            if method == args.baseline:
                continue
            table = margins(
                packed.get(method, {}),
                packed.get(args.baseline, {}),
                per_document.get(method, {}),
                per_document.get(args.baseline, {}),
                k,
            )
            for group in sorted(table, key=lambda g: (g != "all", g)):
                n, packed_gain, doc_gain = table[group]
                doc = "—" if doc_gain is None else f"{doc_gain:+.1f}"
                print(f"| {method} | {group} | {n} | {packed_gain:+.1f} | {doc} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
