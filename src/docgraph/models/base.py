"""Model protocols: what methods may ask of a chat model, embedders, a reranker and offline NLP.

Methods code against these and receive implementations from ``ModelHub``
(``docgraph.models.hub``). ``ModelHub.chat(role)`` returns ``None`` when no endpoint is
configured for that role: the method then runs its offline strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np
from pydantic import BaseModel

from ..types import Usage

Role = Literal["build", "answer", "judge"]
T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class ImagePart:
    """An image sent to a vision model: a file path or raw PNG/JPEG bytes."""

    path: Path | None = None
    data: bytes | None = None
    mime: str = "image/png"

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None
        return Path(self.path).read_bytes()


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    text: str
    images: tuple[ImagePart, ...] = ()


def system(text: str) -> Message:
    return Message("system", text)


def user(text: str, images: Sequence[ImagePart | Path | str] = ()) -> Message:
    parts = tuple(i if isinstance(i, ImagePart) else ImagePart(path=Path(i)) for i in images)
    return Message("user", text, parts)


@dataclass
class ChatResult:
    text: str
    parsed: BaseModel | None = None
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    model: str = ""
    finish_reason: str = ""  # "stop", "length" (cut at max tokens) … as the endpoint reported it


@runtime_checkable
class ChatModel(Protocol):
    @property
    def model(self) -> str:
        """The model's name (read-only here: wrappers pass their inner model's through)."""

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        """One completion. With ``schema`` the reply is parsed and validated into ``.parsed``
        (repaired or re-asked once; ``ModelOutputError`` if still invalid). ``stage`` names
        the pipeline stage for usage accounting (e.g. ``"kg4vd.extract"``)."""


@runtime_checkable
class TextEmbedder(Protocol):
    @property
    def model(self) -> str:
        """The model's name (read-only here: wrappers pass their inner model's through)."""

    @property
    def dim(self) -> int:
        """Width of the vectors this embedder returns."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per query."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per passage."""


@dataclass(frozen=True)
class ImageItem:
    """A page image or crop, with the text that describes it (OCR text, caption, nearby text)."""

    image_path: Path | None
    text: str


@runtime_checkable
class ImageEmbedder(Protocol):
    @property
    def model(self) -> str:
        """The model's name (read-only here: wrappers pass their inner model's through)."""

    @property
    def dim(self) -> int:
        """Width of the vectors this embedder returns."""

    is_text_fallback: bool

    def embed_items(self, items: Sequence[ImageItem]) -> np.ndarray:
        """L2-normalised rows for images (with their text) in the query space."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class Reranker(Protocol):
    @property
    def model(self) -> str:
        """The model's name (read-only here: wrappers pass their inner model's through)."""

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """A relevance score per document (higher is better), aligned with the input."""


@dataclass(frozen=True)
class NamedEntity:
    text: str
    label: str  # spaCy label, e.g. PERSON, ORG, GPE
    start: int
    end: int


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str  # lowercase_underscore
    object: str
    sentence: str = ""


@dataclass
class TextAnalysis:
    entities: list[NamedEntity]
    noun_phrases: list[str]
    triples: list[Triple]
    sentences: list[str]
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)  # (start, end) char offsets


@runtime_checkable
class OfflineNLP(Protocol):
    def analyze(self, texts: Sequence[str]) -> list[TextAnalysis]:
        """Deterministic NER, noun phrases, SVO triples and sentences for each text (batched)."""

    def map_label(self, label: str, schema: Sequence[str]) -> str:
        """An entity type of ``schema`` for a NER label (falls back to a general type in it)."""
