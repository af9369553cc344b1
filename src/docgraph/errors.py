"""One exception tree for docgraph. Every message says what the user should do next."""

from __future__ import annotations


class DocgraphError(Exception):
    """Base of every error docgraph raises on purpose."""


class InputError(DocgraphError):
    """A file, page or argument the user gave cannot be used (names it and says what to do)."""

    def __init__(self, message: str, *, path: str | None = None, page: int | None = None):
        self.path = path
        self.page = page
        where = ""
        if path:
            where = f"{path}"
            if page is not None:
                where += f" (page {page})"
            where += ": "
        super().__init__(where + message)


class ConfigError(DocgraphError):
    """Settings are missing, inconsistent or invalid."""


class StoreError(DocgraphError):
    """The workspace store cannot read or write what it was asked to."""


class WorkspaceBusyError(StoreError):
    """Another process (or thread) is writing to the workspace; names it and says to wait."""


class DiskFullError(StoreError):
    """The disk holding the workspace is full; the change in progress was rolled back."""


class EmbeddingMismatchError(StoreError):
    """The workspace's vectors were built with another embedding model than the configured one."""


class ModelError(DocgraphError):
    """A model endpoint failed (after retries) or is not configured."""


class ModelOutputError(ModelError):
    """A model reply could not be parsed or validated; carries the raw reply."""

    def __init__(self, message: str, *, raw: str = "", saved_to: str | None = None):
        self.raw = raw
        self.saved_to = saved_to
        if saved_to:
            message += f" (raw reply saved to {saved_to})"
        super().__init__(message)


class NotBuiltError(DocgraphError):
    """A query needs an index the workspace has not built yet."""


class GraphChanged(DocgraphError):
    """A record a method's in-memory graph view lists is gone from the store: a build changed
    the graph while it was read. The reader loads the view again and retries."""
