"""The JSON API under ``/api/``, one module per concern."""

from . import ask, build, documents, graph, pages

ROUTERS = (documents.router, build.router, ask.router, pages.router, graph.router)

__all__ = ["ROUTERS"]
