"""``ModelHub``: the one place that turns ``ModelsSettings`` into model objects (a thin factory).

Chat stack per role, innermost first::

    OpenAIChat -> RetryingChat -> LimitedChat [-> RecordingChat] -> StructuredChat -> CachedChat -> MeteredChat
    ReplayChat ------------------------------------------------> StructuredChat -> CachedChat -> MeteredChat

so a cache hit never waits for a concurrency slot and is counted as a hit (not a call),
only validated replies are cached, a re-ask is retried like any request, and replayed
replies are parsed and cached exactly like live ones. ``chat(role)`` is None when the role
has no ``base_url`` and no replay file is set: the caller then runs its offline strategy.

Each endpoint's capabilities (``capabilities.py``) are probed once per workspace
(``GET /props``) and remembered in its metadata: when the server reports fewer parallel
slots than ``max_concurrency`` (or ``slots`` is set lower), the roles on that server share
one concurrency limit of that many slots (one log line says so), so requests are not
queued inside the server until clients time out; a server that reports no vision makes
the role text-only.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import ModelsSettings
from ..errors import ConfigError, EmbeddingMismatchError
from ..store.base import Store
from .base import ChatModel, ImageEmbedder, OfflineNLP, Reranker, TextEmbedder
from .chat.cache import CachedChat
from .chat.capabilities import CapabilityBook, probe_props
from .chat.structured import ERRORS_DIR, StructuredChat
from .embedding.embed_shared import SharedEmbeddingFile
from .embedding.vector_recipe import base_model
from .usage import MeteredChat, UsageMeter

if TYPE_CHECKING:
    from .embedding.embed_local import LocalSpec, LocalTextEmbedder

EmbedderWrapper = Callable[["LocalTextEmbedder", "LocalSpec"], TextEmbedder]
"""Wraps the local text embedder built from a spec (e.g. to run it on a cluster)."""

ROLES = ("build", "answer", "judge")
META_TEXT_MODEL = "embedding_model"
META_TEXT_DIM = "embedding_dim"
META_IMAGE_MODEL = "image_embedding"
log = logging.getLogger(__name__)


class ModelHub:
    """Models for one workspace. Everything is created lazily, once, thread-safely.

    ``record_file``: append every live chat reply to this replay file (for later replay).
    """

    def __init__(
        self,
        settings: ModelsSettings,
        store: Store,
        root: Path | str,
        *,
        record_file: Path | str | None = None,
        embedder_wrapper: EmbedderWrapper | None = None,
    ):
        self.settings = settings
        self.embedder_wrapper = embedder_wrapper  # e.g. multi-text calls on a Ray cluster (scale.ray_embed)
        self.store = store
        self.root = Path(root)
        self.record_file = Path(record_file) if record_file is not None else None
        self._lock = threading.RLock()
        self._chats: dict[str, ChatModel | None] = {}
        self._objects: dict[str, Any] = {}
        self._books: dict[str, CapabilityBook] = {}
        self._limits: dict[str, Any] = {}

    # ------------------------------------------------------------------ chat
    def chat(self, role: str) -> ChatModel | None:
        """The composed chat model for ``role`` ("build", "answer", "judge"), or None (offline)."""
        if role not in ROLES:
            raise ConfigError(f"unknown model role {role!r}; use one of {', '.join(ROLES)}")
        with self._lock:
            if role not in self._chats:
                self._chats[role] = self._make_chat(role)
            return self._chats[role]

    def replay_path(self) -> Path | None:
        """The configured replay file (relative paths resolve against the workspace, then cwd)."""
        if not self.settings.replay_file:
            return None
        path = Path(self.settings.replay_file).expanduser()
        if not path.is_absolute() and (self.root / path).exists():
            return self.root / path
        return path

    def _make_chat(self, role: str) -> ChatModel | None:
        from .chat.replay import RecordingChat, ReplayChat

        cs = getattr(self.settings, role)
        replay = self.replay_path()
        if replay is not None:
            backend: ChatModel = ReplayChat(replay, cs, role)
        elif cs.enabled:
            from .chat.openai_chat import OpenAIChat
            from .transport.limit import LimitedChat
            from .transport.retry import RetryingChat, RetryPolicy

            book = self.capabilities(cs)
            http = OpenAIChat(cs, role, capabilities=book)
            if http.supports_vision and book.caps.vision is False:
                log.warning("%s serves no images (/props); role %s runs text-only", http.endpoint, role)
                http.supports_vision = False
            backend = LimitedChat(RetryingChat(http, RetryPolicy.from_settings(cs)), self._limit(cs, book, role))
            if self.record_file is not None:
                backend = RecordingChat(backend, self.record_file)
        else:
            return None
        chat: ChatModel = StructuredChat(backend, errors_dir=self.root / ERRORS_DIR)
        if self.settings.cache:
            chat = CachedChat(chat, self.store)
        return MeteredChat(chat, self.meter)

    def capabilities(self, cs: Any) -> CapabilityBook:
        """The remembered capabilities of ``cs``'s endpoint, probed once per workspace."""
        key = f"{cs.base_url}|{cs.model}"
        with self._lock:
            if key not in self._books:
                book = CapabilityBook(key, cs.structured_output, self.store.get_meta, self.store.set_meta)
                if not book.caps.probed and cs.slots is None:
                    found = probe_props(cs.base_url, timeout_s=min(5.0, cs.timeout_s))
                    if found is not None:
                        book.record_probe(found)
                self._books[key] = book
            return self._books[key]

    def _limit(self, cs: Any, book: CapabilityBook, role: str) -> Any:
        """The concurrency limit for ``role``: its own ``max_concurrency``, or — when the server
        runs fewer requests at once — one limit of that many slots shared by its roles."""
        from .transport.limit import Limit

        slots = cs.slots or book.caps.slots
        if not slots or slots >= cs.max_concurrency:
            return cs.max_concurrency
        with self._lock:
            if cs.base_url not in self._limits:
                log.warning(
                    "chat endpoint %s runs %d request(s) at once; models.%s.max_concurrency = %d "
                    "lowered to %d so requests do not queue inside the server",
                    cs.base_url,
                    slots,
                    role,
                    cs.max_concurrency,
                    slots,
                )
                self._limits[cs.base_url] = Limit(slots)
            return self._limits[cs.base_url]

    # ------------------------------------------------------------------ lazy singletons
    def _get(self, name: str, factory: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._objects:
                self._objects[name] = factory()
            return self._objects[name]

    @property
    def meter(self) -> UsageMeter:
        return self._get("meter", lambda: UsageMeter(self.store))

    @property
    def shared_embeddings(self) -> SharedEmbeddingFile | None:
        """The cross-workspace embedding cache file, when ``embedding.shared_cache`` names one."""
        path = self.settings.embedding.shared_cache
        if not path:
            return None
        from .embedding.embed_shared import shared_embedding_file

        return shared_embedding_file(path)

    @property
    def text_embedder(self) -> TextEmbedder:
        def make() -> TextEmbedder:
            es = self.settings.embedding
            if es.backend == "openai":
                from .embedding.embed_openai import OpenAITextEmbedder

                inner: TextEmbedder = OpenAITextEmbedder(es)
            else:
                from .embedding.embed_local import local_spec

                spec = local_spec(es, self.built_text_model())
                local = spec.build()
                inner = local if self.embedder_wrapper is None else self.embedder_wrapper(local, spec)
            if not self.settings.cache:
                return inner
            from .embedding.embed_cache import CachedTextEmbedder

            return CachedTextEmbedder(inner, self.store, self.shared_embeddings, self.meter)

        return self._get("text_embedder", make)

    @property
    def image_embedder(self) -> ImageEmbedder:
        def make() -> ImageEmbedder:
            ies = self.settings.image_embedding
            if ies.backend == "openai":
                from .embedding.image_embed_endpoint import EndpointImageEmbedder

                return EndpointImageEmbedder(ies, self.store, shared=self.shared_embeddings)
            from .embedding.image_embed import TextFallbackImageEmbedder

            return TextFallbackImageEmbedder(self.text_embedder, self.store)

        return self._get("image_embedder", make)

    @property
    def reranker(self) -> Reranker:
        def make() -> Reranker:
            from .rerank import EndpointReranker, FusionReranker

            rs = self.settings.reranker
            if rs.backend == "endpoint":
                return EndpointReranker(rs)
            return FusionReranker(self.text_embedder, rs.bm25_weight)

        return self._get("reranker", make)

    @property
    def nlp(self) -> OfflineNLP:
        from .nlp import SpacyNLP

        return self._get("nlp", SpacyNLP)

    # ------------------------------------------------------------------ embedding model bookkeeping
    def configured_embedding_models(self) -> set[str]:
        """The configured text and image embedding models (recorded vector models may add a
        chunk-vector recipe tag: compare ``vector_recipe.base_model`` of them)."""
        return {self.text_embedder.model, self.image_embedder.model}

    def built_text_model(self) -> str | None:
        """The text embedding model the workspace's vectors were built with (its metadata, else
        any vector's model when an older workspace did not record it), or None if none is stored."""
        recorded = self.store.get_meta(META_TEXT_MODEL)
        if recorded:
            return recorded
        return next(
            (base_model(m) for m in self.store.vector_models().values() if not m.startswith("text-fallback:")), None
        )

    def check_embedding_model(self, method: str | None = None) -> None:
        """Raise ``EmbeddingMismatchError`` if stored vectors (of ``method``'s namespaces, or all)
        were built with an embedding model other than the configured text/image models. (A
        chunk-vector recipe of its own is not a mismatch: see
        ``methods.retrieval.chunk_vectors.renew_stale_recipe``.)"""
        vector_models = {
            ns: m
            for ns, m in self.store.vector_models().items()
            if method is None or ns == method or ns.startswith(method + ".")
        }
        if not vector_models:
            return
        models = self.configured_embedding_models()
        recorded = self.store.get_meta(META_TEXT_MODEL)
        if recorded and recorded != self.text_embedder.model:
            raise self._mismatch(recorded, "workspace metadata", method or next(iter(vector_models)).split(".")[0])
        for ns, model in sorted(vector_models.items()):
            if base_model(model) not in models:
                raise self._mismatch(model, f"vectors {ns!r}", method or ns.split(".")[0])

    def _mismatch(self, old: str, where: str, method: str) -> EmbeddingMismatchError:
        return EmbeddingMismatchError(
            f"workspace {self.root}: {where} were built with embedding model {old!r}, but the configured "
            f"models are {self.text_embedder.model!r} (text) and {self.image_embedder.model!r} (image). "
            f"Rebuild the vectors with: docgraph build --method {method} --rebuild-vectors "
            f"(or set models.embedding / models.image_embedding back to the model that built them)"
        )

    def record_embedding_model(self) -> None:
        """Record the configured embedding models (and text dimension) in the workspace metadata;
        methods call this after writing vectors."""
        self.store.set_meta(META_TEXT_MODEL, self.text_embedder.model)
        self.store.set_meta(META_TEXT_DIM, str(self.text_embedder.dim))
        self.store.set_meta(META_IMAGE_MODEL, self.image_embedder.model)

    def __repr__(self) -> str:
        return f"ModelHub(root={str(self.root)!r})"
