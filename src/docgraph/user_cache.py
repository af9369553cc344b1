"""Folders in the user's cache directory that docgraph keeps derived files in."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir(name: str, env: str) -> Path | None:
    """``$env`` when it is set (empty: no cache), else ``$XDG_CACHE_HOME/docgraph/<name>``
    (``~/.cache/...``), created if needed. None when it is turned off, cannot be created or
    cannot be written."""
    value = os.environ.get(env)
    if value is not None and not value.strip():
        return None
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = Path(value) if value else cache_home / "docgraph" / name
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return root if os.access(root, os.W_OK) else None
