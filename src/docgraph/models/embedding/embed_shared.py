"""An embedding cache shared across workspaces: one SQLite file of rows by (model, content hash).

Each workspace caches its own embeddings in its store. ``models.embedding.shared_cache``
names a file that sits *behind* those caches: a row missing from the workspace is looked
up there (and copied into the workspace, which stays self-contained), and every newly
computed row is written to both. Eval runs set it to ``<workspace root>/embeddings.sqlite``
so the same page text embedded for a per-document corpus is not embedded again for the
packed corpus or by another method — cold offline embedding is the slowest part of an
evaluation here.

Keys are the same content hashes the workspace cache uses (model name in the namespace),
so a row can only be reused for the same text, kind and model. The file is safe for
several processes (WAL, busy timeout); one connection per file per process.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from ...errors import StoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (namespace, key)) WITHOUT ROWID;
"""
_CHUNK = 500  # keys per SELECT (SQLite's default variable limit is far above this)
_open: dict[Path, SharedEmbeddingFile] = {}
_open_lock = threading.Lock()


class SharedEmbeddingFile:
    """Rows by ``(namespace, key)`` in one SQLite file; use ``shared_embedding_file(path)``."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=60)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StoreError(
                f"{path}: cannot use it as the shared embedding cache ({exc}); move it away "
                "or set models.embedding.shared_cache to another file"
            ) from exc

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The stored rows among ``keys`` (missing keys are absent from the result)."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                part = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT key, value FROM embeddings WHERE namespace = ? AND key IN ({marks})", [namespace, *part]
                ).fetchall()
                found.update((k, bytes(v)) for k, v in rows)
        return found

    def put_many(self, namespace: str, items: Iterable[tuple[str, bytes]]) -> None:
        """Store rows (an existing key keeps its row: same key, same content, same model)."""
        rows = [(namespace, k, v) for k, v in items]
        if not rows:
            return
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    "INSERT OR IGNORE INTO embeddings (namespace, key, value) VALUES (?, ?, ?)", rows
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def count(self, namespace: str | None = None) -> int:
        with self._lock:
            if namespace is None:
                return int(self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            return int(
                self._conn.execute("SELECT COUNT(*) FROM embeddings WHERE namespace = ?", [namespace]).fetchone()[0]
            )


def shared_embedding_file(path: str | Path) -> SharedEmbeddingFile:
    """The process's one ``SharedEmbeddingFile`` for ``path`` (``~`` expanded)."""
    resolved = Path(path).expanduser().resolve()
    with _open_lock:
        if resolved not in _open:
            _open[resolved] = SharedEmbeddingFile(resolved)
        return _open[resolved]
