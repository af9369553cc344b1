"""Benchmark loaders, one module per format, and :func:`load_benchmark` to pick one by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import InputError
from .base import Benchmark, Corpus, Passage, QAItem, pdf_page_counts
from .dlvqa import load_dlvqa
from .financebench import load_financebench
from .hipporag import load_hipporag
from .hotpotqa import load_hotpotqa
from .kg4vd_test import load_kg4vd_test
from .mmlongbench import PackedLayout, by_document, load_mmlongbench, pack_documents
from .musique import load_musique
from .qasper import load_qasper

LOADERS: dict[str, Callable[..., Benchmark]] = {
    "mmlongbench": load_mmlongbench,
    "hotpotqa": load_hotpotqa,
    "musique": load_musique,
    "hipporag": load_hipporag,
    "qasper": load_qasper,
    "financebench": load_financebench,
    "dlvqa": load_dlvqa,
    "kg4vd_test": load_kg4vd_test,
}


def load_benchmark(name: str, path: Path | str, **options: Any) -> Benchmark:
    """Load benchmark ``name`` (one of :data:`LOADERS`) from ``path``; ``options`` go to its loader."""
    loader = LOADERS.get(name.strip().lower().replace("-", "_"))
    if loader is None:
        raise InputError(f"unknown benchmark {name!r}; use one of: {', '.join(LOADERS)}")
    return loader(path, **options)


__all__ = [
    "Benchmark",
    "Corpus",
    "Passage",
    "QAItem",
    "LOADERS",
    "load_benchmark",
    "load_mmlongbench",
    "load_hotpotqa",
    "load_musique",
    "load_hipporag",
    "load_qasper",
    "load_financebench",
    "load_dlvqa",
    "load_kg4vd_test",
    "by_document",
    "pack_documents",
    "PackedLayout",
    "pdf_page_counts",
]
