"""A search result flattened into what a framework retriever returns: one hit per page region."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..results import RegionResult, SearchResult


@dataclass(frozen=True)
class RegionHit:
    id: str
    text: str
    score: float
    metadata: dict[str, Any]


def region_hits(result: SearchResult) -> list[RegionHit]:
    """Regions in page-rank order, then region order within a page. ``score`` is the page's
    score from the method; ``metadata["region_score"]`` ranks regions within their page. A
    page without regions (a picture with no text) is one hit with empty text, so no page the
    method ranked is lost."""
    hits = []
    for rank, page in enumerate(result.pages, 1):
        common = {
            "document_id": page.document_id,
            "document_title": page.document_title,
            "page": page.page,
            "page_rank": rank,
            "image": page.image,
            "method": result.method,
        }
        regions: list[RegionResult | None] = list(page.regions) or [None]
        for region in regions:
            meta = dict(common)
            if region is not None:
                meta.update(
                    component_id=region.component_id,
                    kind=region.kind,
                    bbox=list(region.bbox.as_tuple()),
                    region_score=region.score,
                )
            suffix = f":{region.component_id}" if region is not None else ""
            hits.append(
                RegionHit(
                    id=f"{page.document_id}:p{page.page}{suffix}",
                    text=region.text if region is not None else "",
                    score=page.score,
                    metadata=meta,
                )
            )
    return hits
