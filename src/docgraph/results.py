"""What docgraph hands to other programs: search hits, answers and pages as plain JSON.

One set of models serves ``docgraph search --json``, ``docgraph ask --json``, batch answers,
the MCP server and the LangChain / LlamaIndex retrievers, so each of them says the same thing
the same way: the document, the page, and the regions (component id, kind, box, text) that
a result rests on. Boxes are in page points, origin top-left; ``image`` is the absolute path
of the rendered page image. ``docs/integrations.md`` shows the JSON Schemas.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .page_regions import best_regions, evidence_weights
from .types import Answer, BBox, ClaimStatus, Evidence, Page

DEFAULT_REGIONS = 3
MAX_REGION_CHARS = 2000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RegionResult(_Strict):
    """One region of a page: a paragraph, title, table, figure … as ingest found it."""

    component_id: str = Field(description="the region's id on its page, e.g. P3 or T1")
    kind: str = Field(description="paragraph, title, table, image, caption, equation, list, …")
    bbox: BBox = Field(description="the region's box in page points, origin top-left")
    text: str = Field(description="the region's text (a table as Markdown), cut at 2,000 characters")
    score: float | None = Field(default=None, description="how well it matches the query, 0-1 (search only)")


class PageResult(_Strict):
    """A retrieved page with the regions that best match the query."""

    document_id: str
    document_title: str
    page: int = Field(description="page number, 1-based")
    score: float = Field(description="the method's page score (higher is better; scales differ by method)")
    image: str = Field(description="absolute path of the rendered page image")
    regions: list[RegionResult]


class RoutedResult(_Strict):
    """A document the question names: in a library, its pages weigh ``weight`` and the pages
    of documents not named ``retrieval.route_floor`` (KG4VD and HVM; docs/methods.md)."""

    document_id: str
    document_title: str
    weight: float = Field(description="the routing weight of its pages, 0-1")
    named_by: list[str] = Field(description='what in the question named it: a name, "period 2018"')
    party: int | None = Field(
        None,
        description="when the question compares several companies, which one's documents this is among "
        "(0, 1, … in the question's order; each takes turns in the first pages); null otherwise",
    )


def routed_results(evidence: Evidence) -> list[RoutedResult]:
    return [
        RoutedResult(
            document_id=r.doc_id,
            document_title=r.title or r.doc_id,
            weight=r.weight,
            named_by=r.named_by,
            party=r.party,
        )
        for r in evidence.routed
    ]


class SearchResult(_Strict):
    """``docgraph search``: ranked pages, no answer step."""

    query: str
    method: str
    pages: list[PageResult]
    routed: list[RoutedResult] = Field(default_factory=list, description="documents the question named, best first")
    timings: dict[str, float] = Field(description="seconds per retrieval stage")


class CitationResult(_Strict):
    """A numbered pointer from an answer to regions of one page."""

    number: int = Field(description="the [n] marker in the answer text")
    document_id: str
    document_title: str
    page: int
    component_ids: list[str]
    bboxes: list[BBox]
    quote: str


class EvidencePage(_Strict):
    document_id: str
    page: int
    score: float


class ClaimResult(_Strict):
    """One sentence of the answer held against what it cites (``methods.answers.claims``)."""

    sentence: str
    status: ClaimStatus = Field(description="supported, partly, unsupported or uncited")
    citations: list[int] = Field(description="the [n] markers the sentence carries")
    missing: list[str] = Field(description="what the sentence states (numbers, dates, names) that its evidence lacks")


class AskResult(_Strict):
    """``docgraph ask --json``: the answer, what it cites, the pages it read, and timings."""

    question: str
    answer: str
    method: str
    mode: str | None = Field(description="the retrieval mode (KG4VD), else null")
    model_used: bool = Field(description="false: no model answered (offline extractive answer)")
    citations: list[CitationResult]
    evidence_pages: list[EvidencePage]
    routed: list[RoutedResult] = Field(default_factory=list, description="documents the question named, best first")
    claims: list[ClaimResult] = Field(description="the claim check per sentence (empty when it did not run)")
    verify: str | None = Field(description="how the claim check ran: mark, drop or off; null: not checked")
    warnings: list[str]
    timings: dict[str, float] = Field(description="seconds per stage")


class BatchLine(_Strict):
    """One line of ``docgraph ask --questions FILE --out OUT``: the answer, or why there is none."""

    id: str = Field(description="the question's id from the file (its line number when it has none)")
    question: str
    result: AskResult | None = None
    error: str | None = Field(default=None, description="the error message when the question failed")


def ask_result(answer: Answer) -> AskResult:
    """The ``Answer`` as the compact, stable JSON other programs read."""
    return AskResult(
        question=answer.question,
        answer=answer.text,
        method=answer.method,
        mode=answer.mode,
        model_used=answer.model_used,
        citations=[
            CitationResult(
                number=c.number,
                document_id=c.doc_id,
                document_title=c.document_title or c.doc_id,
                page=c.page,
                component_ids=list(c.component_ids),
                bboxes=list(c.bboxes),
                quote=c.quote,
            )
            for c in answer.citations
        ],
        evidence_pages=[EvidencePage(document_id=p.doc_id, page=p.page, score=p.score) for p in answer.evidence.pages],
        routed=routed_results(answer.evidence),
        claims=[
            ClaimResult(sentence=c.sentence, status=c.status, citations=list(c.citations), missing=list(c.missing))
            for c in answer.claims
        ],
        verify=answer.verify,
        warnings=list(answer.warnings),
        timings=dict(answer.timings),
    )


def region_result(component, score: float | None = None) -> RegionResult:
    return RegionResult(
        component_id=component.id,
        kind=component.kind.name.lower(),
        bbox=component.bbox,
        text=component.content[:MAX_REGION_CHARS],
        score=score,
    )


def search_result(
    evidence: Evidence,
    query: str,
    *,
    page_of: Callable[[str, int], Page | None],
    title_of: Callable[[str], str],
    root: Path,
    top_pages: int,
    documents: set[str] | None = None,
    regions: int = DEFAULT_REGIONS,
) -> SearchResult:
    """The first ``top_pages`` pages of ``evidence`` (only those of ``documents`` when given),
    each with its ``regions`` best regions (``page_regions``). ``page_of`` / ``title_of`` read
    the workspace; pages no longer stored are skipped."""
    weights = evidence_weights(evidence)
    pages: list[PageResult] = []
    for scored in evidence.pages:
        if len(pages) >= top_pages:
            break
        if documents is not None and scored.doc_id not in documents:
            continue
        page = page_of(scored.doc_id, scored.page)
        if page is None:
            continue
        best = best_regions(page, query, weights.get((scored.doc_id, scored.page), {}), regions)
        pages.append(
            PageResult(
                document_id=scored.doc_id,
                document_title=title_of(scored.doc_id),
                page=page.number,
                score=scored.score,
                image=str((root / page.image_path).resolve()),
                regions=[region_result(c, round(s, 4)) for c, s in best],
            )
        )
    routed = routed_results(evidence)
    return SearchResult(query=query, method=evidence.method, pages=pages, routed=routed, timings=dict(evidence.timings))


SCHEMAS: dict[str, type[BaseModel]] = {"ask": AskResult, "search": SearchResult, "batch-line": BatchLine}


def write_schemas(folder: Path) -> list[Path]:
    """Write each model's JSON Schema as ``<name>.schema.json`` (docs/schemas is made this way:
    ``python -m docgraph.results docs/schemas``)."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMAS.items():
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(model.model_json_schema(), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover
    import sys

    for written_path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(written_path)
