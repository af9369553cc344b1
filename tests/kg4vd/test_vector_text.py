"""What KG4VD's entity and relation vectors embed (``index.embeds_descriptions``): offline,
names and types, blended with the vectors of the chunks they are grounded in (an offline
description is the source sentence, already in those chunk vectors); with
``kg4vd.vector_descriptions = "always"`` the descriptions too; a workspace built before
the setting existed is reconnected once. Offline builds of the real OpenStax excerpt."""

from __future__ import annotations

import json

import numpy as np

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.methods.kg4vd import storage as st
from docgraph.methods.kg4vd.build_config import CONFIG_META
from docgraph.methods.kg4vd.index import indexed_relation
from docgraph.progress import RecordingProgress


def open_ws(path, **overrides) -> Workspace:
    return Workspace(path, settings=load_settings(path, environ={}, overrides=overrides))


def stored_rows(ws, namespace):
    keys, matrix = ws.store.load_vectors(namespace)[:2]
    return dict(zip(keys, matrix))


def unit(v):
    return v / np.linalg.norm(v)


def with_context(ws, name_row, mentions):
    """The name's row plus the mean of the chunk vectors holding any mentioned component."""
    chunk_rows = stored_rows(ws, st.VEC_CHUNK)
    found = [
        chunk_rows[key]
        for key, value in ws.store.iter_records(st.NS_CHUNK)
        if any(
            m.doc_id == value["doc_id"]
            and m.page == value["page"]
            and set(m.component_ids) & set(value["component_ids"])
            for m in mentions
        )
    ]
    return unit(name_row + unit(np.mean(found, axis=0))) if found else name_row


def described_entities(ws):
    """A few canonical entities with a description, and their stored vectors."""
    entities = [e for e in st.load_entities(ws.store).values() if e.description and e.modality == "text"][:8]
    assert entities, "the excerpt's offline graph has described text entities"
    return entities, stored_rows(ws, st.VEC_ENTITY)


def test_offline_vectors_are_names_with_grounding_context_and_always_embeds_descriptions(openstax_ws):
    with open_ws(openstax_ws) as ws:
        ws.build("kg4vd")
        entities, rows = described_entities(ws)
        embed = ws.models.text_embedder.embed_passages
        names = embed([st.entity_text(e, description=False) for e in entities])
        full = embed([st.entity_text(e) for e in entities])
        for entity, name_row, full_row in zip(entities, names, full, strict=True):
            assert np.allclose(rows[entity.id], with_context(ws, name_row, entity.mentions), atol=1e-4)
            assert not np.allclose(rows[entity.id], full_row, atol=1e-3)
        relations = [r for r in st.load_relations(ws.store).values() if indexed_relation(r) and r.description][:5]
        entity_names = {e.id: e.name for e in st.load_entities(ws.store).values()}
        rel_rows = stored_rows(ws, st.VEC_RELATION)
        heads = embed(
            [st.relation_text(r, entity_names[r.source], entity_names[r.target], description=False) for r in relations]
        )
        assert relations and all(
            np.allclose(rel_rows[r.id], with_context(ws, h, r.mentions), atol=1e-4) for r, h in zip(relations, heads)
        )

    progress = RecordingProgress()
    with open_ws(openstax_ws, kg4vd={"vector_descriptions": "always"}) as ws:
        report = ws.build("kg4vd", progress=progress)
        assert report.pages_built == 0  # reconnected, not re-extracted
        entities, rows = described_entities(ws)
        full = ws.models.text_embedder.embed_passages([st.entity_text(e) for e in entities])
        assert all(np.allclose(rows[e.id], f, atol=1e-5) for e, f in zip(entities, full))
    assert any('vector_text "name+context" → "name+description"' in n for n in progress.notes), progress.notes


def test_a_graph_built_before_the_setting_is_reconnected_once(openstax_ws):
    with open_ws(openstax_ws) as ws:
        ws.build("kg4vd")
        recorded = json.loads(ws.store.get_meta(CONFIG_META))
        del recorded["vector_text"]  # as recorded by a build before the key existed
        ws.store.set_meta(CONFIG_META, json.dumps(recorded))
    progress = RecordingProgress()
    with open_ws(openstax_ws) as ws:
        assert ws.build("kg4vd", progress=progress).pages_built == 0
        assert "rebuilt" not in ws.build("kg4vd").stats  # once
    assert any('vector_text "name+description" → "name+context"' in n and "reconnecting" in n for n in progress.notes)
