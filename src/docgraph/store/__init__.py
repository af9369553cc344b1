"""Persistence behind the ``Store`` protocol; ``open_store`` picks the backend from settings."""

from __future__ import annotations

from pathlib import Path

from ..config import StoreSettings
from .base import Store
from .sqlite import SQLiteStore

__all__ = ["Store", "SQLiteStore", "open_store"]


def open_store(root: Path | str, settings: StoreSettings | None = None) -> Store:
    settings = settings or StoreSettings()
    backend = settings.backend
    if backend == "sqlite":
        return SQLiteStore(root)
    if backend == "postgres":
        from ..errors import ConfigError
        from .postgres import PostgresStore

        if not settings.url:
            raise ConfigError(
                'store.backend = "postgres" needs store.url = "postgresql://user@host:5432/dbname" '
                "(docgraph.toml [store], or DOCGRAPH_STORE__URL)"
            )
        return PostgresStore(root, settings.url, settings.pg_schema)
    raise ValueError(f"unknown store backend {backend!r}")
