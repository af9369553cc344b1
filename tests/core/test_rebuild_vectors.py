"""Switching embedding models: the mismatch is caught, and --rebuild-vectors clears the way."""

from __future__ import annotations

import numpy as np
import pytest

from docgraph import Workspace
from docgraph.errors import EmbeddingMismatchError, InputError
from docgraph.methods.vector_index import write_vectors


def test_drop_vectors_clears_the_mismatch_and_names_other_stale_methods(tmp_path):
    ws = Workspace(tmp_path)
    write_vectors(ws.store, "dense.chunk", ["a"], np.ones((1, 4)), model="old-embedder")
    write_vectors(ws.store, "hvm.chunk", ["a"], np.ones((1, 4)), model="old-embedder")
    ws.store.set_meta("embedding_model", "old-embedder")
    with pytest.raises(EmbeddingMismatchError, match="--rebuild-vectors"):
        ws.models.check_embedding_model("dense")

    with pytest.raises(InputError, match="docgraph build --method hvm --rebuild-vectors"):
        ws.drop_vectors("dense")
    assert "dense.chunk" not in ws.store.vector_models()

    assert ws.drop_vectors("hvm") == ["hvm.chunk"]
    assert ws.store.vector_models() == {}
    ws.models.check_embedding_model()  # the workspace now records the configured model
    assert ws.store.get_meta("embedding_model") == ws.models.text_embedder.model
