"""Persistence behind the ``Store`` protocol; ``open_store`` picks the backend from settings."""

from __future__ import annotations

from pathlib import Path

from ..config import StoreSettings
from .base import Store
from .sqlite import SQLiteStore

__all__ = ["Store", "SQLiteStore", "open_store"]


def open_store(root: Path | str, settings: StoreSettings | None = None) -> Store:
    backend = (settings or StoreSettings()).backend
    if backend == "sqlite":
        return SQLiteStore(root)
    raise ValueError(f"unknown store backend {backend!r}")
