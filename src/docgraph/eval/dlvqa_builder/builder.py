"""``build_dlvqa``: documents → a DLVQA question set (KG4VD Appendix A.3), resumable.

Per document, in order: page summaries → document summary → grounded atomic facts per
page → fact embeddings → HDBSCAN clusters (noise dropped) → one question per retained
cluster whose facts lie on at least ``min_page_span`` pages. Every model call goes through
the workspace's model stack, so it is cached (a rerun, or a run resumed after an
interruption, pays only for calls not made before) and metered per stage
(``dlvqa.page_summary``, ``dlvqa.doc_summary``, ``dlvqa.facts``, ``dlvqa.question``;
``embed.dlvqa facts``). With a review folder, each stage's output is written there and a
person's edits replace it on the next run (``review``). The set is written at the end, in
one piece, in the ``dlvqa`` loader's format (``questions.dataset_row``).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ...config import DLVQASettings
from ...errors import ConfigError, InputError
from ...models.base import ChatModel
from ...progress import NullProgress, Progress
from ...types import Document, Usage
from .clusters import NOISE, cluster_pages, embed_facts, group, hdbscan_labels, span_verdict
from .facts import extract_facts
from .questions import dataset_row, draft_question
from .review import Review
from .schemas import Cluster, DocumentSummary, Fact, PageSummary
from .summaries import summarize_document, summarize_page

T = TypeVar("T")
R = TypeVar("R")
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass
class DocumentResult:
    """What the builder made of one document."""

    doc_id: str  # the dataset's doc_id: the file name
    pages: int
    facts: dict[str, int] = field(default_factory=dict)  # by type
    ungrounded: int = 0  # visual facts dropped without a visual component
    clusters: int = 0  # non-noise clusters
    noise: int = 0  # facts HDBSCAN left unclustered
    kept: list[int] = field(default_factory=list)  # clusters asked about
    dropped: dict[int, str] = field(default_factory=dict)  # cluster → why not asked
    edited: list[str] = field(default_factory=list)  # stages taken from the review folder


@dataclass
class DatasetReport:
    out: Path
    rows: list[dict[str, Any]]
    documents: list[DocumentResult]
    usage: dict[str, Usage]
    seconds: float


def builder_chat(ws: Any) -> ChatModel:
    """The build role's model (else the answer role's); the builder has no offline mode."""
    chat = ws.models.chat("build") or ws.models.chat("answer")
    if chat is None:
        raise ConfigError(
            "docgraph dataset dlvqa needs a chat/vision model: set models.build.base_url and "
            "models.build.model in docgraph.toml (or DOCGRAPH_MODELS__BUILD__BASE_URL)"
        )
    return chat


def build_dlvqa(
    ws: Any,
    paths: Iterable[str | Path],
    out: Path | str,
    *,
    review: Path | str | None = None,
    subset: str | None = None,
    settings: DLVQASettings | None = None,
    progress: Progress | None = None,
) -> DatasetReport:
    """Add ``paths`` to the workspace ``ws`` and write their question set to ``out`` (see the module doc)."""
    started = time.perf_counter()
    cfg = settings or ws.settings.dlvqa
    progress = progress or NullProgress()
    chat = builder_chat(ws)
    files = [Path(p) for p in paths]
    docs = sorted(ws.add(files, progress=progress), key=lambda d: (Path(d.path).name, d.id))
    if not docs:
        raise InputError("no documents given; name files or folders to build questions from")
    names = [Path(d.path).name for d in docs]
    given = {p.name: p for p in files if p.is_file()}
    twins = sorted({n for n in names if names.count(n) > 1})
    if twins:
        raise InputError(
            f"several documents are named {', '.join(twins)}; the set names documents by file name, so rename one"
        )
    out = Path(out)
    notes = Review(review, ws.store)
    rows: list[dict[str, Any]] = []
    results = []
    with ws.models.meter.track() as used:
        for doc, name in zip(docs, names):
            run = _DocumentRun(ws, chat, ws.store.get_document(doc.id, with_pages=True), name, cfg, notes, progress)
            doc_rows, result = run.run(subset or "", _doc_path(given.get(name, Path(doc.path)), out))
            rows.extend(doc_rows)
            results.append(result)
    _write_jsonl(out, rows)
    return DatasetReport(out=out, rows=rows, documents=results, usage=dict(used), seconds=time.perf_counter() - started)


class _DocumentRun:
    """The stages for one document (see the module doc)."""

    def __init__(
        self, ws: Any, chat: ChatModel, doc: Document, name: str, cfg: DLVQASettings, review: Review, progress: Progress
    ):
        self.ws, self.chat, self.doc, self.name, self.cfg = ws, chat, doc, name, cfg
        self.review, self.progress = review, progress
        self.pages = list(doc.pages)
        self.result = DocumentResult(doc_id=name, pages=len(self.pages))
        self.workers = max(1, ws.settings.models.build.max_concurrency)

    def run(self, subset: str, doc_path: str) -> tuple[list[dict[str, Any]], DocumentResult]:
        page_summaries = self.page_summaries()
        doc_summary = self.document_summary(page_summaries)
        facts = self.facts(doc_summary, page_summaries)
        by_id = {f.id: f for f in facts}
        clusters = self.clusters(facts, by_id)
        asked = []
        for cluster in clusters:
            verdict = span_verdict(cluster, by_id, self.cfg.min_page_span)
            if cluster.cluster == NOISE:
                self.result.noise += len(cluster.fact_ids)
                continue
            self.result.clusters += 1
            if verdict is None:
                asked.append(cluster)
                self.result.kept.append(cluster.cluster)
            else:
                self.result.dropped[cluster.cluster] = verdict
        order = {f.id: n for n, f in enumerate(facts)}  # gold facts in page order, however a reviewer listed them
        members = {
            c.cluster: [by_id[i] for i in sorted({i for i in c.fact_ids if i in by_id}, key=order.__getitem__)]
            for c in asked
        }
        replies = self._parallel(
            lambda c: draft_question(self.chat, self.doc.title, len(self.pages), doc_summary, members[c.cluster]),
            asked,
            "questions",
        )
        boxes = {
            (p.number, c.id): [round(v, 2) for v in (c.bbox.x0, c.bbox.y0, c.bbox.x1, c.bbox.y1)]
            for p in self.pages
            for c in p.components
        }
        stem = re.sub(r"[^A-Za-z0-9]+", "_", Path(self.name).stem).strip("_") or "doc"
        rows = [
            dataset_row(
                qa_id=f"{stem}_c{c.cluster:03d}",
                doc_name=self.name,
                doc_path=doc_path,
                doc=self.doc,
                subset=subset or self.doc.title,
                cluster=c,
                facts=members[c.cluster],
                reply=reply,
                answer_format=self.cfg.answer_format,
                tolerance=self.cfg.length_tolerance,
                boxes=boxes,
                model=self.chat.model,
            )
            for c, reply in zip(asked, replies)
        ]
        return rows, self.result

    # ------------------------------------------------------------------ stages
    def page_summaries(self) -> dict[int, str]:
        edited = self._edited("page_summaries", PageSummary)
        if edited is not None:
            summaries = {s.page: s.summary for s in edited}
        else:
            texts = self._parallel(
                lambda p: summarize_page(self.chat, self.ws.root, self.doc.title, p, len(self.pages)),
                self.pages,
                "page summaries",
            )
            summaries = {p.number: t for p, t in zip(self.pages, texts)}
        rows = [{"page": n, "summary": s} for n, s in sorted(summaries.items())]
        self.review.write("page_summaries", self.name, rows, computed=edited is None, doc_key=self.doc.id)
        return summaries

    def document_summary(self, page_summaries: dict[int, str]) -> str:
        edited = self._edited("doc_summaries", DocumentSummary)
        if edited is not None:
            summary = "\n\n".join(s.summary for s in edited)
        else:
            self.progress.start(1, f"{self.name[:30]} · document summary")
            summary = summarize_document(
                self.chat, self.doc.title, sorted(page_summaries.items()), len(self.pages), self.cfg.summary_batch_pages
            )
            self.progress.advance(1)
        self.review.write(
            "doc_summaries",
            self.name,
            [{"title": self.doc.title, "summary": summary}],
            computed=edited is None,
            doc_key=self.doc.id,
        )
        return summary

    def facts(self, doc_summary: str, page_summaries: dict[int, str]) -> list[Fact]:
        edited = self._edited("facts", Fact)
        if edited is not None:
            facts = sorted(edited, key=lambda f: f.page)
            if repeated := repeats([f.id for f in facts]):
                raise InputError(
                    f"fact ids {', '.join(repeated)} of {self.name} are used twice; give each fact its own id",
                    path=str(self.review.path("facts")),
                )
        else:
            found = self._parallel(
                lambda p: extract_facts(
                    self.chat,
                    self.ws.root,
                    self.doc.title,
                    p,
                    len(self.pages),
                    doc_summary,
                    page_summaries.get(p.number, ""),
                    self.cfg.max_facts_per_page,
                ),
                self.pages,
                "facts",
            )
            facts = [f for page_facts in found for f in page_facts.facts]
            self.result.ungrounded = sum(p.ungrounded for p in found)
        for kind in ("text", "visual"):
            self.result.facts[kind] = sum(f.type == kind for f in facts)
        self.review.write(
            "facts", self.name, [f.model_dump() for f in facts], computed=edited is None, doc_key=self.doc.id
        )
        return facts

    def clusters(self, facts: list[Fact], by_id: dict[str, Fact]) -> list[Cluster]:
        edited = self._edited("clusters", Cluster)
        if edited is not None:
            clusters = sorted(edited, key=lambda c: c.cluster)
            if repeated := repeats([c.cluster for c in clusters]):
                raise InputError(
                    f"clusters {', '.join(map(str, repeated))} of {self.name} appear twice; number each cluster once",
                    path=str(self.review.path("clusters")),
                )
        else:
            vectors = embed_facts(self.ws.models.text_embedder, facts)
            clusters = group(facts, hdbscan_labels(vectors, self.cfg.min_cluster_size, self.cfg.min_samples))
        rows = []
        for c in clusters:
            verdict = span_verdict(c, by_id, self.cfg.min_page_span)
            rows.append(
                {
                    **c.model_dump(),
                    "pages": cluster_pages(c, by_id),
                    "status": verdict or "question",
                    "unknown_fact_ids": [i for i in c.fact_ids if i not in by_id],
                    "facts": [by_id[i].text[:120] for i in c.fact_ids if i in by_id],
                }
            )
        self.review.write("clusters", self.name, rows, computed=edited is None, doc_key=self.doc.id)
        return clusters

    # ------------------------------------------------------------------ helpers
    def _edited(self, stage: str, model: type[ModelT]) -> list[ModelT] | None:
        rows = self.review.edited(stage, self.name)
        if rows is None:
            return None
        self.result.edited.append(stage)
        self.progress.note(f"{self.name}: {stage} taken from {self.review.path(stage)} (edited)")
        return self.review.parse(stage, rows, model)

    def _parallel(self, fn: Callable[[T], R], items: Sequence[T], what: str) -> list[R]:
        """``fn`` over ``items`` on the build role's concurrency, results in item order."""
        if not items:
            return []
        self.progress.start(len(items), f"{self.name[:30]} · {what}")
        with ThreadPoolExecutor(max_workers=min(self.workers, len(items)), thread_name_prefix="dlvqa") as pool:
            futures = [pool.submit(fn, item) for item in items]
            results = []
            for future in futures:
                results.append(future.result())
                self.progress.advance(1)
        return results


def repeats(values: Sequence[Any]) -> list[Any]:
    """The values that occur more than once, sorted."""
    return sorted({v for v in values if values.count(v) > 1})


def _doc_path(file: Path, out: Path) -> str:
    """The document's file as the set records it: relative to the set's folder when inside it."""
    path = file.resolve()
    try:
        return path.relative_to(out.resolve().parent).as_posix()
    except ValueError:
        return str(path)


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
