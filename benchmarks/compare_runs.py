"""Two retrieval runs compared question by question: are the rankings the same?

    .venv/bin/python benchmarks/compare_runs.py RUN_A RUN_B [--depth 10] [--show 3]

``RUN_A`` and ``RUN_B`` are ``--out`` folders of ``benchmarks/retrieval.py`` (or of
``docgraph eval``). For every records file the two share and every (setting, method), one
row: questions in both; how many ranked lists are identical to ``--depth`` (same units in
the same order); how many have the same top-5 set; recall@5 of each run; and, over the
identical lists, the largest absolute score difference; how many questions B answers better
and worse at recall@5, and the two-sided sign test's p of those counts (whether B differs
from A more than near-ties flipping either way would). Then up to ``--show`` questions
whose lists differ, with both lists. Used for issue 14's "the same table from a PostgreSQL
workspace as from a SQLite one", for issue 13's "one embedding engine against another",
and to check that a refactor leaves rankings alone.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from math import comb
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from docgraph.eval.records import question_key, read_records

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args(argv)
    a_dir, b_dir = Path(args.run_a), Path(args.run_b)
    shared = sorted(p.name for p in a_dir.glob("*-records.jsonl") if (b_dir / p.name).is_file())
    if not shared:
        print(f"no records file in both {a_dir} and {b_dir}", file=sys.stderr)
        return 2
    print(
        "| records | setting | method | questions | identical lists | same top-5 set | "
        "recall@5 A | recall@5 B | max score diff | B better / worse | sign p |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    differing: list[tuple[dict, dict]] = []
    for name in shared:
        b_records = {question_key(r): r for r in read_records(b_dir / name) if r.get("kind") == "question"}
        groups: dict[tuple[str, str], list[tuple[dict, dict]]] = defaultdict(list)
        for a in read_records(a_dir / name):
            b = b_records.get(question_key(a)) if a.get("kind") == "question" else None
            if b is not None and not a.get("error") and not b.get("error"):
                groups[(a.get("setting"), a.get("method"))].append((a, b))
        for (setting, method), pairs in sorted(groups.items()):
            row = compare(pairs, args.depth)
            differing += row.pop("differing")
            print(
                f"| {name.removesuffix('-records.jsonl')} | {setting} | {method} | {row['questions']} | "
                f"{row['identical']} | {row['same_top5']} | {row['recall_a']:.1f} | {row['recall_b']:.1f} | "
                f"{row['max_diff']:.2g} | {row['better']} / {row['worse']} | "
                f"{sign_test(row['better'], row['worse']):.2f} |"
            )
    for a, b in differing[: args.show]:
        print(
            f"\n{a['method']} {a['corpus']} {a['qid']}:\n  A {a['retrieved'][: args.depth]}\n"
            f"  B {b['retrieved'][: args.depth]}"
        )
    return 0


def compare(pairs: list[tuple[dict, dict]], depth: int) -> dict:
    """The counts of one (setting, method) group; ``differing`` holds the pairs whose lists differ."""
    identical = same_top5 = better = worse = 0
    max_diff = 0.0
    hits_a = hits_b = 0.0
    differing = []
    for a, b in pairs:
        ra, rb = a.get("retrieved", [])[:depth], b.get("retrieved", [])[:depth]
        if ra == rb:
            identical += 1
            sa, sb = a.get("retrieved_scores") or [], b.get("retrieved_scores") or []
            max_diff = max([max_diff, *(abs(x - y) for x, y in zip(sa[:depth], sb[:depth]))])
        else:
            differing.append((a, b))
        same_top5 += set(ra[:5]) == set(rb[:5])
        gold = set(a.get("gold") or [])
        if gold:
            recall_a, recall_b = len(gold & set(ra[:5])) / len(gold), len(gold & set(rb[:5])) / len(gold)
            hits_a += recall_a
            hits_b += recall_b
            better += recall_b > recall_a
            worse += recall_b < recall_a
    n = max(1, sum(1 for a, _ in pairs if a.get("gold")))
    return {
        "questions": len(pairs),
        "identical": identical,
        "same_top5": same_top5,
        "max_diff": max_diff,
        "recall_a": 100 * hits_a / n,
        "recall_b": 100 * hits_b / n,
        "better": better,
        "worse": worse,
        "differing": differing,
    }


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact sign test: the probability, were each differing question equally likely
    to go either way, of a split at least as uneven as ``better`` / ``worse`` (1.0 for none)."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(better, worse) + 1)) / 2**n
    return min(1.0, 2 * tail)


if __name__ == "__main__":
    sys.exit(main())
