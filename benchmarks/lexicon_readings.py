"""Every development question the lexicon reads, and whether its reading points at a gold page.

    .venv/bin/python benchmarks/lexicon_readings.py --workspace-root /tmp/ev/root [--data ../shared/data]
        [--sets mmlongbench,financebench] [--out results/lexicon_readings.md]

A lexicon reading (``methods.retrieval.lexicon``: a derived measure's statements, a named statement,
the cover for a question about the document itself) takes a top slot from content, so a
wrong one costs. For each set this script reads every question with the bundled lexicon and,
for those it fires on, lists what was read and the pages the reading points at in the
question's own documents — from the set's library workspace (built by
``benchmarks/retrieval.py --sets <set>-library``, KG4VD's layer) — and whether one of them
is a gold page (the reading's precision). Nothing is built or changed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SETS = {"mmlongbench": "mmlongbench_doc", "financebench": "financebench"}


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo / "src"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(repo.parent / "shared" / "data"))
    parser.add_argument("--workspace-root", default="results/eval-corpora")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--out", default=None, help="also write the Markdown here")
    args = parser.parse_args(argv)
    lines: list[str] = []
    for name in [s for s in args.sets.split(",") if s]:
        lines += readings(name, Path(args.data) / SETS[name], Path(args.workspace_root))
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def readings(name: str, folder: Path, root: Path) -> list[str]:
    """The Markdown section of one set (see the module docstring)."""
    from docgraph.api import Workspace
    from docgraph.eval.corpus import library_spec
    from docgraph.eval.loaders import load_benchmark
    from docgraph.methods.kg4vd.retrieval import load_layer
    from docgraph.methods.retrieval.lexicon import lexicon
    from docgraph.methods.retrieval.vector_index import load_index

    bench = load_benchmark(name, folder)
    spec = library_spec(root, bench.name, bench.items, bench.documents)
    if not spec.folder.is_dir():
        return [
            f"## {name}: no library workspace at {spec.folder}; run benchmarks/retrieval.py "
            f"--sets {name}-library first",
            "",
        ]
    read = lexicon()
    rows, right = [], 0
    with Workspace(spec.folder) as ws:
        names = {d.id: spec.doc_names.get(Path(d.path).name) for d in ws.documents()}
        layer = load_layer(ws.context(), load_index(ws.store, "kg4vd.page"))
        for item in bench.items:
            reading = read.read(item.question)
            if not reading.labels and not reading.terms:
                continue
            pointed = layer.referenced_pages("", reading.labels) if reading.labels else None
            pages = (
                []
                if pointed is None
                else sorted(
                    (names.get(doc), page)
                    for (doc, page), w in zip(layer.pages, pointed)
                    if w > 0 and names.get(doc) in item.doc_ids
                )
            )
            hit = bool(set(pages) & set(item.gold_pages))
            right += hit
            what = ", ".join(f"{kind}:{value}" for kind, value in reading.labels) or "inputs only"
            rows.append(
                f"| {item.question[:90].replace('|', '/')} | {what} | "
                f"{', '.join(str(p) for _, p in pages) or '—'} | "
                f"{', '.join(str(p) for _, p in item.gold_pages) or '—'} | {'yes' if hit else 'no'} |"
            )
    return [
        f"## {name}: {len(rows)} of {len(bench.items)} questions read, {right} pointing at a gold page",
        "",
        "| question | reading | pages pointed at (own document) | gold pages | right |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]


if __name__ == "__main__":
    sys.exit(main())
