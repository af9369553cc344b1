"""The public Python façade: ``Workspace`` (add, build, retrieve, search, ask, remove, marks, usage).

The CLI and the web app are thin layers over this class; tests and benchmarks use it too.
Adding, building and removing hold the workspace's write lock (``store.writelock``): a
second writer gets ``WorkspaceBusyError`` at once, readers are never blocked.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings, check_sections, load_settings
from .errors import InputError
from .methods.base import BuildReport, MethodContext, available_methods, get_method
from .progress import NullProgress, Progress
from .store import open_store
from .store.writelock import write_lock
from .threads import query_threads
from .types import Answer, Document, Evidence, Page, Usage

if TYPE_CHECKING:
    from .results import SearchResult

VECTORS_PENDING_META = "vectors.pending_rebuild"  # JSON list: methods whose vectors were dropped, not yet rebuilt

DEFAULT_WORKSPACE = ".docgraph"


class AddError(InputError):
    """Some inputs of an ``add`` failed; the others were ingested. ``.report`` has both."""

    def __init__(self, report: Any):
        self.report = report
        lines = [str(f) for f in report.failures]
        super().__init__(f"{len(lines)} input(s) failed:\n" + "\n".join(lines))


class Workspace:
    """A folder holding documents, their pages and everything methods build from them.

    ``Workspace("ws/")`` opens or creates it; settings come from ``ws/docgraph.toml`` and
    ``DOCGRAPH_*`` environment variables, with ``overrides`` (a nested dict) on top.
    ``create=False`` opens an existing workspace only: a missing folder is an ``InputError``
    (commands that only read never leave a new workspace behind).
    """

    def __init__(
        self,
        path: str | Path = DEFAULT_WORKSPACE,
        *,
        settings: Settings | None = None,
        overrides: Mapping[str, Any] | None = None,
        create: bool = True,
    ):
        self.root = Path(path).resolve()
        if not create and not self.root.is_dir():
            raise InputError(
                f"no workspace at {self.root}; add documents to create one: docgraph add FILE... --workspace {path}"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        self.settings = settings or load_settings(self.root, overrides=overrides)
        if self.settings.model_extra:  # sections of methods from other packages
            from .methods.capabilities import settings_sections

            check_sections(self.settings, settings_sections())
        self.store = open_store(self.root, self.settings.store)
        self._models = None
        self._models_lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing
    @property
    def models(self):
        """The ModelHub for this workspace (created on first use)."""
        with self._models_lock:
            if self._models is None:
                from .models.hub import ModelHub

                wrapper = None
                if self.settings.ray.enabled:  # multi-text embedding calls run on the cluster
                    from .scale.ray_embed import ray_embedder

                    wrapper = ray_embedder(self.settings.ray)
                self._models = ModelHub(self.settings.models, self.store, self.root, embedder_wrapper=wrapper)
            return self._models

    def context(self, progress: Progress | None = None) -> MethodContext:
        return MethodContext(
            store=self.store,
            settings=self.settings,
            models=self.models,
            root=self.root,
            progress=progress or NullProgress(),
        )

    def close(self) -> None:
        """Close the store and drop the workspace's in-memory tables (``methods.memo``)."""
        from .methods.memo import forget_store

        forget_store(self.store)
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ documents
    def ingest(self, paths: Iterable[str | Path], *, password: str | None = None, progress: Progress | None = None):
        """Ingest files/folders; returns the IngestReport (added, skipped, failures) without raising."""
        from .documents.ingestion import ingest

        with write_lock(self.root, "add"):
            runner = None
            if self.settings.ray.enabled:  # pages run as Ray tasks
                from .scale.ray_pages import ray_runner

                runner = ray_runner(self.settings.ray, self.settings.ingest)
            return ingest(
                self.store,
                self.root,
                self.settings.ingest,
                [Path(p) for p in paths],
                password=password,
                progress=progress or NullProgress(),
                runner=runner,
            )

    def add(
        self, paths: Iterable[str | Path] | str | Path, *, password: str | None = None, progress: Progress | None = None
    ) -> list[Document]:
        """Add documents (idempotent by content hash); returns the added and already-present
        ones, whose ``.pages`` are read on first use. Raises ``AddError`` after ingesting the
        good inputs if some failed."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        report = self.ingest(paths, password=password, progress=progress)
        if report.failures:
            raise AddError(report)
        return list(report.added) + list(report.skipped)

    def documents(self, with_pages: bool = False) -> list[Document]:
        """Every document, in the order added. ``.pages`` is read from the workspace on first
        use (``with_pages=True`` reads every page now)."""
        return self.store.list_documents(with_pages=with_pages)

    def document(self, ref: str, with_pages: bool = True) -> Document:
        """A document by id, id prefix, file name or title (pages read now, or on first use)."""
        doc = self.store.get_document(self.resolve(ref), with_pages=with_pages)
        if doc is None:  # removed between resolve() and the read
            raise InputError(f"no document {ref!r} in workspace {self.root}; `docgraph ls` lists them")
        return doc

    def metadata(self, ref: str | None = None) -> dict:
        """Documents' shelf labels (title, organisation, period, kind; ``documents.metadata``)
        by document id — all, or the one ``ref`` names; guessed now where not yet."""
        docs = self.store.list_documents() if ref is None else [self.document(ref, with_pages=False)]
        from .documents.metadata_store import ensure_metadata

        return ensure_metadata(self.store, docs)

    def parts(self, ref: str) -> list[tuple[int, int]]:
        """The pieces of the document ``ref`` names as (first page, last page), in order
        (``documents.parts``): one range for a document of one piece, several for a binder or
        documents packed into one PDF; routing by content reads each as a document."""
        from .documents.parts import part_ranges, stored_parts

        doc = self.document(ref, with_pages=False)
        return part_ranges(stored_parts(self.store, [doc.id])[doc.id], doc.page_count)

    def set_metadata(self, ref: str, **values: str):
        """Correct a document's label by hand (``title=``, ``organisation=``, ``period=``,
        ``kind=``, ``ticker=``); the fields set stay the user's. Returns the new ``DocumentMeta``."""
        from .documents.metadata_store import update_metadata

        doc = self.document(ref, with_pages=False)
        with write_lock(self.root, "meta"):
            try:
                return update_metadata(self.store, doc, values)
            except ValueError as exc:
                raise InputError(str(exc)) from None

    def resolve(self, ref: str) -> str:
        docs = self.store.list_documents()
        exact = [d for d in docs if d.id == ref]
        if exact:
            return exact[0].id
        as_path = Path(ref).expanduser()
        matches = [
            d
            for d in docs
            if d.id.startswith(ref)
            or Path(d.path).name == ref
            or d.title == ref
            or (as_path.name == Path(d.path).name and as_path.resolve() == Path(d.path).resolve())
        ]
        if len(matches) == 1:
            return matches[0].id
        if not matches:
            raise InputError(f"no document {ref!r} in workspace {self.root}; `docgraph ls` lists them")
        raise InputError(
            f"{ref!r} matches {len(matches)} documents ({', '.join(d.id for d in matches)}); give more of the id"
        )

    def page(self, ref: str, number: int) -> Page:
        doc_id = self.resolve(ref)
        page = self.store.get_page(doc_id, number)
        if page is None:
            doc = self.store.get_document(doc_id)
            raise InputError(f"document {doc_id} has no page {number} (it has {doc.page_count if doc else 0})")
        return page

    def remove(self, ref: str) -> Document:
        """Remove a document and everything derived from it (rows in one transaction, then files)."""
        doc_id = self.resolve(ref)
        doc = self.document(doc_id, with_pages=False)
        ctx = self.context()
        with write_lock(self.root, f"rm {doc_id}"):
            with self.store.transaction():
                for name in available_methods():
                    get_method(name).remove_document(ctx, doc_id)
                self.store.delete_document(doc_id)
            for folder in ("pages", "crops", "marks"):
                shutil.rmtree(self.root / folder / doc_id, ignore_errors=True)
        return doc

    def marks(self, ref: str, number: int, out: str | Path, mask: Iterable[str] = ()) -> Path:
        """Write the Set-of-Marks image of a page (components boxed and tagged, ``mask`` greyed)."""
        from .documents.marks import draw_marks

        page = self.page(ref, number)
        unknown = sorted(set(mask) - {c.id for c in page.components})
        if unknown:
            raise InputError(
                f"page {number} of {page.doc_id} has no component(s) {', '.join(unknown)}; "
                f"it has {', '.join(c.id for c in page.components)}"
            )
        return draw_marks(page, self.root, Path(out), mask=set(mask))

    # ------------------------------------------------------------------ methods
    def build(
        self, method: str = "kg4vd", *, progress: Progress | None = None, rebuild_vectors: bool = False
    ) -> BuildReport:
        """Build (or update) a method's index; resumable and incremental. ``rebuild_vectors``
        first drops the method's vectors (after switching embedding models) so they are
        re-embedded; ``rebuild_all_vectors`` does that for every method at once."""
        impl = get_method(method)
        with write_lock(self.root, f"build --method {method}"):
            if rebuild_vectors:
                self.drop_vectors(method)
            report = impl.build(self.context(progress))
            pending = self._vectors_pending()
            if method in pending:
                self._set_vectors_pending(pending - {method})
            return report

    def drop_vectors(self, method: str) -> list[str]:
        """Delete every vector namespace of ``method``; returns the namespaces dropped.

        When no other method keeps vectors of another embedding model, the workspace then
        records the configured model; otherwise an ``InputError`` names the methods to rebuild."""
        from .methods.retrieval.vector_index import delete_vectors

        with write_lock(self.root, f"build --method {method} --rebuild-vectors"):
            dropped = [ns for ns in self.store.vector_models() if ns == method or ns.startswith(method + ".")]
            for namespace in dropped:
                delete_vectors(self.store, namespace)
            if dropped:
                self._set_vectors_pending(self._vectors_pending() | {method})
            stale = self._stale_vector_methods()
            if stale:
                raise InputError(
                    f"vectors of {', '.join(stale)} were also built with another embedding model; "
                    + "; ".join(f"rebuild them with: docgraph build --method {m} --rebuild-vectors" for m in stale)
                    + "; or switch every method at once: docgraph build --method all --rebuild-vectors"
                )
            self.models.record_embedding_model()
            return dropped

    def rebuild_all_vectors(self, progress: Progress | None = None) -> list[BuildReport]:
        """Re-embed, with the configured embedding model, every method that holds vectors or
        whose vectors an earlier ``drop_vectors`` dropped, in one step after switching models
        or engines (``build --method all --rebuild-vectors``): every stale vector is dropped
        first, so the workspace mixes no two models once this returns; then each method is
        built again (graphs and chunks stay). Vectors already of the configured model are
        kept, so an interrupted run resumes where it stopped when run again."""
        with write_lock(self.root, "build --method all --rebuild-vectors"):
            methods = sorted(self._vectors_pending() | {ns.split(".")[0] for ns in self.store.vector_models()})
            for method in self._stale_vector_methods():
                try:
                    self.drop_vectors(method)
                except InputError:
                    pass  # the others are dropped next; the last drop records the model
            self.models.record_embedding_model()  # nothing stale is left (also when nothing was)
            return [self.build(method, progress=progress) for method in methods]

    def _stale_vector_methods(self) -> list[str]:
        """Methods holding vectors of an embedding model other than the configured ones."""
        from .models.embedding.vector_recipe import base_model

        configured = self.models.configured_embedding_models()
        return sorted(
            {
                ns.split(".")[0]
                for ns, model in self.store.vector_models().items()
                if base_model(model) not in configured
            }
        )

    def _vectors_pending(self) -> set[str]:
        """Methods whose vectors ``drop_vectors`` dropped and no build has made again."""
        return set(json.loads(self.store.get_meta(VECTORS_PENDING_META) or "[]"))

    def _set_vectors_pending(self, methods: set[str]) -> None:
        self.store.set_meta(VECTORS_PENDING_META, json.dumps(sorted(methods)))

    def retrieve(self, query: str, method: str = "kg4vd", **options: Any) -> Evidence:
        with query_threads(self.settings.retrieval.blas_threads):
            return get_method(method).retrieve(self.context(), query, **options)

    def search(
        self,
        query: str,
        method: str = "kg4vd",
        *,
        top_pages: int = 5,
        documents: Iterable[str] | None = None,
        regions: int = 3,
        **options: Any,
    ) -> SearchResult:
        """The ``top_pages`` best pages for ``query`` with each page's ``regions`` best regions
        (``results.SearchResult``), no answer step. ``documents`` (ids, id prefixes, file names
        or titles) keeps pages of those documents only: a method with
        ``capabilities.ScopedRetrieval`` ranks only their pages; another's are taken from a
        ranking four times as deep (and at least 20 pages) so a narrow search still fills its
        budget."""
        from .documents.metadata import shown_title
        from .documents.metadata_store import ensure_metadata
        from .results import search_result

        if not isinstance(top_pages, int) or top_pages < 1:
            raise InputError(f"top_pages must be a positive integer, got {top_pages!r}")
        if not isinstance(regions, int) or regions < 0:
            raise InputError(f"regions must be a non-negative integer, got {regions!r}")
        from .methods.capabilities import scoped

        wanted = {self.resolve(ref) for ref in documents} if documents else None
        restricts = scoped(method)
        if wanted is not None and restricts:
            options["documents"] = sorted(wanted)
        depth = top_pages if wanted is None or restricts else max(4 * top_pages, 20)
        evidence = self.retrieve(query, method=method, top_pages=depth, **options)
        docs = {d.id: d for d in self.store.list_documents()}
        labels = ensure_metadata(self.store, docs.values())

        def title_of(doc_id: str) -> str:
            return shown_title(docs[doc_id], labels.get(doc_id)) if doc_id in docs else doc_id

        return search_result(
            evidence,
            query,
            page_of=self.store.get_page,
            title_of=title_of,
            root=self.root,
            top_pages=top_pages,
            documents=wanted,
            regions=regions,
        )

    def ask(
        self, query: str, method: str = "kg4vd", *, documents: Iterable[str] | None = None, **options: Any
    ) -> Answer:
        """The method's answer with its claim check (``answers.verify``; ``methods.answers.claims``).
        ``documents`` (ids, prefixes, file names or titles) answers from those documents only,
        with a method that restricts retrieval (``capabilities.ScopedRetrieval``)."""
        from .methods.answers.claims import apply_check
        from .methods.capabilities import scoped

        if documents:
            if not scoped(method):
                raise InputError(
                    f"{method} ranks the whole workspace and cannot answer from chosen documents only; "
                    "ask with --method kg4vd or hvm, or search with --doc"
                )
            options["documents"] = sorted({self.resolve(ref) for ref in documents})

        with query_threads(self.settings.retrieval.blas_threads):
            answer = get_method(method).answer(self.context(), query, **options)
        return apply_check(answer, self.store.get_page, self.settings.answers.verify)

    def status(self) -> dict[str, dict[str, Any]]:
        """Build status per method."""
        ctx = self.context()
        return {name: get_method(name).status(ctx) for name in available_methods()}

    def usage(self) -> dict[str, Usage]:
        return self.store.usage()
