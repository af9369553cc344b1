"""Memory of the OpenVINO embedder: by batch budget, and by Ray embedding-task width.

    .venv/bin/python benchmarks/embed_memory.py [--texts 600] [--budgets 4096,2048,1024]
        [--precision auto] [--call-size 64] [--ray-widths 1,2] [--ray-cpus 2]

Passages of 5-500 words cut from real pages of the shared documents, embedded in calls of
``--call-size``. Two tables:

- **Batch budget** (``embed_openvino.BATCH_TOKENS``, tokens per inference batch): each budget
  in a fresh process on one thread, as a Ray embedding worker runs: compile the network,
  embed a warm-up text, then the passages, handing the free heap back after each call
  (``heap``, as the workers do). RSS after compiling, RSS after all calls (what an idle
  worker holds), peak RSS, CPU seconds, and whether the vectors equal the first budget's.
- **Ray task width** (``ray.embed_threads``): each width in a fresh process that starts a
  local cluster of ``--ray-cpus`` CPUs and embeds the passages through ``RayTextEmbedder``.
  Embedding workers, their summed RSS and PSS once done (the model and buffers each worker
  holds for the rest of a build), wall seconds, and whether the vectors equal the first
  width's. Skipped without Ray or with ``--ray-widths ""``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def mixed_passages(n: int, seed: int = 0) -> list[str]:
    """``n`` passages of 5 to 500 words from the text of the shared documents' pages."""
    import pymupdf

    from docgraph.testing.data import shared_data_dir

    words: list[str] = []
    for pdf in sorted((shared_data_dir() / "documents").glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in list(doc)[:40]:
                words += page.get_text().split()
    rng = random.Random(seed)
    passages = []
    for _ in range(n):
        size = rng.choice((5, 12, 30, 60, 120, 250, 500))
        start = rng.randrange(0, max(1, len(words) - size))
        passages.append(" ".join(words[start : start + size]))
    return passages


def measure(budget: int, texts: int, precision: str, call_size: int) -> dict:
    """One budget, in this process (run by ``main`` in a fresh child)."""
    from docgraph.memory import release_free_heap, resident_mb
    from docgraph.models.embedding import embed_openvino

    embed_openvino.BATCH_TOKENS = budget
    passages = mixed_passages(texts)
    embedder = embed_openvino.OpenVinoE5Embedder(threads=1, precision=precision)
    embedder.embed_passages(["warm up"])
    release_free_heap()
    compiled = resident_mb()
    digest = hashlib.sha256()
    cpu = time.process_time()
    for at in range(0, len(passages), call_size):
        digest.update(embedder.embed_passages(passages[at : at + call_size]).tobytes())
        release_free_heap()
    return {
        "budget": budget,
        "compiled_mb": compiled,
        "after_mb": resident_mb(),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cpu_s": time.process_time() - cpu,
        "vectors": digest.hexdigest(),
    }


def embedding_workers_mb() -> list[tuple[float, float]]:
    """(RSS, PSS) in MB of each of this process's descendants that runs docgraph's
    embedding tasks (a Ray worker of that role)."""
    import psutil

    from docgraph.scale.cluster import ROLE_ENV

    sizes = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.environ().get(ROLE_ENV) == "embed":
                memory = proc.memory_full_info()
                sizes.append((memory.rss / 2**20, memory.pss / 2**20))
        except psutil.Error:
            continue
    return sizes


def measure_ray(width: int, texts: int, call_size: int, cpus: int) -> dict:
    """One task width on a fresh local cluster, in this process (a child of ``main``)."""
    import ray

    from docgraph.config import EmbeddingSettings, RaySettings
    from docgraph.models.embedding.embed_local import local_spec
    from docgraph.scale.ray_embed import RayTextEmbedder

    passages = mixed_passages(texts)
    spec = local_spec(EmbeddingSettings(), None)
    embedder = RayTextEmbedder(spec.build(), spec, RaySettings(enabled=True, num_cpus=cpus, embed_threads=width))
    embedder.embed_passages(["warm up"] * 2 * cpus)  # every worker loads the model
    digest = hashlib.sha256()
    start = time.perf_counter()
    for at in range(0, len(passages), call_size):
        digest.update(embedder.embed_passages(passages[at : at + call_size]).tobytes())
    wall = time.perf_counter() - start
    sizes = embedding_workers_mb()
    ray.shutdown()
    return {
        "width": width,
        "workers": len(sizes),
        "rss_mb": sum(r for r, _ in sizes),
        "pss_mb": sum(p for _, p in sizes),
        "wall_s": wall,
        "vectors": digest.hexdigest(),
    }


def child_rows(args: argparse.Namespace, flag: str, values: list[str], env: dict) -> list[dict]:
    """One row per value, each measured by this script run again with ``flag value``."""
    rows = []
    for value in values:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                flag,
                value,
                "--texts",
                str(args.texts),
                "--precision",
                args.precision,
                "--call-size",
                str(args.call_size),
                "--ray-cpus",
                str(args.ray_cpus),
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return rows


def same(rows: list[dict]) -> list[str]:
    return ["same" if row["vectors"] == rows[0]["vectors"] else "DIFFER" for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--budgets", default="4096,2048,1024")
    parser.add_argument(
        "--precision",
        default="auto",
        choices=("auto", "f32"),
        help="auto: bf16 where the CPU computes it natively, else f32",
    )
    parser.add_argument("--call-size", type=int, default=64, help="texts per embed_passages call")
    parser.add_argument("--ray-widths", default="1,2", help="ray.embed_threads values to compare")
    parser.add_argument("--ray-cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ray-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.texts, args.precision, args.call_size)))
        return
    if args.ray_child:
        print(json.dumps(measure_ray(args.ray_child, args.texts, args.call_size, args.ray_cpus)))
        return
    rows = child_rows(args, "--child", args.budgets.split(","), {**os.environ, "OMP_NUM_THREADS": "1"})
    print("| BATCH_TOKENS | RSS compiled MB | RSS after MB | peak RSS MB | CPU s | vectors |")
    print("|---|---|---|---|---|---|")
    for row, vectors in zip(rows, same(rows)):
        print(
            f"| {row['budget']} | {row['compiled_mb']:.0f} | {row['after_mb']:.0f} | {row['peak_mb']:.0f} "
            f"| {row['cpu_s']:.1f} | {vectors} |"
        )
    widths = [w for w in args.ray_widths.split(",") if w.strip()]
    if widths and importlib.util.find_spec("ray") is not None:
        rows = child_rows(args, "--ray-child", widths, dict(os.environ))
        print("\n| ray.embed_threads | embedding workers | RSS MB (sum) | PSS MB (sum) | wall s | vectors |")
        print("|---|---|---|---|---|---|")
        for row, vectors in zip(rows, same(rows)):
            print(
                f"| {row['width']} | {row['workers']} | {row['rss_mb']:.0f} | {row['pss_mb']:.0f} "
                f"| {row['wall_s']:.1f} | {vectors} |"
            )
    print(
        f"\n{args.texts} passages of 5-500 words, calls of {args.call_size}, precision {args.precision}; "
        f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
