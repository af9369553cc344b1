"""Building the KG4VD graph of a workspace: pages → page graphs → canonical graph → index.

``build_graph(ctx)``:
1. **Pages.** Every page of a ready document without a ``kg4vd.pagegraph`` record runs the
   adaptive loop (``loop.run_page``) — model-driven when the build model is configured,
   offline otherwise — on a thread pool (as many workers as the build model's concurrency
   limit; offline ``OFFLINE_WORKERS``). Each page graph is stored the moment it is final,
   so an interrupted build resumes with the pages it had not finished. A page whose model
   calls fail is reported and left for the next build; the others go on.
2. **Structural layer**: chunks and chunk vectors of every document that has none, and
   page vectors (``index.index_pages``), ``INDEX_BATCH_PAGES`` pages per transaction.
3. **Cross-page connection** (``crosspage.connect``) of every extracted page not yet
   connected, against the canonical graph already stored (so a document added later is
   connected to the existing graph), then entity and relation vectors (offline: names
   blended with the vectors of the chunks they are grounded in, ``index.GroundingContext``)
   — all written in one transaction per batch of whole documents
   (``kg4vd.connect_batch_pages``; a later batch joins the graph as an added document).
   When the judge's model calls fail after the retries, nothing of that batch's connection
   is written: the failure is reported, the extracted pages are kept, and the next build
   connects them (the status says ``complete: false`` until then).
Before 1, settings changed since the last build clear the stages they invalidate, with a
note saying what is rebuilt (``build_config``). Re-running a finished build changes
nothing and calls no model. Progress: pages (with
rounds, model calls and tokens so far), then cross-page candidates.

``remove_document(ctx, doc_id)`` drops a document's page graphs, its mentions, the
entities and relations left without mentions (and their vectors) and its page vectors.
"""

from __future__ import annotations

import gc
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from ...errors import DocgraphError, ModelError, ModelOutputError
from ...memory import release_free_heap
from ...types import Page, Usage
from ..base import BuildReport, MethodContext
from ..building.build_stats import OFFLINE_FALLBACK
from ..retrieval.vector_index import load_index
from .build_config import apply_settings_changes
from .canonical import StoredGraph, ensure_incidence_index, index_incidence
from .crosspage import ConnectResult, connect
from .index import (
    CropFinder,
    GroundingContext,
    check_models,
    embed_entities,
    index_pages,
    indexed_relation,
    missing_page_vectors,
    relation_matrix,
    restore_graph_vectors,
    write_graph_vectors,
)
from .judge import Judge, ModelJudge, OfflineJudge
from .lifecycle import record_graph_size
from .loop import MarksFn, PageStrategy, RoundLog, run_page
from .model_strategy import ModelStrategy
from .offline import OfflineStrategy
from .schemas import EntitySchema, get_schema
from .storage import (
    NS_CONNECTED,
    NS_ENTITY,
    NS_INCIDENT,
    NS_PAGEGRAPH,
    NS_RELATION,
    VEC_ENTITY,
    StoredPageGraph,
    ensure_document_index,
    index_document_graph,
    load_page_graph,
    page_key,
    parse_page_key,
)

OFFLINE_WORKERS = 2


def page_strategy(ctx: MethodContext) -> PageStrategy:
    """The model-driven strategy when a build model is configured, else the offline one."""
    chat = ctx.models.chat("build")
    return ModelStrategy(chat) if chat is not None else OfflineStrategy(ctx.models.nlp)


def cross_page_judge(ctx: MethodContext, schema: EntitySchema) -> Judge | None:
    """None for the "no cross-page connection" ablation; else the model or offline judge."""
    settings = ctx.settings.kg4vd
    if not settings.cross_page:
        return None
    chat = ctx.models.chat("build")
    if chat is not None:
        return ModelJudge(
            chat, max_images=ctx.settings.models.build.max_images, min_similarity=settings.cross_page_min_similarity
        )
    return OfflineJudge(settings.same_threshold, settings.related_threshold, schema.structural_types)


def marks_writer(ctx: MethodContext, folder: Path) -> MarksFn:
    """Draws each round's Set-of-Marks image into ``folder`` (``p<page>-r<round>.png``)."""
    from ...documents.marks import draw_marks

    def draw(page: Page, mask: set[str], round_index: int) -> Path:
        out = folder / f"{page.doc_id}-p{page.number:04d}-r{round_index + 1}.png"
        return Path(draw_marks(page, ctx.root, out, mask=set(mask)))

    return draw


def _workers(ctx: MethodContext, strategy: PageStrategy) -> int:
    return (
        OFFLINE_WORKERS if isinstance(strategy, OfflineStrategy) else max(1, ctx.settings.models.build.max_concurrency)
    )


class _Tally:
    """Thread-safe running totals for the progress bar and the report."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rounds = 0
        self.usage = Usage()
        self.rounds_per_page: Counter = Counter()
        self.stop_reasons: Counter = Counter()
        self.offline_fallback = 0

    def round_done(self, log: RoundLog, usage: Usage) -> None:
        with self.lock:
            self.rounds += 1
            self.usage = self.usage.add(usage)

    def page_done(self, record: StoredPageGraph) -> None:
        with self.lock:
            self.rounds_per_page[record.rounds] += 1
            self.stop_reasons[record.stop_reason] += 1
            self.offline_fallback += record.strategy == OFFLINE_FALLBACK

    def postfix(self) -> dict[str, Any]:
        with self.lock:
            return {
                "rounds": self.rounds,
                "calls": self.usage.calls,
                "cached": self.usage.cache_hits,
                "tokens": self.usage.input_tokens + self.usage.output_tokens,
            }


def build_page(
    ctx: MethodContext,
    page: Page,
    strategy: PageStrategy,
    schema: EntitySchema,
    tally: _Tally | None = None,
    fallback_error: str = "",
) -> StoredPageGraph:
    """Run the adaptive loop on one page and store its graph; returns the stored record. The
    round images live in a temporary folder for the duration of the loop (model calls are
    cached by image content, so they need not be kept). ``fallback_error``: the page is built
    by the offline strategy because the model's replies failed with this error (its record
    says strategy ``"offline-fallback"``)."""
    settings = ctx.settings.kg4vd
    with tempfile.TemporaryDirectory(prefix="kg4vd-marks-") as folder:
        marks = marks_writer(ctx, Path(folder)) if strategy.needs_image else None
        outcome = run_page(
            page,
            strategy,
            schema,
            max_rounds=settings.max_rounds,
            reflector=settings.reflector,
            marks=marks,
            on_round=tally.round_done if tally else None,
        )
    record = StoredPageGraph.from_graph(
        page.doc_id,
        page.number,
        outcome.graph,
        rounds=len(outcome.rounds),
        stop_reason=outcome.stop_reason,
        strategy=OFFLINE_FALLBACK if fallback_error else strategy.name,
        fallback_error=fallback_error,
        usage=outcome.usage,
        feedback=[
            {"round": r.round + 1, "masked": r.masked, **r.feedback.model_dump()}
            for r in outcome.rounds
            if r.feedback is not None
        ],
        rejected=[{"round": t + 1, **rej.as_dict()} for t, rej in outcome.rejected],
    )
    ctx.store.put_record(NS_PAGEGRAPH, record.key, record.model_dump(mode="json"), doc_id=page.doc_id)
    return record


def _pending_pages(ctx: MethodContext) -> tuple[list[tuple[str, int]], int, list[str]]:
    """(pages to extract, pages already extracted, keys of all pages of ready documents)."""
    done = _keys(ctx, NS_PAGEGRAPH)
    todo: list[tuple[str, int]] = []
    all_keys: list[str] = []
    for doc in ctx.store.list_documents():
        if doc.status != "ready":
            continue
        for number in sorted(ctx.store.page_numbers(doc.id)):
            all_keys.append(page_key(doc.id, number))
            if all_keys[-1] not in done:
                todo.append((doc.id, number))
    return todo, len(all_keys) - len(todo), all_keys


def _extract_pages(ctx: MethodContext, todo: list[tuple[str, int]], schema: EntitySchema, tally: _Tally) -> list[str]:
    """Extract ``todo`` pages concurrently; returns failure messages. With
    ``kg4vd.on_model_error = "offline"`` a page whose model replies stay unusable after the
    repair and re-asks (``ModelOutputError``) is built by the offline strategy instead, and
    marked so; an endpoint that keeps failing still leaves the page for the next build."""
    strategy = page_strategy(ctx)
    fallback = ctx.settings.kg4vd.on_model_error == "offline" and not isinstance(strategy, OfflineStrategy)
    offline: list[OfflineStrategy] = []  # made on first use
    offline_lock = threading.Lock()
    failures: list[str] = []

    def offline_strategy() -> OfflineStrategy:
        with offline_lock:
            if not offline:
                offline.append(OfflineStrategy(ctx.models.nlp))
            return offline[0]

    def one(doc_id: str, number: int) -> StoredPageGraph:
        page = ctx.store.get_page(doc_id, number)
        if page is None:
            raise DocgraphError(f"page {number} of {doc_id} is gone from the workspace")
        try:
            return build_page(ctx, page, strategy, schema, tally)
        except ModelOutputError as exc:
            if not fallback:
                raise
            ctx.progress.note(
                f"kg4vd: the model's replies for page {number} of {doc_id} stayed unusable; "
                f'built offline instead (kg4vd.on_model_error = "offline"): {exc}'
            )
            return build_page(ctx, page, offline_strategy(), schema, tally, fallback_error=str(exc))

    ctx.progress.start(len(todo), "kg4vd pages")
    pool = ThreadPoolExecutor(max_workers=_workers(ctx, strategy), thread_name_prefix="kg4vd-page")
    try:
        futures = {pool.submit(one, doc_id, number): (doc_id, number) for doc_id, number in todo}
        for future in as_completed(futures):
            doc_id, number = futures.pop(future)  # a finished page's record is not kept (10k pages: ~1.6 GB)
            try:
                tally.page_done(future.result())
            except DocgraphError as exc:
                failures.append(f"{doc_id} page {number}: {exc}")
                ctx.progress.note(
                    f"kg4vd: page {number} of {doc_id} failed and will be retried by the next build: {exc}"
                )
            ctx.progress.advance(1, **tally.postfix())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        ctx.progress.close()
    return failures


class _LazyBar:
    """A progress bar started on the first advance (judging starts after the embeddings), of
    ``total()`` steps (asked then)."""

    def __init__(self, ctx: MethodContext, total: Callable[[], int], description: str):
        self.ctx, self.total, self.description, self.started = ctx, total, description, False
        self.lock = threading.Lock()

    def advance(self, pairs: int) -> None:
        with self.lock:
            if not self.started:
                self.ctx.progress.start(self.total(), self.description)
                self.started = True
            self.ctx.progress.advance(1, pairs=pairs)

    def close(self) -> None:
        if self.started:
            self.ctx.progress.close()


INDEX_BATCH_PAGES = 200  # pages chunked, embedded and written per transaction (their chunks are per page)


def _keys(ctx: MethodContext, namespace: str) -> set[str]:
    return set(ctx.store.record_keys(namespace))


def connect_batches(keys: list[str], batch_pages: int) -> list[list[str]]:
    """``keys`` (page keys in document, page order) cut into batches of whole documents, each
    closed once it holds at least ``batch_pages`` pages (a longer document is one batch)."""
    batches: list[list[str]] = []
    current: list[str] = []
    for index, key in enumerate(keys):
        current.append(key)
        last_of_doc = index + 1 == len(keys) or parse_page_key(keys[index + 1])[0] != parse_page_key(key)[0]
        if last_of_doc and len(current) >= batch_pages:
            batches.append(current)
            current = []
    return batches + [current] if current else batches


def _connect_pending(ctx: MethodContext, schema: EntitySchema, ready_keys: list[str]) -> ConnectResult | None:
    """Connect the extracted pages not yet connected, ``kg4vd.connect_batch_pages`` pages of
    whole documents at a time, each batch written in one transaction: memory is bounded by a
    batch plus the canonical graph, and an interrupted connection resumes at its batch. A
    later batch is connected to the graph the earlier ones left, as a document added later
    would be; a build of one document (or fewer pages than a batch) is one batch, as before."""
    pending = sorted((_keys(ctx, NS_PAGEGRAPH) - _keys(ctx, NS_CONNECTED)) & set(ready_keys), key=parse_page_key)
    if pending:
        ensure_document_index(ctx.store)
        ensure_incidence_index(ctx.store, NS_RELATION)
    total: ConnectResult | None = None  # counts only: a batch's entities and relations are not kept past it
    for batch in connect_batches(pending, ctx.settings.kg4vd.connect_batch_pages):
        total = _connect_batch(ctx, schema, batch, total or ConnectResult())
    return total


def _connect_batch(ctx: MethodContext, schema: EntitySchema, keys: list[str], earlier: ConnectResult) -> ConnectResult:
    """``_connect_and_write`` of one batch; returns ``earlier``'s totals with this batch's. The
    batch's page graphs, entities and JSON rows are freed here, so the heap they took is
    handed back before the next batch (``heap``): the process keeps a batch's peak once,
    not the high-water mark of every batch before it."""
    result = _connect_and_write(ctx, schema, keys)
    totals = earlier if result is None else earlier.absorb(result)
    del result
    gc.collect()  # what the batch left in reference cycles, which a full collection would free only later
    release_free_heap()
    return totals


def _connect_and_write(ctx: MethodContext, schema: EntitySchema, keys: list[str]) -> ConnectResult | None:
    """Connect the page graphs of ``keys`` and write the result in one transaction. The page
    graphs are read one at a time as the connection turns them into instances; what the
    ``kg4vd.connected`` rows need of them is kept aside."""
    connected: list[tuple[str, dict[str, int], str]] = []

    def page_graphs() -> Iterator[StoredPageGraph]:
        for key in keys:
            if graph := load_page_graph(ctx.store, *parse_page_key(key)):
                connected.append(
                    (graph.key, {"entities": len(graph.entities), "relations": len(graph.relations)}, graph.doc_id)
                )
                yield graph

    canonical = StoredGraph(ctx.store, NS_ENTITY, NS_RELATION)
    index = load_index(ctx.store, VEC_ENTITY)
    aligned = index.matrix if index.keys == list(canonical.entity_ids()) else None  # the usual case: no copy
    crops = CropFinder(ctx)
    grounding = GroundingContext(ctx)
    judge = cross_page_judge(ctx, schema)
    workers = max(1, ctx.settings.models.build.max_concurrency) if isinstance(judge, ModelJudge) else 1
    judged = _LazyBar(ctx, lambda: sum(counts["entities"] for _, counts, _ in connected), "kg4vd cross-page")
    try:
        result = connect(
            page_graphs(),
            canonical,
            embed=lambda ents: embed_entities(ctx, ents, crops, ctx.progress, grounding),
            existing_vectors=index.vector,
            existing_matrix=aligned,
            judge=judge,
            top_k=ctx.settings.kg4vd.cross_page_top_k,
            crop=crops,
            workers=workers,
            on_judged=judged.advance,
        )
    finally:
        judged.close()
    del canonical  # what it read (the merged entities are in the result) is not kept through the embedding
    if not connected:
        return None
    names = {**result.names, **{eid: e.name for eid, e in result.entities.items()}}
    entity_rows = embed_entities(ctx, list(result.entities.values()), crops, ctx.progress, grounding)
    indexed = {k: r for k, r in result.relations.items() if indexed_relation(r)}
    relation_rows = relation_matrix(ctx, list(indexed.values()), names, ctx.progress, grounding)
    with ctx.store.transaction():
        # generators: the store serialises a slice at a time (``WRITE_SLICE``), not the whole batch
        ctx.store.put_records(NS_ENTITY, ((k, e.model_dump(mode="json"), None) for k, e in result.entities.items()))
        ctx.store.put_records(NS_RELATION, ((k, r.model_dump(mode="json"), None) for k, r in result.relations.items()))
        if result.deleted_entities:
            ctx.store.delete_records(NS_ENTITY, keys=result.deleted_entities)
        if result.deleted_relations:
            ctx.store.delete_records(NS_RELATION, keys=result.deleted_relations)
        ctx.store.put_records(NS_CONNECTED, connected)
        index_document_graph(ctx.store, result.entities.values(), result.relations.values())
        index_incidence(ctx.store, result.relations.values())
        if result.deleted_entities:
            ctx.store.delete_records(NS_INCIDENT, keys=result.deleted_entities)
        write_graph_vectors(
            ctx, result.entities, entity_rows, indexed, relation_rows, result.deleted_entities, result.deleted_relations
        )
        ctx.models.record_embedding_model()
        record_graph_size(ctx.store)
    return result


def build_graph(ctx: MethodContext) -> BuildReport:
    """Build or update the workspace's KG4VD graph (see the module docstring)."""
    started = time.perf_counter()
    schema = get_schema(ctx.settings.kg4vd.schema_preset)
    check_models(ctx)
    settings_note = apply_settings_changes(ctx)  # clears the stages changed settings invalidate
    todo, already, all_keys = _pending_pages(ctx)
    tally = _Tally()
    failures = _extract_pages(ctx, todo, schema, tally) if todo else []
    missing = missing_page_vectors(ctx, all_keys)  # the structural layer first: entity vectors use its chunks
    for start in range(0, len(missing), INDEX_BATCH_PAGES):  # memory bounded by a batch; resumes per batch
        batch = missing[start : start + INDEX_BATCH_PAGES]
        index_pages(
            ctx, [p for key in batch if (p := ctx.store.get_page(*parse_page_key(key))) is not None], ctx.progress
        )
        ctx.models.record_embedding_model()
        release_free_heap()  # the batch's chunks and rows: the connection phase starts from a small heap
    try:
        result, connect_failure = _connect_pending(ctx, schema, all_keys), None
    except ModelError as exc:
        result, connect_failure = None, f"cross-page connection: {exc}"
        ctx.progress.note(
            f"kg4vd: model calls failed while connecting entities across pages; the extracted pages "
            f"are kept and the next build connects them: {exc}"
        )
    if restore_graph_vectors(ctx):
        ctx.models.record_embedding_model()
    stats: dict[str, Any] = {
        "failed_pages": len(failures),
        "offline_fallback_pages": tally.offline_fallback,
        "rounds": tally.rounds,
        "rounds_per_page": dict(sorted(tally.rounds_per_page.items())),
        "stop_reasons": dict(tally.stop_reasons),
        "model_calls": tally.usage.calls,
        "input_tokens": tally.usage.input_tokens,
        "output_tokens": tally.usage.output_tokens,
        "entities": ctx.store.count_records(NS_ENTITY),
        "relations": ctx.store.count_records(NS_RELATION),
        "page_vectors": len(missing),
    }
    if result is not None:
        stats.update(
            connected_pages=result.pages,
            merged_entities=result.merged_instances,
            verdicts=dict(result.verdicts),
            judge_calls=result.usage.calls,
            candidates_below_floor=result.below_floor,
        )
    if failures or connect_failure:
        stats["failures"] = failures + ([connect_failure] if connect_failure else [])
    if settings_note:
        stats["rebuilt"] = settings_note
    return BuildReport(
        method="kg4vd",
        pages_built=len(todo) - len(failures),
        pages_skipped=already,
        seconds=time.perf_counter() - started,
        stats=stats,
    )
