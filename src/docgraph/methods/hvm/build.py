"""HVM-GraphRAG graph construction: document tree → per-modality extraction → holistic view →
concept graph, resumable and incremental.

Per document (METHODS.md, HVM build):
1. Chunks in reading order with their structural context h_i (``methods.building.chunking``),
   stored with their vectors (``methods.retrieval.chunk_vectors``: text plus its context elements).
2. In windows of chunks: the missing extractions run (by modality, concurrently with a
   model) and are stored per chunk; then each chunk is folded into the holistic view in
   order — new facts, exact duplicates merged, candidate conflict groups, detector,
   resolver, ``apply_resolution`` — and the view's changes, the conflict log and the
   document's progress are written in one transaction. A rerun resumes at the first
   chunk not folded in; finished documents are skipped. A chunk whose model calls fail
   after the retries (the endpoint down, timing out, resetting) is isolated as KG4VD
   isolates a page: the other chunks' extractions are stored, the document stops before
   that chunk (everything before it kept), the failure is noted with the chunk, page and
   document, the other documents are built, and the next build resumes there. A chunk
   whose model replies stay unusable after the repair and re-asks (``ModelOutputError``,
   extraction or conflict check) is, with ``hvm.on_model_error = "offline"`` (the
   default), extracted by the offline strategy — marked strategy ``"offline-fallback"``,
   counted as ``offline_fallback_chunks`` — or checked by the offline conflict rules
   (counted as ``fallbacks``); with ``"retry-later"`` it stops its document like a failing
   endpoint. The setting redoes no chunk already built.
3. When every chunk is in, the document's part of the concept graph is added. At the end
   of the build, concepts and relation labels without vectors are embedded, chunks of
   finished documents whose vectors are gone are re-embedded, and (for the
   no-concept-graph ablation) documents without entity vectors get them. Vectors made
   with another embedding model stop the build (``EmbeddingMismatchError``).

A document is redone when what shaped it changed: a different extractor (model ↔ offline,
or another model) drops its extractions; a different ``conflict_resolution`` setting
only redoes the holistic pass. Documents that left the workspace lose their part.
With ``conflict_resolution = false`` (ablation) new facts go straight into M.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import ModelError, ModelOutputError
from ...models.usage import embedding_stage
from ...types import Chunk, Document, Page
from ..base import BuildReport, MethodContext
from ..building.build_stats import OFFLINE_FALLBACK
from ..building.chunking import chunk_context, document_chunks
from ..building.embed_blocks import blocks
from ..retrieval.chunk_vectors import ContextualChunks, renew_stale_recipe, vector_model
from ..retrieval.vector_index import load_index, write_vectors
from .concepts import add_contribution, contribution, embed_missing, graph_documents, remove_contribution
from .conflicts import OfflineDetector, OfflineResolver, add_truncation
from .extract_base import ChunkFailed, ChunkInput, nearby_captions
from .extraction import Extraction, Fact
from .holistic import (
    ApplyReport,
    HolisticView,
    Resolution,
    apply_resolution,
    candidate_groups,
    merge_duplicates,
    register_extraction,
)
from .state import (
    NS_CHUNK,
    NS_ENTITY,
    NS_EXTRACT,
    NS_STATE,
    VEC_CHUNK,
    VEC_ENTITY,
    count_conflicts_once,
    entity_record_key,
    get_state,
    load_view,
    log_conflicts,
    put_state,
    reset_document,
    save_diff,
)
from .toolkit import Toolkit, extraction_changed, signature_changes, signature_of, toolkit

METHOD = "hvm"
EMBED_CHARS = 2000


@dataclass
class Counters:
    chunks: int = 0
    facts_new: int = 0
    duplicates_merged: int = 0
    groups: int = 0
    confirmed: int = 0
    unresolved: int = 0
    discarded: int = 0
    modified: int = 0
    merged: int = 0
    fallbacks: int = 0  # conflict checks done by the offline rules after an unusable model reply
    offline_fallback_chunks: int = 0  # chunks extracted offline after unusable model replies
    truncated: dict[str, int] = field(default_factory=dict)  # what the conflict prompts cut (conflicts.py)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # one per document stopped at a failing chunk


def chunk_inputs(ctx: MethodContext, pages: list[Page], chunks: list[Chunk]) -> list[ChunkInput]:
    """ChunkInput per chunk: context h_i, the table caption / picture text, the picture's crop."""
    by_page = {p.number: p for p in pages}
    out = []
    for chunk in chunks:
        page = by_page[chunk.page]
        description, image = "", None
        if chunk.modality == "table":
            description = nearby_captions(page, chunk.component_ids[0])
        elif chunk.modality == "image":
            description = chunk.text if not chunk.text.startswith("[") else ""
            comp = page.component(chunk.component_ids[0])
            if comp is not None and comp.crop_path:
                image = ctx.path(comp.crop_path)
        out.append(ChunkInput(chunk=chunk, context=chunk_context(chunk), description=description, image=image))
    return out


def _extract(kit: Toolkit, items: list[ChunkInput]) -> list[Extraction | ChunkFailed]:
    results: dict[int, Extraction | ChunkFailed] = {}
    for modality in ("text", "table", "image"):
        picked = [i for i, item in enumerate(items) if item.chunk.modality == modality]
        if picked:
            results.update(zip(picked, kit.extractors[modality].extract([items[i] for i in picked])))
    return [results[i] for i in range(len(items))]


def _log_entries(
    chunk: Chunk,
    confirmed: list,
    resolution: Resolution,
    facts: dict[str, Fact],
    new_ids: set[str],
    resolver: str,
    note: str,
) -> list[tuple[str, dict, str]]:
    decided = {d.fact_id: d for d in resolution.decisions}
    out = []
    for index, conf in enumerate(confirmed):
        entry = {
            "chunk": chunk.id,
            "page": chunk.page,
            "kind": conf.group.kind,
            "key": list(conf.group.key),
            "type": conf.type,
            "explanation": conf.explanation,
            "pairs": [list(p) for p in conf.pairs],
            "omitted": conf.group.omitted,
            "support_omitted": resolution.support_omitted.get(index, 0),
            "resolver": resolver,
            "unresolved": index in resolution.unresolved,
            "summary": resolution.summary,
            "note": note,
            "facts": [
                {
                    "id": i,
                    "head": facts[i].head,
                    "relation": facts[i].relation,
                    "tail": facts[i].tail,
                    "qualifier": facts[i].qualifier,
                    "new": i in new_ids,
                    "decision": (vars(decided[i]) if i in decided else {"action": "keep"}),
                }
                for i in conf.group.fact_ids
            ],
        }
        out.append((f"{chunk.id}#g{index + 1}", entry, chunk.doc_id))
    return out


def fold_chunk(
    view: HolisticView,
    chunk: Chunk,
    extraction: Extraction,
    kit: Toolkit,
    chunks: dict[str, Chunk],
    resolve: bool,
    max_group_size: int,
    counters: Counters,
) -> list[tuple[str, dict, str]]:
    """Fold one chunk's extraction into the view (METHODS.md step 3); returns conflict-log records."""
    new = register_extraction(view, chunk.id, extraction)
    fresh, merged = merge_duplicates(view, new)
    counters.facts_new += len(new)
    counters.duplicates_merged += len(merged)
    if not resolve:
        for fact in fresh:
            view.add(fact)
        return []
    groups = candidate_groups(view, fresh)
    counters.groups += len(groups)
    detector, resolver = kit.detector_resolver(max_group_size, chunk_context(chunk))
    note = ""
    try:
        confirmed = detector.detect(view, fresh, groups) if groups else []
        resolution = resolver.resolve(view, fresh, confirmed, chunk, chunks) if confirmed else Resolution()
    except ModelOutputError as exc:
        if not kit.offline_fallback:
            raise
        counters.fallbacks += 1
        note = f"model reply invalid, offline conflict rules used instead: {exc}"
        detector, resolver = OfflineDetector(), OfflineResolver()
        confirmed = detector.detect(view, fresh, groups)
        resolution = resolver.resolve(view, fresh, confirmed, chunk, chunks) if confirmed else Resolution()
    add_truncation(counters.truncated, detector, resolver)
    facts = {**view.facts, **{f.id: f for f in fresh}}
    log = _log_entries(chunk, confirmed, resolution, facts, {f.id for f in fresh}, resolver.name, note)
    report: ApplyReport = apply_resolution(view, fresh, confirmed, resolution)
    counters.confirmed += len(confirmed)
    counters.unresolved += len(resolution.unresolved)
    counters.discarded += report.discarded
    counters.modified += report.modified
    counters.merged += report.merged
    return log


def _embed_chunks(ctx: MethodContext, doc_id: str, chunks: list[Chunk], have: set[str]) -> int:
    """Vectors for the chunks not in ``have`` (``chunk_vectors``: the body plus its weighted
    context elements, each embedded and cached on its own), one ``embed_blocks`` block of
    chunks per call, each block's vectors written before the next; the progress line shows
    ``embedded=done/total`` between blocks (a long document's chunks)."""
    missing = [chunk for chunk in chunks if chunk.id not in have]
    if not missing:
        return 0
    embedder = ctx.models.text_embedder
    with embedding_stage("hvm chunks"):
        for start, end in blocks([min(len(c.text), EMBED_CHARS) for c in missing]):
            block = missing[start:end]
            parts = ContextualChunks.of(block, ctx.settings.models.embedding, EMBED_CHARS)
            write_vectors(
                ctx.store,
                VEC_CHUNK,
                [chunk.id for chunk in block],
                parts.combine(embedder.embed_passages(parts.texts())),
                vector_model(embedder.model, ctx.settings.models.embedding),
                doc_ids=[doc_id] * len(block),
            )
            have.update(chunk.id for chunk in block)
            ctx.progress.advance(0, embedded=f"{end}/{len(missing)} chunks")
    return len(missing)


def _ensure_chunk_vectors(ctx: MethodContext, doc_id: str, have: set[str]) -> int:
    """Re-embed a finished document's chunks whose vectors are gone (e.g. vectors rebuilt)."""
    chunks = [Chunk.model_validate(v["chunk"]) for _, v in ctx.store.iter_records(NS_CHUNK, doc_id=doc_id)]
    return _embed_chunks(ctx, doc_id, chunks, have)


def _embed_entities(ctx: MethodContext, doc_id: str) -> int:
    rows = list(ctx.store.iter_records(NS_ENTITY, doc_id=doc_id))
    if not rows:
        return 0
    embedder = ctx.models.text_embedder
    texts = [f"{row['name']} ({row['concept']})" for _, row in rows]
    with embedding_stage("hvm entities"):
        matrix = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    write_vectors(ctx.store, VEC_ENTITY, [key for key, _ in rows], matrix, embedder.model, doc_ids=[doc_id] * len(rows))
    return len(rows)


def _finish(ctx: MethodContext, doc_id: str, view: HolisticView, order: dict[str, int], state: dict) -> None:
    """Concept-graph part and entity support (I_fac); marks the document complete."""
    part = contribution(view, order)
    with ctx.store.transaction():
        remove_contribution(ctx.store, doc_id)
        add_contribution(ctx.store, doc_id, part)
        ctx.store.put_records(
            NS_ENTITY,
            [
                (entity_record_key(doc_id, key), {**info.model_dump(), "support": view.support(key)}, doc_id)
                for key, info in view.live_entities().items()
            ],
        )
    state.update(
        complete=True,
        concepts=len(part.concepts),
        edges=len(part.edges),
        facts=len(view.facts),
        entities=len(view.live_entities()),
    )
    put_state(ctx.store, doc_id, state)


def build_document(
    ctx: MethodContext, doc: Document, kit: Toolkit, signature: dict, counters: Counters, have: set[str]
) -> int:
    """Build (or resume) one document; returns the number of pages built now. ``have``: chunk ids with vectors."""
    settings = ctx.settings.hvm.with_profile()
    pages = list(ctx.store.iter_pages(doc.id))
    chunks = document_chunks(pages)
    order = {c.id: i for i, c in enumerate(chunks)}
    by_id = {c.id: c for c in chunks}
    items = chunk_inputs(ctx, pages, chunks)
    state = get_state(ctx.store, doc.id)
    if state is None:
        state = {"signature": signature, "chunks": len(chunks), "done": 0, "complete": False}
        with ctx.store.transaction():
            ctx.store.put_records(
                NS_CHUNK,
                [
                    (item.chunk.id, {"chunk": item.chunk.model_dump(), "context": item.context, "index": i}, doc.id)
                    for i, item in enumerate(items)
                ],
            )
            put_state(ctx.store, doc.id, state)
    _embed_chunks(ctx, doc.id, [item.chunk for item in items], have)
    page_last = {c.page: i for i, c in enumerate(chunks)}
    pages_now = 0
    chunkless = [p.number for p in pages if p.number not in page_last]
    if chunkless and state["done"] == 0:
        ctx.progress.advance(len(chunkless))
        pages_now += len(chunkless)
        state["pages_built"] = len(chunkless)
    view = load_view(ctx.store, doc.id, order)
    extracted = {k: Extraction.model_validate(v) for k, v in ctx.store.iter_records(NS_EXTRACT, doc_id=doc.id)}
    window = max(8, 2 * ctx.settings.models.build.max_concurrency)
    start = state["done"]
    failed: dict[str, str] = {}  # chunk id -> why its extraction failed
    while start < len(chunks):
        span = range(start, min(len(chunks), start + window))
        missing = [i for i in span if chunks[i].id not in extracted]
        if missing:
            results = _extract(kit, [items[i] for i in missing])
            good = [(i, r) for i, r in zip(missing, results) if isinstance(r, Extraction)]
            failed.update((chunks[i].id, r.error) for i, r in zip(missing, results) if isinstance(r, ChunkFailed))
            ctx.store.put_records(NS_EXTRACT, [(chunks[i].id, r.model_dump(), doc.id) for i, r in good])
            for i, result in good:
                extracted[chunks[i].id] = result
                counters.offline_fallback_chunks += result.strategy == OFFLINE_FALLBACK
                counters.notes.extend(f"{chunks[i].id}: {n}" for n in result.notes)
        for i in span:
            chunk = chunks[i]
            try:
                if chunk.id in failed:
                    raise ModelError(failed[chunk.id])
                log = fold_chunk(
                    view,
                    chunk,
                    extracted[chunk.id],
                    kit,
                    by_id,
                    settings.conflict_resolution,
                    settings.max_group_size,
                    counters,
                )
            except ModelError as exc:  # the view holds a half-folded chunk: dropped with it
                _stop_document(ctx, doc, chunk, i, len(chunks), exc, counters)
                return pages_now
            diff = view.take_diff()
            state["done"] = i + 1
            if page_last[chunk.page] == i:
                state["pages_built"] = state.get("pages_built", 0) + 1
            with ctx.store.transaction():
                save_diff(ctx.store, doc.id, diff)
                if log:
                    log_conflicts(ctx.store, doc.id, state, log)
                put_state(ctx.store, doc.id, state)
            counters.chunks += 1
            if page_last[chunk.page] == i:
                pages_now += 1
                ctx.progress.advance(1, document=doc.title[:30], facts=len(view.facts), conflicts=counters.confirmed)
        start = span.stop
    _finish(ctx, doc.id, view, order, state)
    return pages_now


def _stop_document(
    ctx: MethodContext, doc: Document, chunk: Chunk, index: int, total: int, exc: ModelError, counters: Counters
) -> None:
    """Note a document stopped at a chunk whose model calls failed (see the module docstring)."""
    message = (
        f"{doc.title} ({doc.id}) chunk {chunk.id} on page {chunk.page}: {exc} — {index} of {total} "
        f"chunks kept; the next build resumes at this chunk"
    )
    counters.failures.append(message)
    ctx.progress.note(f"hvm: model calls failed for {message}")


def remove(ctx: MethodContext, doc_id: str) -> None:
    """Everything HVM derived from the document: its records and vectors and its concept-graph part."""
    from .state import drop_document

    remove_contribution(ctx.store, doc_id)
    drop_document(ctx.store, doc_id)


def forget(ctx: MethodContext, doc_id: str, keep_extraction: bool) -> None:
    """The document's HVM index up to its chunks: its concept-graph part, holistic view and
    (unless ``keep_extraction``) extractions, so the next build folds it again."""
    remove_contribution(ctx.store, doc_id)
    reset_document(ctx.store, doc_id, keep_extraction=keep_extraction)


def summarize_notes(notes: list[str], examples: int = 3) -> list[str]:
    """One line per distinct message of ``"<chunk id>: <message>"`` notes: the message, how
    many chunks had it and the first few chunk ids (a long build emits hundreds of notes)."""
    by_message: dict[str, list[str]] = {}
    for note in notes:
        where, _, message = note.partition(": ")
        by_message.setdefault(message or where, []).append(where if message else "")
    lines = []
    for message, places in by_message.items():
        named = [w for w in places if w]
        shown = ", ".join(named[:examples]) + (", …" if len(named) > examples else "")
        lines.append(
            f"{message} ({len(places)} chunk{'s' if len(places) != 1 else ''}" + (f": {shown})" if shown else ")")
        )
    return lines


def build(ctx: MethodContext) -> BuildReport:
    """Build or update HVM-GraphRAG's index for every ready document (see module docstring)."""
    from ..memo import bump_version

    started = time.perf_counter()
    settings = ctx.settings.hvm.with_profile()
    kit = toolkit(ctx)
    signature = signature_of(ctx, kit)
    docs = [d for d in ctx.store.list_documents() if d.status == "ready"]
    present = {d.id for d in docs}
    states = dict(ctx.store.iter_records(NS_STATE))
    for gone in (set(states) | graph_documents(ctx.store)) - present:
        with ctx.store.transaction():
            remove(ctx, gone)
        states.pop(gone, None)
    count_conflicts_once(ctx.store, states)
    todo, skipped = [], 0
    rebuilt: dict[str, list[str]] = {}  # settings change -> documents rebuilt for it
    for doc in docs:
        state = states.get(doc.id)
        recorded: dict[str, Any] = (state.get("signature") or {}) if state is not None else {}
        changes = signature_changes(recorded, signature)  # none without a recorded signature
        if changes:
            forget(ctx, doc.id, keep_extraction=not extraction_changed(recorded, signature))
            rebuilt.setdefault(", ".join(changes), []).append(f"{doc.title} ({doc.page_count} pages)")
            state = None
        if state is not None and state.get("complete"):
            skipped += doc.page_count
        else:
            todo.append(doc)
    for changed, titles in rebuilt.items():
        ctx.progress.note(
            f"hvm: settings changed since the last build ({changed}): rebuilding "
            f"{len(titles)} document(s): {'; '.join(titles)}"
        )
    counters = Counters()
    ctx.models.check_embedding_model(METHOD)
    renew_stale_recipe(ctx, METHOD, (VEC_CHUNK,))
    have = set(load_index(ctx.store, VEC_CHUNK).keys)
    ctx.progress.start(sum(d.page_count for d in todo), "hvm: building")
    built, embedded = 0, 0
    try:
        for doc in docs:
            if doc not in todo:
                embedded += _ensure_chunk_vectors(ctx, doc.id, have)
        for doc in todo:
            built += build_document(ctx, doc, kit, signature, counters, have)
        embedded += sum(
            embed_missing(
                ctx.store,
                ctx.models.text_embedder,
                on_block=lambda kind, done, total: ctx.progress.advance(0, embedded=f"{done}/{total} {kind}"),
            )
        )
        entity_vectors = 0
        if not settings.concept_graph:  # the ablation retrieves entities directly: they need vectors
            with_vectors = {key.split("|", 1)[0] for key in load_index(ctx.store, VEC_ENTITY).keys}
            for doc in docs:
                if doc.id not in with_vectors and (get_state(ctx.store, doc.id) or {}).get("complete"):
                    entity_vectors += _embed_entities(ctx, doc.id)
    finally:
        bump_version(ctx.store, METHOD)
        ctx.progress.close()
    if todo or embedded or entity_vectors:
        ctx.models.record_embedding_model()
    for line in summarize_notes(counters.notes):
        ctx.progress.note(f"hvm: {line}")
    stats: dict[str, Any] = {k: v for k, v in vars(counters).items() if k not in ("notes", "failures")}
    stats.update(
        documents=len(todo),
        extractor=kit.name,
        notes=len(counters.notes),
        entity_vectors=entity_vectors,
        failed_documents=len(counters.failures),
    )
    if counters.failures:
        stats["failures"] = counters.failures
    if rebuilt:
        stats["rebuilt"] = {changes: titles for changes, titles in rebuilt.items()}
    return BuildReport(
        method=METHOD, pages_built=built, pages_skipped=skipped, seconds=time.perf_counter() - started, stats=stats
    )
