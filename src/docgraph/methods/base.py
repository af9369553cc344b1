"""The ``Method`` contract and the registry that finds methods by name.

A method (kg4vd, hvm, a baseline) builds its index from the workspace's pages and
answers questions from it. It keeps everything it builds in the store under namespaces
prefixed with its name (``"kg4vd.entity"``, ``"hvm.chunk"`` …), owned by a document where
the data belongs to one, so that removing a document removes what was derived from it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..config import Settings
from ..errors import ConfigError, InputError, NotBuiltError
from ..progress import NullProgress, Progress
from ..store.base import Store
from ..types import Answer, Evidence

if TYPE_CHECKING:
    from ..models.hub import ModelHub


@dataclass
class MethodContext:
    """What a method gets to work with: the store, the settings, the models, the files."""

    store: Store
    settings: Settings
    models: ModelHub
    root: Path
    progress: Progress = field(default_factory=NullProgress)

    def path(self, relative: str) -> Path:
        """Absolute path of a workspace-relative file (page images, crops)."""
        return self.root / relative


@dataclass
class BuildReport:
    method: str
    pages_built: int = 0
    pages_skipped: int = 0
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Method(Protocol):
    name: str

    def build(self, ctx: MethodContext) -> BuildReport:
        """Build or update the index for every ready document; resumable and incremental:
        finished work is skipped, new documents are added, removed ones are gone."""

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence: ...

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        """Retrieve and answer. Offline (no answer model) the answer is extractive, says so,
        and still cites the page regions it quotes."""

    def remove_document(self, ctx: MethodContext, doc_id: str) -> None:
        """Drop what this method derived from the document (inside the caller's transaction)."""

    def status(self, ctx: MethodContext) -> dict[str, Any]:
        """Build status for ``ls``, the web app and eval: at least ``built_pages`` and ``total_pages``."""


def not_built(ctx: MethodContext, method: str) -> NotBuiltError:
    """The error every method raises when asked a question before its index is built: it says
    so and names the command that builds it (and, in an empty workspace, the one that adds)."""
    if not ctx.store.list_documents():
        return NotBuiltError(
            f"the workspace {ctx.root} has no documents yet; add some with "
            f"`docgraph add FILE...`, then run: docgraph build --method {method}"
        )
    return NotBuiltError(
        f"the {method} index of this workspace is not built yet; run: docgraph build --method {method}"
    )


def check_options(method: str, options: Mapping[str, Any], valid: Iterable[str]) -> None:
    """The one rule for per-call options (``retrieve``/``ask`` keyword options) of every method:
    an option the method does not take is an ``InputError`` naming the ones it takes."""
    valid = list(valid)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise InputError(
            f"{method} does not take the option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(valid) if valid else 'none'}"
        )


_REGISTRY: dict[str, Callable[[], Method]] = {}
log = logging.getLogger(__name__)


def register(name: str) -> Callable[[Callable[[], Method]], Callable[[], Method]]:
    """Class decorator / factory registration: ``@register("kg4vd")``."""

    def wrap(factory: Callable[[], Method]) -> Callable[[], Method]:
        _REGISTRY[name] = factory
        return factory

    return wrap


def get_method(name: str) -> Method:
    _load_methods()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ConfigError(f"unknown method {name!r}; available: {', '.join(available_methods())}") from None


def available_methods() -> list[str]:
    _load_methods()
    return sorted(_REGISTRY)


ENTRY_POINT_GROUP = "docgraph.methods"
BUILTIN_PACKAGES = ("docgraph.methods.kg4vd", "docgraph.methods.hvm", "docgraph.methods.baselines")
_loaded = False


def _load_methods() -> None:
    """Register every method the ``docgraph.methods`` entry-point group names, the built-in
    ones included (pyproject.toml), once per process: each entry point is a ``Method`` class
    or factory, registered under its name. A method that fails to import is left out with a
    warning, so one broken package cannot take docgraph down. Run from a source tree whose
    package metadata lacks the group, the built-in packages are imported directly."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    from importlib.metadata import entry_points

    found = list(entry_points(group=ENTRY_POINT_GROUP))
    if not any(ep.value.startswith("docgraph.") for ep in found):
        for module in BUILTIN_PACKAGES:
            importlib.import_module(module)
    for ep in found:
        try:
            factory = ep.load()
        except Exception as exc:  # a broken plug-in: say so, keep the others
            log.warning("method %r (%s) could not be loaded and is left out: %s", ep.name, ep.value, exc)
            continue
        _REGISTRY[ep.name] = factory
