"""Scale benchmark (issue 14): a >= 10,000-page corpus ingested and built offline on each store backend.

    .venv/bin/python benchmarks/scale.py [--pages 10000] [--backends sqlite,postgres]
        [--methods kg4vd,hvm,bm25,dense,hybrid,pages,hipporag] [--work benchmarks/.work/scale]
        [--questions 50] [--ray ADDRESS] [--ray-cpus N] [--poller-nice N] [--fresh | --report]

**Corpus** (``<work>/corpus``): whole documents until ``--pages`` pages: every PDF of
``documents/``, ``kg4vd_test/`` and ``mmlongbench_doc/documents/`` of the shared data
(``DOCGRAPH_SHARED_DATA``, else ``../shared/data``), each folder sorted by name, files with
the bytes of an earlier one left out, then the HotpotQA and MuSiQue passages rendered one per
page by ``eval.corpus.passage_spec`` (only when needed); hard links, else copies. Still short,
the same sources again as ``<name>-copy2.pdf``, ``-copy3`` …: re-saved with another title,
so another sha256 (ingest skips same-content files), but the same texts (their embeddings
come from the cache: copies build faster than new pages would).

**Backends**: ``sqlite``, a local workspace (``<work>/sqlite``) with the default runner (page
workers in processes, one per core); ``postgres``, the rows in schema ``scale`` of a
PostgreSQL 16 + pgvector server from the ``pgserver`` wheel in ``<work>/pgdata`` (as
``docgraph.testing.postgres`` starts it for tests), ingest and embedding on Ray
(``ray.enabled``: a local cluster of ``--ray-cpus`` CPUs, default all cores, or ``--ray``).
Each ingests the corpus, then builds each of ``--methods`` offline (default settings).

**Measured**, one row per backend and phase (ingest, each build):

- ``wall s``, ``pages/min``; ``CPU s``: user + system seconds of every process counted below
  (sampled: one living under 0.25 s is missed), which a busy machine distorts less than wall
  time; ``load``: the 1-minute load average, mean of the phase's start and end;
- ``RSS MB``: the peak, sampled every 0.25 s with psutil, of the summed resident memory of
  this process, its descendants (page workers; Ray's GCS, raylet, workers) and the PostgreSQL
  server's processes (shared pages count once per process: it overstates); ``PSS MB``: the
  peak of the same sum in proportional set size (a shared page split among the processes
  mapping it: PostgreSQL's shared buffers, Ray's object store and the libraries count once),
  with the six largest processes at that peak in ``state.json`` (``pss_top``); ``main MB``: this
  process alone. Without psutil: ``ru_maxrss`` of this process and its largest reaped child;
- ``db MB``: the SQLite file (with its WAL) or ``pg_total_relation_size`` (indexes and TOAST
  included) of the schema's tables; ``files MB``: the rest of the workspace folder;
- ``q`` ms (p50/p95/max): ``Workspace.retrieve`` on ``--questions`` questions (the first of
  ``mmlongbench_doc/samples.json``, else one per document title) in a freshly opened
  workspace whose text embedder keeps query vectors in memory: each question is asked once
  (embedding it, loading the index), then the second round is timed, so the times EXCLUDE
  the query embedding and its cache lookup;
- ``ls`` and ``status`` ms (p50/p95/max): what ``docgraph ls`` and ``docgraph status`` call
  (``Workspace.documents()``, ``Workspace.status()``), timed every 0.5 s during the phase by
  one long-lived process per backend with its own workspace handle, as the web app would
  (its first, cold round is not counted). It runs at the benchmark's niceness unless
  ``--poller-nice`` says otherwise: under a benchmark at nice 19 beside other work it
  would time its own wait for the CPU, not what a user's command at normal priority sees.
  Below the table: how many of those calls took longer than 200 ms (issue 14's bound).

**Resumable**: all state is under ``--work``; ``state.json`` records each finished phase with
its measurements, so a rerun skips it and reprints its row; an unfinished ingest or build
resumes per page (its row is then marked ``*``: it measured the rest only). ``--fresh`` wipes
the work folder first; ``--report`` runs nothing and prints the table of ``state.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

try:
    import psutil
except ImportError:  # RSS and CPU then come from getrusage (module doc)
    psutil = None

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from ingest import shared_documents  # noqa: E402  (benchmarks/ingest.py, beside this file)
from scale_corpus import assemble  # noqa: E402  (benchmarks/scale_corpus.py)
from scale_measure import MB, POLL_S, SLOW_MS, Poller, measured, quantiles  # noqa: E402

DEFAULT_WORK = ROOT / "benchmarks" / ".work" / "scale"
METHODS = "kg4vd,hvm,bm25,dense,hybrid,pages,hipporag"
PG_SCHEMA = "scale"


def questions(data: Path, n: int) -> list[str]:
    samples = data / "mmlongbench_doc" / "samples.json"
    if not samples.exists():
        return []
    return list(dict.fromkeys(str(s["question"]) for s in json.loads(samples.read_text(encoding="utf-8"))))[:n]


# --------------------------------------------------------------------------- backends
@contextmanager
def backend(name: str, work: Path, args: argparse.Namespace) -> Iterator[tuple[dict, Callable[[], int], list[int]]]:
    """(workspace overrides, bytes of the rows, pids of server processes) of backend ``name``."""
    root = work / name
    if name == "sqlite":
        yield {}, lambda: sum(f.stat().st_size for f in root.glob("docgraph.sqlite*")), []
        return
    import psycopg

    from docgraph.testing.postgres import postgres_settings, start_postgres

    server, url = start_postgres(work / "pgdata")

    def size() -> int:
        with psycopg.connect(url) as conn:
            return int(
                conn.execute(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                    "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                    (PG_SCHEMA,),
                ).fetchone()[0]
            )

    ray = {"enabled": True, "address": args.ray, "num_cpus": args.ray_cpus or None}
    try:
        yield {**postgres_settings(url, PG_SCHEMA), "ray": ray}, size, [server.get_postmaster_info().pid]
    finally:
        if "ray" in sys.modules and sys.modules["ray"].is_initialized():
            sys.modules["ray"].shutdown()
        server.cleanup()


def files_bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.name.startswith("docgraph.sqlite"))


def assemble_apart(data: Path, work: Path, pages: int) -> dict[str, Any]:
    """``assemble`` in a child process: rendering the passage PDFs leaves this process's heap
    at its peak (~330 MB at 10,000 pages), which the ingest's memory would then count."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(assemble, data, work, pages).result()


class QueryMemo:
    """The workspace's text embedder, with query vectors remembered in memory."""

    def __init__(self, inner) -> None:
        self.inner, self.memo = inner, {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_queries(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.inner.embed_queries(missing)))
        return np.stack([self.memo[t] for t in texts]) if texts else self.inner.embed_queries(texts)


def query_latency(root: Path, overrides: dict, method: str, qs: list[str]) -> dict[str, Any]:
    """Second-round latency of ``retrieve`` (module doc): ``q_ms`` = [p50, p95, max]."""
    from docgraph import Workspace

    with Workspace(root, overrides=overrides) as ws:
        ws.models._objects["text_embedder"] = QueryMemo(ws.models.text_embedder)  # before any image embedder
        qs = qs or [f"What does {d.title} say?" for d in ws.documents()][:50]
        for q in qs:
            ws.retrieve(q, method=method)
        times = []
        for q in qs:
            started = time.perf_counter()
            ws.retrieve(q, method=method)
            times.append(time.perf_counter() - started)
    return {"q_ms": quantiles(times), "questions": len(qs)}


# --------------------------------------------------------------------------- phases
def load_state(work: Path) -> dict[str, Any]:
    path = work / "state.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def save_state(work: Path, state: dict[str, Any]) -> None:
    tmp = work / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    tmp.replace(work / "state.json")


def run_backend(
    name: str, work: Path, args: argparse.Namespace, state: dict, paths: list[Path], methods: list[str], qs: list[str]
) -> None:
    from docgraph import Workspace
    from docgraph.progress import TerminalProgress

    runs = state.setdefault("runs", {}).setdefault(name, {})
    todo = ["ingest"] + [f"build {m}" for m in methods] + [f"query {m}" for m in methods]
    if all(phase in runs for phase in todo):
        print(f"{name}: every phase finished before, skipped", flush=True)
        return
    root = work / name
    with backend(name, work, args) as (overrides, db_bytes, servers):

        def finished(phase: str, row: dict[str, Any]) -> None:
            row.update(db_mb=db_bytes() / MB, files_mb=files_bytes(root) / MB, done=time.strftime("%H:%M:%S"))
            runs[phase] = row
            save_state(work, state)
            took = f"in {row['wall_s']:.1f} s" if "wall_s" in row else f"q p50/p95/max {cell(row['q_ms'], 0)} ms"
            print(f"{name}: {phase} done {took}", flush=True)

        def ingest() -> None:
            with Workspace(root, overrides=overrides) as ws:
                report = ws.ingest(paths, progress=TerminalProgress())
            for failure in report.failures:
                print(f"failed: {failure}", file=sys.stderr)

        def build(method: str) -> Callable[[], None]:
            def run() -> None:
                with Workspace(root, overrides=overrides) as ws:
                    ws.build(method, progress=TerminalProgress())

            return run

        with Workspace(root, overrides=overrides):
            pass  # creates the workspace (and its schema) before the poller opens it
        poller = Poller(root, overrides, args.poller_nice)
        if "ingest" in runs:
            print(f"{name}: ingest finished before, skipped", flush=True)
        else:
            with Workspace(root, overrides=overrides) as ws:
                before = len(ws.documents())
            finished("ingest", {**measured(poller, servers, ingest), "resumed": before > 0})
        for method in methods:
            phase = f"build {method}"
            if phase in runs:
                print(f"{name}: {phase} finished before, skipped", flush=True)
            else:
                with Workspace(root, overrides=overrides) as ws:
                    resumed = bool(ws.status().get(method, {}).get("built_pages"))
                finished(phase, {**measured(poller, servers, build(method)), "resumed": resumed})
            if f"query {method}" not in runs:
                finished(f"query {method}", query_latency(root, overrides, method, qs))
        poller.close()


def cell(values: list[float] | None, width: int) -> str:
    text = "/".join(f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}" for v in values or [])
    return (text or "-").rjust(width)


def print_table(state: dict[str, Any], backends: list[str], methods: list[str]) -> None:
    corpus = state["corpus"]
    print(
        f"\nCorpus: {corpus['pages']} pages in {len(corpus['files'])} files ({corpus['distinct']} distinct "
        f"sources, the rest re-titled copies); {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'backend':<9} {'phase':<9} {'wall s':>8} {'pages/min':>9} {'CPU s':>8} {'RSS MB':>7} {'PSS MB':>7} "
        f"{'main MB':>7} "
        f"{'db MB':>7} {'files MB':>8} {'q p50/p95/max ms':>17} {'ls p50/p95/max ms':>18} "
        f"{'status p50/p95/max ms':>22} {'load':>5}"
    )
    for name in backends:
        runs = state.get("runs", {}).get(name, {})
        for label in ["ingest", *methods]:
            row = runs.get(label if label == "ingest" else f"build {label}")
            if row is None:
                print(f"{name:<9} {label:<9} (not run yet)")
                continue
            query = runs.get(f"query {label}", {})
            mark = "*" if row.get("resumed") else " "
            print(
                f"{name:<9} {label:<9}{mark}{cell([row['wall_s']], 8)} {60 * corpus['pages'] / row['wall_s']:>9.1f} "
                f"{row['cpu_s']:>8.1f} {row['rss_mb']:>7.0f} {cell([row['pss_mb']] if 'pss_mb' in row else None, 7)} "
                f"{row['main_mb']:>7.0f} "
                f"{query.get('db_mb', row['db_mb']):>7.1f} {query.get('files_mb', row['files_mb']):>8.1f} "
                f"{cell(query.get('q_ms'), 17)} {cell(row.get('ls_ms'), 18)} {cell(row.get('status_ms'), 22)} "
                f"{cell([row['load']] if 'load' in row else None, 5)}"
            )
    slow = [
        f"{name} {label} ls {row['ls_slow'][0]}/{row['ls_slow'][1]}, status {row['status_slow'][0]}/"
        f"{row['status_slow'][1]}"
        for name in backends
        for label, row in ((k.removeprefix("build "), v) for k, v in state.get("runs", {}).get(name, {}).items())
        if "ls_slow" in row and "status_slow" in row
    ]
    if slow:
        print(f"calls over {SLOW_MS} ms: " + "; ".join(slow))
    print(
        "* resumed: measured the rest of an interrupted phase only. RSS MB: peak of the summed process tree "
        "(with PostgreSQL); PSS MB: the same with each shared page split among the processes mapping it (what "
        "the tree really holds; its largest processes at the peak are in state.json); main MB: this process; "
        "q: retrieve, second round, query embedding excluded; "
        f"ls/status: Workspace.documents()/status() polled every {POLL_S} s during the phase; load: 1-minute "
        "load average, mean of the phase's start and end (other work on the machine)."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10000, help="corpus size in pages (at least)")
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated of sqlite, postgres")
    parser.add_argument("--methods", default=METHODS, help="comma-separated methods to build")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="all state (resumable)")
    parser.add_argument("--questions", type=int, default=50, help="questions timed per method")
    parser.add_argument("--ray", default=None, help="Ray cluster address for postgres (default: a local cluster)")
    parser.add_argument("--ray-cpus", type=int, default=0, help="CPUs of the local Ray cluster (0 = all cores)")
    parser.add_argument(
        "--poller-nice",
        type=int,
        default=None,
        help="niceness of the ls/status poller (default: the benchmark's own); 0 under a niced "
        "benchmark times what a user's `docgraph status` at normal priority sees (needs root)",
    )
    parser.add_argument("--fresh", action="store_true", help="wipe --work first")
    parser.add_argument("--report", action="store_true", help="run nothing: the table of the finished phases")
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    methods = [m for m in args.methods.split(",") if m]
    unknown = [b for b in backends if b not in ("sqlite", "postgres")]
    if unknown:
        parser.error(f"unknown --backends {', '.join(unknown)}")
    from docgraph.methods.base import available_methods

    unknown = [m for m in methods if m not in available_methods()]
    if unknown:
        parser.error(f"unknown --methods {', '.join(unknown)}; this build has {', '.join(available_methods())}")
    work = args.work.resolve()
    if args.report:
        state = load_state(work)
        if "corpus" not in state:
            parser.error(f"nothing measured in {work} yet")
        print_table(state, backends, methods)
        return 0
    if args.fresh:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    data = shared_documents().parent
    state = load_state(work)
    corpus = state.get("corpus")
    if corpus and corpus["target"] != args.pages:
        parser.error(f"{work} holds a corpus of --pages {corpus['target']}; pass that, another --work, or --fresh")
    if not corpus or not all((work / "corpus" / f).exists() for f in corpus["files"]):
        corpus = state["corpus"] = assemble_apart(data, work, args.pages)
        if not corpus["files"]:
            print(f"no PDFs under {data}; set DOCGRAPH_SHARED_DATA", file=sys.stderr)
            return 2
        save_state(work, state)
        print(f"corpus assembled: {corpus['pages']} pages in {len(corpus['files'])} files", flush=True)
    else:
        print(f"corpus assembled before: {corpus['pages']} pages, skipped", flush=True)
    paths = [work / "corpus" / f for f in corpus["files"]]
    qs = questions(data, args.questions)
    for name in backends:
        run_backend(name, work, args, state, paths, methods, qs)
    print_table(state, backends, methods)
    return 0


if __name__ == "__main__":
    sys.exit(main())
