"""Questions that name a part of a document by label, made from the documents themselves.

    .venv/bin/python benchmarks/label_questions.py [--data ../shared/data]
        [--workspace-root results/eval-corpora] [--methods bm25,hybrid,kg4vd,hvm] [--limit-docs N]

Issue 12 found most of the graph methods' margin over flat retrieval in the 12 % of
MMLongBench-Doc questions that name a label ("figure 3", "slide 14"), and those questions
are few. This script asks many more, about the same 42 documents: for every label that a
line of exactly one page's text starts with (PyMuPDF's text, read here with its own
patterns, not the resolver's) — "Figure 4", "TABLE II", "NOTE 10 —", "Item 7A.", "Section
2.1", "Appendix B", a numbered heading "3.2 Results" (asked as "section 3.2"); not on a page
listing four or more of its kind — it asks "What does <label> show?", and for a label numbered in
Roman numerals also the same question with the Arabic number ("Table 2" for "TABLE II").
The gold page is that page. Each method ranks the pages of the document's per-document
eval workspace (built by ``benchmarks/retrieval.py`` under the same ``--workspace-root``;
documents without one are skipped), and kg4vd / hvm run once more with
``retrieval.references = false`` (the ``…-no-refs`` rows). Prints top-1 and recall@5 by
label kind. Nothing is built or changed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

KINDS = {
    "figure": "Figure",
    "fig.": "Figure",
    "table": "Table",
    "section": "Section",
    "note": "Note",
    "item": "Item",
    "appendix": "Appendix",
}
_LINE = re.compile(
    r"^\s*(figure|fig\.|table|section|note|item|appendix)\s+"
    r"(\d{1,3}(?:\.\d{1,2})?[A-Ca-c]?|[IVX]{1,5}|[A-H](?:\.\d{1,2})?)"
    r"\s*(?:[:\u2014\u2013-]|\.(?!\d)|$|\s+(?-i:[A-Z(]))",
    re.IGNORECASE,
)
_ROMAN = {
    "I": 1,
    "II": 2,
    "III": 3,
    "IV": 4,
    "V": 5,
    "VI": 6,
    "VII": 7,
    "VIII": 8,
    "IX": 9,
    "X": 10,
    "XI": 11,
    "XII": 12,
    "XIII": 13,
    "XIV": 14,
    "XV": 15,
}
_HEADING = re.compile(r"^\s*(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)\s+[A-Z][a-z]+")  # "3.2 Results"
NUMBERED = "Section (numbered heading)"
LIST_LINES = 4  # a page starting this many lines with labels of one kind lists them (contents, list of figures)


def defined_labels(pdf: Path) -> dict[tuple[str, str], int]:
    """``(kind, number as printed) -> page`` for every label a line of exactly one page starts
    with, pages that list a kind's labels left out. Chapters are not asked about: books repeat
    "Chapter 3. Title" as a running head and spell the chapter's own heading ("CHAPTER EIGHTEEN")."""
    import pymupdf

    pages: dict[tuple[str, str], set[int]] = defaultdict(set)
    with pymupdf.open(pdf) as doc:
        for index, page in enumerate(doc):
            found: dict[str, set[str]] = defaultdict(set)
            for line in page.get_text().splitlines():
                match = _LINE.match(line)
                if not match:
                    if heading := _HEADING.match(line):
                        found[NUMBERED].add(heading.group(1))
                    continue
                kind, number = KINDS[match.group(1).lower()], match.group(2)
                if number[0].isalpha() and number.upper() not in _ROMAN and kind != "Appendix":
                    continue  # a lettered table or figure is no label here
                found[kind].add(number)
            for kind, numbers in found.items():
                if len(numbers) < LIST_LINES:
                    for number in numbers:
                        pages[(kind, number)].add(index + 1)
    return {label: next(iter(found)) for label, found in pages.items() if len(found) == 1}


def questions(labels: dict[tuple[str, str], int]) -> list[tuple[str, str, int]]:
    """``(kind, question, gold page)``: one per label, two for a Roman-numbered one."""
    out = []
    for (kind, number), page in sorted(labels.items()):
        if kind == NUMBERED:
            out.append((kind, f"What does section {number} describe?", page))
            continue
        out.append((kind, f"What does {kind} {number} show?", page))
        if number in _ROMAN and kind != "Appendix":
            out.append((f"{kind} (Roman, asked in Arabic)", f"What does {kind} {_ROMAN[number]} show?", page))
    return out


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo / "src"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(repo.parent / "shared" / "data"))
    parser.add_argument("--workspace-root", default="results/eval-corpora")
    parser.add_argument("--methods", default="bm25,hybrid,kg4vd,hvm")
    parser.add_argument("--limit-docs", type=int, default=None)
    args = parser.parse_args(argv)

    from docgraph import Workspace
    from docgraph.eval.corpus import per_document_specs
    from docgraph.eval.loaders import load_benchmark
    from docgraph.eval.loaders.mmlongbench import by_document
    from docgraph.eval.records import ranked_pages

    bench = load_benchmark("mmlongbench", Path(args.data) / "mmlongbench_doc")
    specs = per_document_specs(Path(args.workspace_root), bench.name, by_document(bench.items), bench.documents)
    variants = [(m, {}) for m in args.methods.split(",")]
    variants += [(f"{m}-no-refs", {"references": False}) for m in args.methods.split(",") if m in ("kg4vd", "hvm")]
    hits: dict[str, dict[str, list[tuple[bool, bool]]]] = defaultdict(lambda: defaultdict(list))
    used = 0
    for spec in specs[: args.limit_docs]:
        if not (spec.folder / "docgraph.sqlite").exists():
            continue
        asked = questions(defined_labels(spec.files[0]))
        if not asked:
            continue
        used += 1
        for name, retrieval in variants:
            method = name.removesuffix("-no-refs")
            with Workspace(spec.folder, overrides={"retrieval": retrieval}, create=False) as ws:
                for kind, question, gold in asked:
                    ranked = [p.page for p in ranked_pages(ws.retrieve(question, method=method))[:5]]
                    for key in ("all", kind):
                        hits[name][key].append((ranked[:1] == [gold], gold in ranked))
    kinds = sorted({k for by_kind in hits.values() for k in by_kind if k != "all"})
    print(
        f"{used} documents; questions per kind: "
        + ", ".join(f"{k} {len(next(iter(hits.values()))[k])}" for k in ["all", *kinds])
        if hits
        else "no workspaces"
    )
    print("\n| method | " + " | ".join(["all", *kinds]) + " |")
    print("|---|" + "---|" * (len(kinds) + 1))
    for name, by_kind in hits.items():
        cells = [
            f"{100 * sum(t for t, _ in v) / len(v):.0f} / {100 * sum(f for _, f in v) / len(v):.0f}"
            if (v := by_kind.get(k))
            else ""
            for k in ["all", *kinds]
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\ncells: top-1 / recall@5, %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
