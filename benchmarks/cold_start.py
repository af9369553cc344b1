"""The first answer of a new process: how long a one-shot ``docgraph search`` takes on a
built workspace, with the query tables built in the process against read from the table
cache (``methods.disk_memo``).

    .venv/bin/python benchmarks/cold_start.py --workspace WS [--methods kg4vd,hvm,hybrid]
                                              [--query "..."] [--repeat 2]

Every cell is a fresh ``docgraph -w WS search`` process, timed from start to exit (imports,
model load, tables, the query, printing), the median of ``--repeat`` runs:

- ``no cache``: ``DOCGRAPH_TABLE_CACHE`` empty — every process builds its tables (the baseline);
- ``first``: an empty cache folder — this process builds the tables and writes them;
- ``later``: the same folder again — the tables are read.

The rankings of the three must be identical (checked: the printed page lists are compared).
The workspace must be built for each method; nothing is written to it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from docgraph.cli import main; sys.exit(main())"
QUERY = "What was the capital expenditure in the most recent fiscal year?"


def search_once(workspace: Path, method: str, query: str, cache: str) -> tuple[float, str]:
    """Seconds of one ``docgraph search`` process and the ranked page lines it printed."""
    env = dict(os.environ, DOCGRAPH_TABLE_CACHE=cache)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CLI, "-w", str(workspace), "search", "-m", method, query],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"docgraph search -m {method} failed:\n{done.stderr[-2000:]}")
    pages = "\n".join(line.split("(score")[0] for line in done.stdout.splitlines() if line[:1].isdigit())
    return seconds, pages


def cache_megabytes(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.glob("*.table")) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--methods", default="kg4vd,hvm,hybrid")
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"workspace {args.workspace}; median of {args.repeat} processes per cell\n")
    print("| method | no cache s | first (writes) s | later (reads) s | speed-up | cache MB | same pages |")
    print("|---|---|---|---|---|---|---|")
    for method in args.methods.split(","):
        off = [search_once(args.workspace, method, args.query, "") for _ in range(args.repeat)]
        firsts, laters = [], []
        for _ in range(args.repeat):
            folder = Path(tempfile.mkdtemp(prefix="docgraph-tables-"))
            try:
                firsts.append(search_once(args.workspace, method, args.query, str(folder)))
                laters.append(search_once(args.workspace, method, args.query, str(folder)))
                size = cache_megabytes(folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        lists = {pages for _, pages in off + firsts + laters}
        base, first, later = (statistics.median(s for s, _ in runs) for runs in (off, firsts, laters))
        print(
            f"| {method} | {base:.1f} | {first:.1f} | {later:.1f} | {base / later:.1f}x | {size:.0f} "
            f"| {'yes' if len(lists) == 1 else 'NO'} |"
        )


if __name__ == "__main__":
    main()
