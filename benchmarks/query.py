"""Query latency per stage on MMLongBench-Doc (KG4VD, plus other methods as extra rows).

    .venv/bin/python benchmarks/query.py [--limit-docs 3] [--methods kg4vd,hvm,dense] [--mode auto]
                                         [--workspace benchmarks/.work/mmlongbench] [--json OUT]

Builds the MMLongBench-Doc development documents (``../shared/data/mmlongbench_doc``: 42
documents, 2,196 pages) offline, once, into a persistent workspace that later runs reuse
(adding and building are idempotent and resumable; an interrupted build continues).
``--limit-docs N`` takes the N shortest documents, for quick runs. Then it retrieves
every question of those documents with each method and prints p50/p95 latency:

- KG4VD per stage (``--mode`` forces one mode, e.g. ``document`` for the widest PPR):
  analyzer, page retrieval, entity retrieval, subgraph + PPR, rerank, and their sum —
  everything but model inference (the paper: 0.5 s page retrieval, 0.8 s entity retrieval,
  2.0 s PPR + rerank on a GPU; target here < 50 ms p95 on 2 CPU cores);
- the query embedding (model inference) separately: measured uncached on the bare
  embedder, and as the retrieval saw it (workspace embedding cache, warm on reruns);
- one row per other method in ``--methods`` (registered ones only): wall time of
  ``ws.retrieve``; their own per-stage timings when their Evidence reports them.

The first query of each method is a warm-up (loads vector matrices and the graph) and is
not counted. The offline reranker's passage embeddings come from the workspace cache the
build filled; a cache miss shows up in the rerank row.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DATA = ROOT.parent / "shared" / "data" / "mmlongbench_doc"
DEFAULT_WORKSPACE = ROOT / "benchmarks" / ".work" / "mmlongbench"
KG4VD_STAGES = ("analyzer", "page_retrieval", "entity_retrieval", "subgraph_ppr", "structure_diffusion", "rerank")


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def select_documents(limit: int | None) -> list[Path]:
    """The benchmark's PDFs, shortest first (``documents.tsv`` page counts)."""
    from docgraph.eval.loaders.mmlongbench import read_documents_tsv

    rows = read_documents_tsv(DATA / "documents.tsv")
    names = sorted(rows, key=lambda name: (int(rows[name]["pages"]), name))
    paths = [DATA / "documents" / name for name in names if (DATA / "documents" / name).exists()]
    return paths[:limit] if limit else paths


def prepare(ws, pdfs: list[Path], methods: list[str]) -> dict[str, float]:
    """Add the PDFs and build each method (both no-ops when done); seconds per step."""
    from docgraph.progress import TerminalProgress

    steps = [("add", lambda progress: ws.add(pdfs, progress=progress))]
    steps += [(f"build {m}", lambda progress, m=m: ws.build(m, progress=progress)) for m in methods]
    spent: dict[str, float] = {}
    for name, step in steps:
        start = time.perf_counter()
        progress = TerminalProgress()
        try:
            step(progress)
        finally:
            progress.close()
        spent[name] = time.perf_counter() - start
    return spent


def questions_for(ws, pdfs: list[Path]) -> list[str]:
    from docgraph.eval.loaders.mmlongbench import load_mmlongbench

    names = {p.name for p in pdfs}
    return [item.question for item in load_mmlongbench(DATA).items if set(item.doc_ids) & names]


def bare_query_embedding(ws, questions: list[str]) -> list[float]:
    """Seconds per query of the image embedder's query encoder without the workspace cache."""
    embedder = ws.models.image_embedder
    inner = getattr(embedder, "text_embedder", None) if getattr(embedder, "is_text_fallback", False) else None
    encoder = getattr(inner, "inner", inner) if inner is not None else embedder
    out = []
    for q in questions:
        start = time.perf_counter()
        encoder.embed_queries([q])
        out.append(time.perf_counter() - start)
    return out


def run_method(ws, method: str, questions: list[str], mode: str = "auto", repeat: int = 1) -> dict[str, list[float]]:
    """Per-stage seconds (from Evidence.timings) and the wall time of each retrieve; with
    ``repeat`` > 1 each question is asked that many times and its fastest run is kept (what the
    code costs, less what a busy machine adds)."""
    options = {"mode": mode} if method == "kg4vd" else {}
    samples: dict[str, list[float]] = {}
    ws.retrieve(questions[0], method=method, **options)  # warm-up: loads matrices, the graph
    for q in questions:
        runs = []
        for _ in range(max(1, repeat)):
            start = time.perf_counter()
            evidence = ws.retrieve(q, method=method, **options)
            runs.append((time.perf_counter() - start, evidence))
        wall, evidence = min(runs, key=lambda run: run[0])
        samples.setdefault("retrieve (wall)", []).append(wall)
        for stage, seconds in evidence.timings.items():
            samples.setdefault(stage, []).append(seconds)
        if method == "kg4vd":
            samples.setdefault("kg4vd total excl. model inference", []).append(
                sum(evidence.timings.get(s, 0.0) for s in KG4VD_STAGES)
            )
            samples.setdefault(f"mode {evidence.mode}", []).append(0.0)
    return samples


def table(rows: list[tuple[str, list[float]]]) -> str:
    lines = [f"{'row':<52} {'n':>5} {'p50 ms':>9} {'p95 ms':>9}"]
    for name, values in rows:
        lines.append(
            f"{name:<52} {len(values):>5} {1000 * percentile(values, 0.5):>9.2f} "
            f"{1000 * percentile(values, 0.95):>9.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", default=str(DEFAULT_WORKSPACE), help="persistent benchmark workspace")
    parser.add_argument("--limit-docs", type=int, default=None, help="only the N shortest documents")
    parser.add_argument("--methods", default="kg4vd", help="comma-separated methods to time (kg4vd,hvm,dense …)")
    parser.add_argument(
        "--mode",
        default="auto",
        choices=("auto", "local", "multi_hop", "document"),
        help="KG4VD mode for every question (default: the analyzer decides)",
    )
    parser.add_argument("--limit-questions", type=int, default=None, help="only the first N questions")
    parser.add_argument("--json", metavar="OUT", help="also write the raw samples here")
    parser.add_argument(
        "--as-is",
        action="store_true",
        help="use --workspace as it is (e.g. a packed eval corpus): add and build nothing, ask "
        "every question of --questions",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="ask each question N times and keep its fastest run (steadier on a busy machine)",
    )
    parser.add_argument(
        "--questions",
        default="mmlongbench",
        choices=("mmlongbench", "financebench"),
        help="with --as-is, whose development questions to ask (financebench: a library of its "
        "filings, benchmarks/retrieval.py --sets financebench-library)",
    )
    args = parser.parse_args(argv)

    from docgraph import Workspace
    from docgraph.methods import available_methods

    requested = [m.strip() for m in args.methods.split(",") if m.strip()]
    known = set(available_methods())
    methods = [m for m in requested if m in known]
    for m in sorted(set(requested) - known):
        print(f"skipping {m}: not a registered method (available: {', '.join(sorted(known))})", file=sys.stderr)
    pdfs = select_documents(args.limit_docs)
    with Workspace(args.workspace) as ws:
        if args.as_is:
            from docgraph.eval.loaders import load_benchmark

            pdfs = [Path(d.path) for d in ws.documents()]
            spent = {}
            data = DATA if args.questions == "mmlongbench" else DATA.parent / "financebench"
            questions = [item.question for item in load_benchmark(args.questions, data).items][: args.limit_questions]
        else:
            spent = prepare(ws, pdfs, methods)
            questions = questions_for(ws, pdfs)[: args.limit_questions]
        pages = sum(d.page_count for d in ws.documents() if Path(d.path).name in {p.name for p in pdfs})
        print(f"\n{len(pdfs)} documents, {pages} pages, {len(questions)} questions; workspace {ws.root}")
        print("prepare: " + ", ".join(f"{k} {v:.1f}s" for k, v in spent.items()))
        if not questions:
            print("no questions for these documents")
            return 1
        results: dict[str, dict[str, list[float]]] = {}
        for method in methods:
            results[method] = run_method(ws, method, questions, args.mode, args.repeat)
        embedding = bare_query_embedding(ws, questions)

    rows: list[tuple[str, list[float]]] = []
    if "kg4vd" in results:
        kg = results["kg4vd"]
        rows += [(f"kg4vd {s.replace('_', ' ')}", kg.get(s, [])) for s in KG4VD_STAGES]
        rows.append(("kg4vd total excl. model inference", kg["kg4vd total excl. model inference"]))
        rows.append(("kg4vd query embedding, as retrieved (cache)", kg.get("query_embedding", [])))
        rows.append(("kg4vd retrieve wall time", kg["retrieve (wall)"]))
        modes = {k[5:]: len(v) for k, v in kg.items() if k.startswith("mode ")}
        print("kg4vd modes: " + ", ".join(f"{m} {n}" for m, n in sorted(modes.items())))
    rows.append(("query embedding, uncached (model inference)", embedding))
    for method, samples in results.items():
        if method == "kg4vd":
            continue
        rows.append((f"{method} retrieve wall time", samples["retrieve (wall)"]))
        rows += [(f"{method} {stage}", values) for stage, values in samples.items() if stage != "retrieve (wall)"]
    print(table(rows))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "questions": len(questions),
                    "documents": [p.name for p in pdfs],
                    "prepare_s": spent,
                    "samples": results,
                    "query_embedding_uncached": embedding,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
