"""How chunk-derived vectors are made, as recorded beside the embedding model's name.

``models.embedding.chunk_context`` chooses the recipe (``methods.retrieval.chunk_vectors``). Vectors
of both recipes live in the same space, but an index that mixes them ranks unevenly, so
indexes record the recipe with the model (``vector_model``) and builds refuse to extend
vectors of another recipe (``ModelHub.check_embedding_model``) or re-index (baselines).
"""

from __future__ import annotations

TAG_PREFIX = "+context"


def recipe_tag(embedding_settings) -> str:
    """ "" for "joint" (the recipe of every workspace made before the setting existed),
    "context<w>" for "separate" with ``context_weight`` w."""
    if embedding_settings.chunk_context == "joint":
        return ""
    return f"context{embedding_settings.context_weight:g}"


def vector_model(model: str, embedding_settings) -> str:
    """The model name to record for chunk-derived vectors: ``model``, plus the recipe tag."""
    tag = recipe_tag(embedding_settings)
    return f"{model}+{tag}" if tag else model


def base_model(recorded: str) -> str:
    """The embedding model of a recorded vector model name (the recipe tag removed)."""
    return recorded.split(TAG_PREFIX, 1)[0]
