"""The HTTP API and the web page (``docgraph serve``), thin over the public ``Workspace`` API."""

from .app import create_app

__all__ = ["create_app"]
