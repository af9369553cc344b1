"""What the runner tests (``test_runner*.py``) share besides their fixtures (tests/eval/conftest.py):
the documents kept, the methods run, and the options of a run."""

from __future__ import annotations

from docgraph.eval.runner import EvalOptions
from docgraph.testing.fixtures import stub_settings

KEEP_PAGES = {"379f44022bb27aa53efd5d322c7b57bf.pdf": 3, "7c3f6204b3241f142f0f8eb8e1fefe7a.pdf": 2}
METHODS = ["bm25", "dense", "pages"]


def options(path, out, corpora, stub, **kw) -> EvalOptions:
    settings = kw.pop("settings", None) or stub_settings(stub, roles=(), embeddings=True)
    return EvalOptions(
        benchmark=kw.pop("benchmark", "mmlongbench"),
        path=path,
        methods=kw.pop("methods", METHODS),
        out=out,
        workspace_root=corpora,
        settings=settings,
        **kw,
    )
