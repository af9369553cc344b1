"""The workspaces an evaluation asks its questions over: their settings (a shared embedding
cache, chat roles off for retrieval-only runs, one PostgreSQL schema per corpus) and the
corpora a benchmark's questions need (``eval.corpus`` builds each)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings
from ..errors import ConfigError
from .corpus import CorpusSpec, library_spec, packed_spec, passage_spec, per_document_specs
from .loaders import Benchmark, QAItem, by_document, pack_documents

if TYPE_CHECKING:
    from .runner import EvalOptions

SHARED_EMBEDDINGS = "embeddings.sqlite"  # under the workspace root: see models.embedding.embed_shared


def eval_settings(base: Settings | None, retrieval_only: bool, workspace_root: Path) -> Settings:
    """The corpus workspaces' settings: the caller's, with chat roles off for retrieval-only,
    and (unless the caller set one) an embedding cache shared by every corpus workspace
    under ``workspace_root`` — the same page embedded for a per-document corpus is reused
    by the packed corpus and across methods."""
    settings = (base or Settings()).model_copy(deep=True)
    if not settings.models.embedding.shared_cache:
        settings.models.embedding.shared_cache = str(workspace_root / SHARED_EMBEDDINGS)
    if retrieval_only:
        for role in ("build", "answer", "judge"):
            getattr(settings.models, role).base_url = None
        settings.models.replay_file = None
    return settings


def corpus_settings(settings: Settings, spec: CorpusSpec) -> Settings:
    """One corpus workspace's settings. On a server store (PostgreSQL) every corpus gets its
    own schema, ``<store.pg_schema>_<10 hex digits>`` of its folder's last two parts
    (``<benchmark>/<corpus folder>``, whose name carries the hash of what defines the corpus:
    two benchmarks' passage corpora share the name ``passages``, never the folder), so one
    server keeps an eval's corpora apart as the workspace root's folders do, and moving the
    root keeps them. SQLite's are ``settings``."""
    if settings.store.backend == "sqlite":
        return settings
    own = settings.model_copy(deep=True)
    where = f"{spec.folder.parent.name}/{spec.folder.name}"
    digest = hashlib.sha1(where.encode("utf-8")).hexdigest()[:10]
    own.store.pg_schema = f"{settings.store.pg_schema[:52]}_{digest}"
    return own


def corpus_specs(bench: Benchmark, items: list[QAItem], options: EvalOptions) -> list[CorpusSpec]:
    """The corpora the questions are asked over (see ``eval.corpus``)."""
    root = options.workspace_root
    if bench.corpus is not None:
        grouped = (
            bench.corpus.passages
            and all(p.doc_id for p in bench.corpus.passages)
            and all(i.doc_ids for i in items)
            and options.setting == "per-document"
        )
        if not grouped:
            return [passage_spec(root, bench.name, bench.corpus.passages, items)]
        specs = []
        for doc_id, group in by_document(items).items():
            passages = [p for p in bench.corpus.passages if p.doc_id == doc_id]
            spec = passage_spec(root, f"{bench.name}/{doc_id}", passages, group)
            spec.name = doc_id
            specs.append(spec)
        return specs
    if not bench.documents:
        raise ConfigError(f"benchmark {bench.name} has neither documents nor a passage corpus; check its path")
    if options.setting == "packed":
        layout, packed_items = pack_documents(items, bench.page_counts)
        return [packed_spec(root, bench.name, layout, packed_items, bench.documents)]
    if options.setting == "library":
        return [library_spec(root, bench.name, items, bench.documents)]
    return per_document_specs(root, bench.name, by_document(items), bench.documents)
