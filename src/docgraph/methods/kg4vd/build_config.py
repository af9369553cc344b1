"""Which KG4VD build stages a settings change invalidates, and clearing them.

The settings a build used are recorded (``CONFIG_META``). At the start of the next build,
``apply_settings_changes`` compares them with the current ones, stage by stage:

- **extraction** (``EXTRACTION_KEYS``: schema preset, rounds, reflector, build model): every
  page graph is re-extracted, then everything is re-connected;
- **cross-page connection** (``CONNECTION_KEYS``: on/off, candidates per entity, the model
  judge's similarity floor, the offline judge's thresholds, the version of the judge's rules
  — offline or model, which includes how candidates are chosen — and what the
  entity/relation vectors embed: their similarities pick the candidate pairs): the
  canonical entities, relations and their vectors are rebuilt from the stored page graphs
  (no page is re-extracted).

Page vectors and the structural layer do not depend on these settings and are kept. The
build says which settings changed and what it rebuilds (``ctx.progress.note``). A key the
recorded config lacks (a workspace built before it was recorded) counts as unchanged, but
for ``LEGACY`` keys, which compare as the value every build had before the key existed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..base import MethodContext
from ..memo import bump_version
from ..retrieval.vector_index import delete_vectors
from .index import vector_text
from .judge import ModelJudge, OfflineJudge
from .storage import CONNECTION_RECORDS, GRAPH_SIZE_META, LAYER, NS_PAGEGRAPH, VEC_ENTITY, VEC_RELATION, parse_page_key

CONFIG_META = "kg4vd.build_config"  # the settings the stored graph was built with
EXTRACTION_KEYS = ("schema_preset", "max_rounds", "reflector", "model")
CONNECTION_KEYS = (
    "cross_page",
    "cross_page_top_k",
    "cross_page_min_similarity",
    "same_threshold",
    "related_threshold",
    "vector_text",
    "judge_rules",
)
# what a build recorded without the key had, given the current config
LEGACY: dict[str, Callable[[dict[str, Any]], Any]] = {
    "vector_text": lambda config: "name+description",
    "judge_rules": lambda config: 1 if config["model"] == "offline" else "model",
    "cross_page_min_similarity": lambda config: None if config["model"] == "offline" else 0.0,
}


def build_config(ctx: MethodContext) -> dict[str, Any]:
    """The settings the graph stages depend on, as they are now."""
    s = ctx.settings.kg4vd
    config: dict[str, Any] = {
        key: getattr(s, key)
        for key in EXTRACTION_KEYS + CONNECTION_KEYS
        if key not in ("model", "vector_text", "judge_rules")
    }
    config["model"] = ctx.settings.models.build.model if ctx.models.chat("build") else "offline"
    config["vector_text"] = vector_text(ctx)
    offline = config["model"] == "offline"
    config["judge_rules"] = OfflineJudge.RULES if offline else f"model:{ModelJudge.RULES}"
    if offline:  # the offline judge has no floor: changing the setting changes nothing offline
        config["cross_page_min_similarity"] = None
    return config


def _changes(recorded: dict[str, Any], config: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    before = {
        key: recorded[key] if key in recorded else LEGACY[key](config)
        for key in keys
        if key in recorded or key in LEGACY
    }
    return [
        f"{key} {json.dumps(value)} → {json.dumps(config[key])}"
        for key, value in before.items()
        if value != config[key]
    ]


def apply_settings_changes(ctx: MethodContext) -> str | None:
    """Clear the stages the changed settings invalidate and record the current settings;
    returns the note said to the user (None when nothing changed)."""
    config = build_config(ctx)
    raw = ctx.store.get_meta(CONFIG_META)
    try:
        recorded = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        recorded = {}
    extraction = _changes(recorded, config, EXTRACTION_KEYS)
    connection = _changes(recorded, config, CONNECTION_KEYS)
    store = ctx.store
    built = store.count_records(NS_PAGEGRAPH)
    note = None
    if built and (extraction or connection):
        docs = len({parse_page_key(key)[0] for key in store.record_keys(NS_PAGEGRAPH)})
        what = (
            f"re-extracting the page graphs of {built} page(s) in {docs} document(s), then reconnecting them"
            if extraction
            else f"reconnecting the page graphs of {built} page(s) in {docs} document(s) across pages "
            "(pages are not re-extracted)"
        )
        note = f"kg4vd: settings changed since the last build ({', '.join(extraction + connection)}): {what}"
        with store.transaction():
            if extraction:
                store.delete_records(NS_PAGEGRAPH)
            for namespace in CONNECTION_RECORDS:
                store.delete_records(namespace)
            for namespace in (VEC_ENTITY, VEC_RELATION):
                delete_vectors(store, namespace)
            bump_version(store, LAYER)
            store.set_meta(GRAPH_SIZE_META, "")
            store.set_meta(CONFIG_META, json.dumps(config, sort_keys=True))
        ctx.progress.note(note)
    elif recorded != config:
        store.set_meta(CONFIG_META, json.dumps(config, sort_keys=True))
    return note
