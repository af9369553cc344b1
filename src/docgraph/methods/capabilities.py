"""What a method may declare beyond the ``Method`` contract, and how the front ends ask for it.

Every capability is optional: the CLI, the web app and the settings check find what a method
has by these Protocols (and read it through the helpers below), never by its name, so a
method installed from another package gets the same treatment as the built-in ones.

- ``label`` (``Labelled``): how people see the method ("KG4VD", "BM25 (baseline)"); ``order``
  puts it in lists (lower first; a method without one comes after the others);
- ``modes`` (``HasModes``): the retrieval modes ``retrieve``/``answer`` take as ``mode=``,
  the default first;
- ``settings_section`` + ``settings_model`` (``HasSettings``): a ``[section]`` of
  docgraph.toml (and ``DOCGRAPH_<SECTION>__…``) validated by that model;
- ``graph_stats`` / ``format_stats`` (``GraphStats``): ``docgraph graph stats``;
- ``export_formats`` / ``export_graph`` (``GraphExport``): ``docgraph graph export``;
- ``reset_graph`` (``GraphReset``): ``docgraph graph reset``;
- ``graph_view`` (``GraphBrowse``): the web app's graph panel (``entity_graph.EntityGraph``);
- ``scoped_retrieval`` (``ScopedRetrieval``): ``retrieve``/``answer`` take ``documents=`` (ids)
  and rank only those documents' pages (``docgraph search/ask --doc``); other methods' pages
  are filtered from a deeper ranking instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..config import Section
from .base import MethodContext, available_methods, get_method
from .entity_graph import EntityGraph


@runtime_checkable
class Labelled(Protocol):
    label: str


@runtime_checkable
class HasModes(Protocol):
    modes: tuple[str, ...]


@runtime_checkable
class HasSettings(Protocol):
    settings_section: str
    settings_model: type[Section]


@runtime_checkable
class GraphStats(Protocol):
    def graph_stats(self, ctx: MethodContext) -> dict[str, Any]: ...

    def format_stats(self, stats: dict[str, Any]) -> str: ...


@runtime_checkable
class GraphExport(Protocol):
    export_formats: tuple[str, ...]

    def export_graph(self, ctx: MethodContext, fmt: str, out: Path) -> dict[str, int]:
        """Write the graph in ``fmt`` to ``out``; what was written, counted by kind."""


@runtime_checkable
class GraphReset(Protocol):
    def reset_graph(self, ctx: MethodContext) -> int:
        """Delete the method's graph so the next build starts over; returns how many units of
        it were removed (KG4VD's page graphs, HVM's documents)."""


@runtime_checkable
class GraphBrowse(Protocol):
    def graph_view(self, ctx: MethodContext, stale: EntityGraph | None = None) -> EntityGraph:
        """The method's entity graph as people browse it (empty before a build). ``stale``: a
        view whose reading raised ``errors.GraphChanged``, to be replaced by a fresh one."""


@runtime_checkable
class ScopedRetrieval(Protocol):
    scoped_retrieval: bool


def scoped(name: str) -> bool:
    """Whether the method restricts retrieval itself to given documents."""
    method = get_method(name)
    return isinstance(method, ScopedRetrieval) and bool(method.scoped_retrieval)


def label_of(name: str) -> str:
    method = get_method(name)
    return method.label if isinstance(method, Labelled) else name


def modes_of(name: str) -> tuple[str, ...]:
    method = get_method(name)
    return tuple(method.modes) if isinstance(method, HasModes) else ()


def ordered_methods() -> list[str]:
    """Registered methods in display order (``order``, then name)."""
    return sorted(available_methods(), key=lambda n: (getattr(get_method(n), "order", 1000), n))


def methods_with(capability: type) -> list[str]:
    """The registered methods that have ``capability`` (one of the Protocols above), in order."""
    return [n for n in ordered_methods() if isinstance(get_method(n), capability)]


def settings_sections() -> dict[str, type[Section]]:
    """``[section]`` name → settings model, over every method that declares one."""
    sections: dict[str, type[Section]] = {}
    for name in available_methods():
        method = get_method(name)
        if isinstance(method, HasSettings):
            sections[method.settings_section] = method.settings_model
    return sections
