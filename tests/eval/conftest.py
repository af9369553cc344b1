"""Helpers for the tests of ``benchmarks/`` scripts, and the runner tests' fixtures: a small
MMLongBench subset cut from two real documents, the loopback stub that embeds, and one
retrieval-only run over them (module-scoped: each runner test module makes its own)."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from runner_helpers import KEEP_PAGES, options

from docgraph.eval.loaders.base import parse_pages
from docgraph.eval.runner import run_eval
from docgraph.testing.openai_stub import OpenAIStub

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="session")
def benchmark_script() -> Callable[[str], ModuleType]:
    """``load(name)``: the module of ``benchmarks/<name>.py`` (its folder on ``sys.path``,
    as when the script runs, so its sibling imports resolve)."""

    def load(name: str) -> ModuleType:
        if str(BENCHMARKS) not in sys.path:
            sys.path.insert(0, str(BENCHMARKS))
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(scope="module")
def mini_mmlongbench(tmp_path_factory, shared_data) -> Path:
    """MMLongBench-Doc format: the first pages of two documents and the questions about them."""
    import pymupdf

    src = shared_data / "mmlongbench_doc"
    root = tmp_path_factory.mktemp("mini_mmlongbench")
    (root / "documents").mkdir()
    for name, pages in KEEP_PAGES.items():
        with pymupdf.open(src / "documents" / name) as doc:
            doc.select(list(range(pages)))
            doc.save(root / "documents" / name)
    samples = [
        s
        for s in json.loads((src / "samples.json").read_text(encoding="utf-8"))
        if s["doc_id"] in KEEP_PAGES and all(p <= KEEP_PAGES[s["doc_id"]] for p in parse_pages(s["evidence_pages"]))
    ]
    (root / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    with open(root / "documents.tsv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(["doc_id", "pages", "bytes", "n_questions", "doc_type"])
        for name, pages in KEEP_PAGES.items():
            writer.writerow([name, pages, 0, sum(s["doc_id"] == name for s in samples), ""])
    return root


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpora")


@pytest.fixture(scope="module")
def retrieval_run(mini_mmlongbench, corpora, stub, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    return run_eval(options(mini_mmlongbench, out, corpora, stub, retrieval_only=True))
