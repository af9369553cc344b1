"""The package's layers, checked on every import — module level, inside functions and under
``TYPE_CHECKING`` alike (a hidden upward import is still a cycle waiting to happen).

A unit is a top-level module or package of ``docgraph`` (``store``, ``api``), or one method
package (``methods.kg4vd``); the shared ``methods/retrieval``, ``answers`` and ``building`` are
part of ``methods``. A unit may import units of a lower rank; within a rank only the
pairs in ``SIDEWAYS``. The method packages are peers that never import each other (what two
share lives in ``methods/*.py``, ``graph/`` or ``models/``), and nothing below ``api``
imports ``scale``: ``api.Workspace`` hands ingest a page-runner factory and the model hub an
embedder wrapper, so the lower layers never see Ray.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "docgraph"

RANKS: list[set[str]] = [
    {"errors", "text", "memory", "threads", "scoring", "boundary", "user_cache"},
    {"types", "settings_sections", "accel", "prompts"},
    {"settings_methods"},
    {"config"},
    {"store", "graph", "models"},
    {"progress", "highlight", "page_regions", "results"},
    {"documents"},
    {"methods", "methods.kg4vd", "methods.hvm", "methods.baselines", "scale"},
    {"api"},
    {"cli", "server", "eval", "mcp_server", "integrations", "testing"},
]
SIDEWAYS = {
    ("models", "store"),  # caches and usage records live in the workspace store
    ("results", "page_regions"),
    ("methods.kg4vd", "methods"),
    ("methods.hvm", "methods"),
    ("methods.baselines", "methods"),
    ("cli", "server"),
    ("cli", "mcp_server"),
    ("cli", "eval"),  # commands that start them
    ("mcp_server", "server"),  # the web app's bearer-token check
    ("testing", "eval"),
}
# Exceptions waiting for a fix; none now: every front-end use of a method goes through
# methods.capabilities (the graph panel too, by GraphBrowse). Nothing may be added here.
PENDING: set[tuple[str, str]] = set()
ROOT_NAMES = {"__init__", "__main__", "__version__"}


METHOD_PACKAGES = {"kg4vd", "hvm", "baselines"}  # peers; methods/retrieval, answers, building are shared


def unit_of(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "__init__"
    if parts[0] == "methods" and len(parts) > 1 and parts[1] in METHOD_PACKAGES:
        return f"methods.{parts[1]}"
    return parts[0]


def rank_of(unit: str) -> int:
    ranks = [i for i, members in enumerate(RANKS) if unit in members]
    assert ranks, f"docgraph.{unit} has no layer: add it to RANKS in {Path(__file__).name}"
    return ranks[0]


def imports(path: Path) -> list[tuple[str, int]]:
    """``(imported docgraph module, line)`` for every import in the file, wherever it sits."""
    module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("docgraph")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("docgraph"):
                continue
            if target == "docgraph" or (node.module is None and node.level):
                found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((target, node.lineno))
    return found


def violations() -> list[str]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        source = unit_of(".".join(path.relative_to(SRC.parent).with_suffix("").parts))
        if source in ROOT_NAMES:
            continue
        for target_module, line in imports(path):
            target = unit_of(target_module)
            if target == source or target in ROOT_NAMES or (source, target) in SIDEWAYS | PENDING:
                continue
            if rank_of(target) >= rank_of(source):
                out.append(f"{path.relative_to(SRC.parent)}:{line}: {source} imports {target_module}")
    return out


def test_no_import_reaches_up_or_sideways():
    found = violations()
    assert not found, "imports against the layers (tests/core/test_layers.py says which are allowed):\n" + "\n".join(
        found
    )


def test_pending_exceptions_are_still_needed():
    used = set()
    for path in SRC.rglob("*.py"):
        source = unit_of(".".join(path.relative_to(SRC.parent).with_suffix("").parts))
        used |= {(source, unit_of(t)) for t, _ in imports(path)}
    assert PENDING <= used, f"remove from PENDING what no longer happens: {sorted(PENDING - used)}"


def test_the_check_sees_imports_inside_functions(tmp_path):
    probe = SRC / "store" / "_layer_probe.py"
    probe.write_text("def f():\n    from ..api import Workspace\n    return Workspace\n", encoding="utf-8")
    try:
        assert any("_layer_probe.py:2: store imports docgraph.api" in v for v in violations())
    finally:
        probe.unlink()
