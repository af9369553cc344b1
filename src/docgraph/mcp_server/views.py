"""The MCP tools' results beyond search and ask (``results``): documents, pages, regions, writes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..results import RegionResult


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentEntry(_Strict):
    document_id: str
    title: str = Field(description="the document's label title (what citations show)")
    organisation: str
    period: str
    kind: str
    ticker: str
    pages: int
    file: str = Field(description="the file name the document was added from")


class DocumentList(_Strict):
    documents: list[DocumentEntry]
    methods_built: list[str] = Field(description="methods whose index is built and can search or ask")


class PageView(_Strict):
    document_id: str
    document_title: str
    page: int
    width: float = Field(description="page width in points")
    height: float = Field(description="page height in points")
    image: str = Field(description="absolute path of the rendered page image")
    image_uri: str = Field(description="the page image as an MCP resource")
    marks_uri: str = Field(description="the Set-of-Marks image (regions boxed and tagged) as an MCP resource")
    regions: list[RegionResult] = Field(description="every region in reading order (running heads included)")


class RegionView(_Strict):
    document_id: str
    page: int
    region: RegionResult
    section: list[str] = Field(description="the document title, then the headings above the region")
    crop_image: str | None = Field(description="absolute path of the region's crop (tables, figures), else null")


class AddSummary(_Strict):
    added: list[str] = Field(description="ids of the documents added (or already there)")
    pages: int
    failed: list[str] = Field(description="files that could not be added, with why")


class BuildSummary(_Strict):
    method: str
    pages_built: int
    pages_skipped: int
    stats: dict[str, float | int | str]
