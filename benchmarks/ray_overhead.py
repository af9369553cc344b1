"""Ray's overhead (issue 14): the same ingest and offline builds with the default runner
(page workers in processes, one per core) and on a local Ray cluster of as many CPUs.

    .venv/bin/python benchmarks/ray_overhead.py [--docs N] [--methods dense,kg4vd]
        [--ray-cpus 2] [--work benchmarks/.work/ray_overhead]

Each runner gets a fresh SQLite workspace under ``--work`` (cold caches: nothing is shared
between the two), adds the ``--docs`` smallest PDFs of the shared ``documents/`` folder
(``DOCGRAPH_SHARED_DATA``, else ``../shared/data``; 0 = all), then builds each method. It
prints wall seconds per phase (after a warm-up that loads imports and the
text embedder in this process) for both runners and their ratio (the acceptance asks
Ray ≤ 1.3× the process-pool wall time on 2 CPUs), then whether the two workspaces agree:
the same pages and components, bit-identical vectors in every namespace, and the same
ranked pages for one question per document title.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from ingest import shared_documents  # noqa: E402  (benchmarks/ingest.py, beside this file)


def smallest_documents(count: int) -> list[Path]:
    """The ``count`` smallest shared PDFs by size (0 = all), in name order."""
    pdfs = sorted(shared_documents().glob("*.pdf"), key=lambda p: p.stat().st_size)
    return sorted(pdfs[:count] if count else pdfs)


def run(root: Path, files: list[Path], methods: list[str], overrides: dict) -> dict[str, float]:
    """Add ``files`` and build ``methods`` in a fresh workspace; wall seconds per phase."""
    from docgraph import Workspace

    shutil.rmtree(root, ignore_errors=True)
    seconds: dict[str, float] = {}
    with Workspace(root, overrides=overrides) as ws:
        started = time.perf_counter()
        ws.add(files)
        seconds["add"] = time.perf_counter() - started
        print(f"{root.name}: {sum(d.page_count for d in ws.documents())} pages added", flush=True)
        for method in methods:
            started = time.perf_counter()
            ws.build(method)
            seconds[f"build {method}"] = time.perf_counter() - started
    return seconds


def warm_up(root: Path) -> None:
    """Imports and the text embedder loaded once in this process, so that neither timed
    runner pays for them (Ray's workers still load their own: that is its overhead)."""
    from docgraph import Workspace

    shutil.rmtree(root, ignore_errors=True)
    with Workspace(root) as ws:
        ws.models.text_embedder.embed_passages(["warm up"])
    shutil.rmtree(root, ignore_errors=True)


def differences(local: Path, distributed: Path, methods: list[str]) -> list[str]:
    """What differs between the two workspaces (empty: they agree)."""
    from docgraph import Workspace

    found: list[str] = []
    with Workspace(local) as a, Workspace(distributed) as b:
        docs_a, docs_b = a.documents(with_pages=True), b.documents(with_pages=True)
        if [d.id for d in docs_a] != [d.id for d in docs_b]:
            return ["different documents"]
        for da, db in zip(docs_a, docs_b):
            rows = [[(p.number, [(c.id, c.kind, c.text) for c in p.components]) for p in d.pages] for d in (da, db)]
            if rows[0] != rows[1]:
                found.append(f"pages of {da.title}")
        for namespace in sorted(a.store.vector_models()):
            keys_a, matrix_a = a.store.load_vectors(namespace)
            keys_b, matrix_b = b.store.load_vectors(namespace)
            if keys_a != keys_b or not np.array_equal(matrix_a, matrix_b):
                found.append(f"vectors {namespace}")
        for method in methods:
            for doc in docs_a:
                question = f"What does {doc.title} say?"
                pages = [[(p.doc_id, p.page) for p in ws.retrieve(question, method=method).pages] for ws in (a, b)]
                if pages[0] != pages[1]:
                    found.append(f"{method} ranking for {question!r}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=3, help="the N smallest shared PDFs (0 = all)")
    parser.add_argument("--methods", default="dense,kg4vd", help="comma-separated methods to build")
    parser.add_argument("--ray-cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / ".work" / "ray_overhead")
    args = parser.parse_args()
    files, methods = smallest_documents(args.docs), [m for m in args.methods.split(",") if m]
    print(f"{len(files)} documents: {', '.join(f.name for f in files)}", flush=True)
    warm_up(args.work / "warm-up")
    local = run(args.work / "local", files, methods, {})
    ray_settings = {"ray": {"enabled": True, "num_cpus": args.ray_cpus}}
    started = time.perf_counter()
    import ray

    ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False)
    startup = time.perf_counter() - started
    try:
        distributed = run(args.work / "ray", files, methods, ray_settings)
    finally:
        ray.shutdown()
    print(f"\nlocal Ray cluster start: {startup:.1f} s (not counted below)\n")
    print("| phase | process pool s | Ray s | Ray / pool |\n|---|---|---|---|")
    for phase in local:
        print(f"| {phase} | {local[phase]:.1f} | {distributed[phase]:.1f} | {distributed[phase] / local[phase]:.2f} |")
    total_local, total_ray = sum(local.values()), sum(distributed.values())
    print(f"| total | {total_local:.1f} | {total_ray:.1f} | {total_ray / total_local:.2f} |")
    found = differences(args.work / "local", args.work / "ray", methods)
    print(
        "\nresults identical: pages, components, every vector, rankings"
        if not found
        else "\nDIFFERENT: " + "; ".join(found)
    )


if __name__ == "__main__":
    main()
