"""Domain types shared by every part of docgraph.

Plain pydantic models: typed, validated, and serialisable with ``model_dump()`` /
``model_validate()``. Coordinates are PDF points with the origin at the page's top-left
corner (PyMuPDF's convention); page numbers are 1-based.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import Enum
from typing import Annotated, Any, Literal, overload

from pydantic import BaseModel, Field, PlainSerializer, PlainValidator


class BBox(BaseModel):
    """An axis-aligned box in page coordinates (points, origin top-left)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)

    def union(self, other: BBox) -> BBox:
        return BBox(
            x0=min(self.x0, other.x0), y0=min(self.y0, other.y0), x1=max(self.x1, other.x1), y1=max(self.y1, other.y1)
        )

    def clip(self, width: float, height: float) -> BBox:
        """This box clipped to a page of the given size."""
        return BBox(
            x0=min(max(self.x0, 0.0), width),
            y0=min(max(self.y0, 0.0), height),
            x1=min(max(self.x1, 0.0), width),
            y1=min(max(self.y1, 0.0), height),
        )

    def inside(self, width: float, height: float, tolerance: float = 0.5) -> bool:
        return (
            self.x0 >= -tolerance
            and self.y0 >= -tolerance
            and self.x1 <= width + tolerance
            and self.y1 <= height + tolerance
            and self.x1 >= self.x0
            and self.y1 >= self.y0
        )

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)


class ComponentKind(str, Enum):
    """Layout component kinds. The value is the id prefix (P1, TI1, T1, IM1 …)."""

    PARAGRAPH = "P"
    TITLE = "TI"
    TABLE = "T"
    IMAGE = "IM"
    CAPTION = "C"
    EQUATION = "EQ"
    LIST = "L"
    HEADER = "H"
    FOOTER = "F"

    @property
    def is_visual(self) -> bool:
        """Visual components get a crop image and visual entities."""
        return self in (ComponentKind.TABLE, ComponentKind.IMAGE, ComponentKind.EQUATION)

    @property
    def is_furniture(self) -> bool:
        """Page headers, footers and page numbers: kept but marked."""
        return self in (ComponentKind.HEADER, ComponentKind.FOOTER)


Modality = Literal["text", "table", "image"]


class Component(BaseModel):
    """One layout region of a page, e.g. paragraph P3 or table T1."""

    id: str
    kind: ComponentKind
    bbox: BBox
    order: int = Field(description="reading order on the page, 0-based")
    text: str = ""
    markdown: str | None = Field(default=None, description="tables as Markdown")
    section_path: list[str] = Field(
        default_factory=list, description="document title, then headings above this component"
    )
    heading_level: int | None = None
    crop_path: str | None = Field(default=None, description="workspace-relative crop image (visual kinds)")
    furniture: bool = False
    source: Literal["pdf", "ocr"] = "pdf"

    @property
    def modality(self) -> Modality:
        if self.kind is ComponentKind.TABLE:
            return "table"
        if self.kind in (ComponentKind.IMAGE,):
            return "image"
        return "text"

    @property
    def content(self) -> str:
        """The best text for this component: table Markdown when there is one."""
        return self.markdown or self.text


PageKey = tuple[str, int]  # (document id, page number): a page of a workspace


class Page(BaseModel):
    doc_id: str
    number: int
    width: float
    height: float
    image_path: str = Field(description="workspace-relative rendered page image")
    dpi: int
    source: Literal["pdf", "ocr"] = "pdf"
    components: list[Component] = Field(default_factory=list)

    def component(self, component_id: str) -> Component | None:
        for comp in self.components:
            if comp.id == component_id:
                return comp
        return None

    @property
    def text(self) -> str:
        return "\n".join(c.content for c in sorted(self.components, key=lambda c: c.order) if c.content)


class Pages(Sequence[Page]):
    """The pages of a Document, in page order, loaded from the store on first use.

    ``Document.pages`` is always a real answer: either the pages given when the Document was
    made, or, for a Document read from a workspace, every page stored for it, read once when
    first indexed, iterated or measured (so listing documents reads no pages). Reading needs
    the store still open.
    """

    __slots__ = ("_items", "_loader")

    def __init__(self, pages: Iterable[Page] = (), *, loader: Callable[[], Iterable[Page]] | None = None):
        self._items: list[Page] | None = None if loader is not None else list(pages)
        self._loader = loader

    @property
    def loaded(self) -> bool:
        """Whether the pages are in memory (without reading them)."""
        return self._items is not None

    def _list(self) -> list[Page]:
        if self._items is None:
            assert self._loader is not None
            self._items = list(self._loader())
            self._loader = None
        return self._items

    @overload
    def __getitem__(self, index: int) -> Page: ...
    @overload
    def __getitem__(self, index: slice) -> list[Page]: ...
    def __getitem__(self, index):  # type: ignore[no-untyped-def]  # Sequence's overloads: int -> Page, slice -> list
        return self._list()[index]

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self) -> Iterator[Page]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Pages, list, tuple)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it stands for

    def __repr__(self) -> str:
        return f"Pages({self._items!r})" if self.loaded else "Pages(<not read yet>)"


def _as_pages(value: Any) -> Pages:
    if isinstance(value, Pages):
        return value
    return Pages(Page.model_validate(v) for v in value)


PageSequence = Annotated[
    Pages, PlainValidator(_as_pages), PlainSerializer(list, return_type=list[Page], when_used="always")
]


class Document(BaseModel):
    id: str
    title: str
    path: str = Field(description="the file the user added")
    sha256: str
    kind: Literal["pdf", "image", "office"]
    page_count: int
    status: Literal["ingesting", "ready"] = "ready"
    added_at: str = ""
    pages: PageSequence = Field(
        default_factory=Pages, description="the pages, read from the workspace when first used (see Pages)"
    )


class Mention(BaseModel):
    """Where an entity or relation is grounded: components of one page."""

    doc_id: str
    page: int
    component_ids: list[str]


class Entity(BaseModel):
    id: str
    name: str
    type: str
    modality: Literal["text", "visual"] = "text"
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    mentions: list[Mention] = Field(default_factory=list)


class Relation(BaseModel):
    id: str
    source: str
    target: str
    label: str
    description: str = ""
    mentions: list[Mention] = Field(default_factory=list)
    cross_page: bool = False


class Chunk(BaseModel):
    """A retrievable unit of evidence made of components of one page."""

    id: str
    doc_id: str
    page: int
    component_ids: list[str]
    modality: Modality = "text"
    text: str
    section_path: list[str] = Field(default_factory=list)


class Citation(BaseModel):
    """A numbered pointer from an answer to highlighted regions of one page."""

    number: int
    doc_id: str
    page: int
    component_ids: list[str]
    bboxes: list[BBox]
    quote: str = ""
    document_title: str = ""


class ScoredPage(BaseModel):
    doc_id: str
    page: int
    score: float


class ScoredEntity(BaseModel):
    entity: Entity
    score: float


class ScoredRelation(BaseModel):
    relation: Relation
    score: float
    source_name: str = ""
    target_name: str = ""


class ScoredChunk(BaseModel):
    chunk: Chunk
    score: float


class Usage(BaseModel):
    """Model usage of one stage (or a sum of stages)."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    images: int = 0
    seconds: float = 0.0
    failures: int = 0  # calls that gave up (after retries and re-asks); the caller fell back or logged it
    retries: int = 0  # requests sent again after an endpoint fault (timeout, reset, 429, 5xx, unreadable body)
    repairs: int = 0  # replies repaired: broken JSON fixed locally, or re-asked (truncated, invalid, empty)
    fallbacks: int = 0  # answers given offline (extractive) because this stage's model call failed

    def add(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})


class RoutedDocument(BaseModel):
    """A document the question names, as routing in a library weighed it
    (``methods.retrieval.routing``): its pages' weight (documents not named get the floor),
    what in the question named it (a name, "period 2018"), and, when the question compares
    several companies, which one's documents it is among (``party``)."""

    doc_id: str
    title: str = ""
    weight: float
    named_by: list[str] = Field(default_factory=list)
    party: int | None = None  # which of the parties a comparing question names it belongs to (0, 1, …)


class Evidence(BaseModel):
    query: str
    method: str
    mode: str | None = None
    pages: list[ScoredPage] = Field(default_factory=list)
    entities: list[ScoredEntity] = Field(default_factory=list)
    relations: list[ScoredRelation] = Field(default_factory=list)
    chunks: list[ScoredChunk] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="seconds per stage")
    notes: list[str] = Field(default_factory=list)
    routed: list[RoutedDocument] = Field(default_factory=list, description="documents the question named, best first")


ClaimStatus = Literal["supported", "partly", "unsupported", "uncited"]


class ClaimCheck(BaseModel):
    """One sentence of an answer held against what it cites (``methods.answers.claims``): ``status``
    says how it fared, ``checked`` what it states (numbers, dates, names) and ``missing``
    what of that the cited evidence lacks. ``start``/``end`` locate it in ``Answer.text``."""

    sentence: str
    start: int
    end: int
    status: ClaimStatus
    citations: list[int] = Field(default_factory=list)
    checked: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)


class Answer(BaseModel):
    question: str
    text: str
    method: str
    mode: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    evidence: Evidence
    timings: dict[str, float] = Field(default_factory=dict)
    usage: dict[str, Usage] = Field(default_factory=dict)
    model_used: bool = False
    warnings: list[str] = Field(
        default_factory=list,
        description="what went wrong while answering, e.g. the "
        "answer model failed and the answer is the offline one over the same evidence",
    )
    claims: list[ClaimCheck] = Field(
        default_factory=list,
        description="the claim check: each sentence that "
        "states a number, date or name or cites evidence, held against what it cites",
    )
    verify: Literal["mark", "drop", "off"] | None = Field(
        default=None, description="how the claim check ran (answers.verify); None: not checked"
    )

    def claim_counts(self) -> dict[str, int]:
        """Checked sentences per status (every status present, zero when none)."""
        counts = {status: 0 for status in ("supported", "partly", "unsupported", "uncited")}
        for claim in self.claims:
            counts[claim.status] += 1
        return counts
