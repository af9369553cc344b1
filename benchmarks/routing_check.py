"""What the name router alone makes of a set's questions in a library workspace: for each
question, the documents its weight puts first against the question's gold documents. No
retrieval runs, so it takes seconds on any workspace that has been ingested, and shows where
routing will help and where it will mislead before a long retrieval run.

    .venv/bin/python benchmarks/routing_check.py --workspace WS --records RUN/X-records.jsonl
                                                 [--without-file-names] [--show wrong|all|none]

``--records``: a ``benchmarks/retrieval.py`` or ``docgraph eval`` records file (its
questions and their gold documents; one method's records are read). ``--without-file-names``
routes as if every file were named "document.pdf", to see what the covers alone give.

Each question falls in one row: named by name with a gold document alone on top; with a
gold document on top beside others (the period or kind did not tell them apart); with
others on top (wrong); named by kind alone (its gold document of that kind or not); or the
router abstains (the question names nothing: content routing decides). It also counts the
questions that name several parties (``Route.parties``), and of those the ones that compare
them (``Route.comparing``), whose pages take turns in the first slots: a set of
single-company questions should have none of either.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from docgraph.documents.metadata import DocumentMeta
from docgraph.documents.metadata_store import ensure_metadata
from docgraph.methods.retrieval.routing import DocumentRouter
from docgraph.store import open_store

ROWS = (
    "named, gold alone on top",
    "named, gold tied on top",
    "named, wrong",
    "kind, gold of it",
    "kind, wrong",
    "abstains",
)


def questions(records: Path) -> list[tuple[str, str, set[str]]]:
    """(id, question, gold documents' file names without ".pdf") of the first method's question records."""
    found: list[tuple[str, str, set[str]]] = []
    method = None
    with records.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("kind") != "question" or not record.get("gold_documents"):
                continue
            method = method or record["method"]
            if record["method"] == method:
                gold = {Path(name).stem if name.lower().endswith(".pdf") else name for name in record["gold_documents"]}
                found.append((record["qid"], record["question"], gold))
    return found


def without_file_name(label: DocumentMeta) -> DocumentMeta:
    """The label as a file named "document.pdf" would have it: what came from the file name gone."""
    taken = {field: "" for field, source in label.sources.items() if source == "file name"}
    return label.model_copy(update={**taken, "file_name": "document"})


def check(router: DocumentRouter, files: dict[str, str], question: str, gold: set[str]) -> tuple[str, list[str]]:
    """The question's row (``ROWS``) and the documents (file names without extension) the router
    puts on top."""
    route = router.route(question)
    if route is None:
        return ROWS[5], []
    top = [files[d] for d, m in zip(route.doc_ids, route.match) if m == route.match.max()]
    hit = bool(gold & set(top))
    if not route.by_name:
        return (ROWS[3] if hit else ROWS[4]), top
    if not hit:
        return ROWS[2], top
    return (ROWS[0] if len(top) == 1 else ROWS[1]), top


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--records", type=Path, required=True)
    parser.add_argument("--without-file-names", action="store_true")
    parser.add_argument("--show", choices=("wrong", "all", "none"), default="wrong")
    args = parser.parse_args(argv)
    store = open_store(args.workspace)
    documents = store.list_documents()
    labels = ensure_metadata(store, documents)
    if args.without_file_names:
        labels = {d: without_file_name(label) for d, label in labels.items()}
    files = {d.id: Path(d.path).stem for d in documents}
    router = DocumentRouter.build(labels)
    rows: Counter[str] = Counter()
    comparing = several = 0
    for qid, question, gold in questions(args.records):
        row, top = check(router, files, question, gold)
        rows[row] += 1
        route = router.route(question)
        comparing += bool(route is not None and route.comparing)
        several += bool(route is not None and len(route.parties) > 1)
        if args.show == "all" or (args.show == "wrong" and "wrong" in row):
            more = " …" if len(top) > 3 else ""
            print(f"{qid} [{row}] top {top[:3]}{more} gold {sorted(gold)}\n    {question[:110]}")
    total = sum(rows.values())
    print(
        f"\n{args.workspace.name}: {len(documents)} documents, {total} questions with gold documents"
        + (", file names hidden" if args.without_file_names else "")
    )
    print("\n| row | questions | share |\n|---|---|---|")
    for row in ROWS:
        print(f"| {row} | {rows[row]} | {100 * rows[row] / max(total, 1):.1f} |")
    print(
        f"\n{several} question(s) name several parties, {comparing} of them comparing them: "
        "their pages take turns (docs/methods.md)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
