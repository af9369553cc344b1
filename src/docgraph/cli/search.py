"""``docgraph search``: the best pages for a query and, on each, the regions to read — no answer step.

Readable output lists each page (score, document, page number, image path) with its best
regions (id, kind, a line of text); ``--json`` prints ``results.SearchResult``.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence

from ..results import SearchResult


def register(subparsers: argparse._SubParsersAction) -> None:
    search = subparsers.add_parser("search", help="rank pages and their regions for a query (no answer step)")
    search.add_argument("query", help="what to look for (quote it)")
    search.add_argument("--method", "-m", default="kg4vd", help="method to retrieve with (default: kg4vd)")
    search.add_argument("--top-pages", type=int, default=5, metavar="N", help="pages to return (default: 5)")
    search.add_argument(
        "--doc",
        action="append",
        default=[],
        metavar="DOC",
        dest="documents",
        help="only pages of this document (id, prefix, file name or title); repeatable",
    )
    search.add_argument("--regions", type=int, default=3, metavar="N", help="regions per page (default: 3)")
    search.add_argument("--json", action="store_true", help="print the result as JSON (docs/integrations.md)")
    search.set_defaults(handler=cmd_search)


MAX_ROUTED_SHOWN = 5


def format_routed(routed: Sequence[tuple[str, float, Sequence[str], int | None]]) -> list[str]:
    """The documents a question names — ``(title, weight, what named it, party)``, best first —
    as lines, at most ``MAX_ROUTED_SHOWN``; none when routing abstained. A question comparing
    several companies says so, and each document its party's number."""
    if not routed:
        return []
    parties = {party for *_, party in routed if party is not None}
    header = "Documents the question names (their pages weigh more)"
    if len(parties) > 1:
        header += f"; it compares {len(parties)}, whose pages take turns"
    lines = [header + ":"]
    for title, weight, named_by, party in routed[:MAX_ROUTED_SHOWN]:
        side = f"[{party + 1}] " if party is not None and len(parties) > 1 else ""
        lines.append(f"  {weight:.2f}  {side}{title} \u2014 {', '.join(named_by)}")
    if len(routed) > MAX_ROUTED_SHOWN:
        lines.append(f"  \u2026 and {len(routed) - MAX_ROUTED_SHOWN} more")
    return lines


def format_search(result: SearchResult) -> str:
    """The pages as a person scans them in a terminal, after the documents the query names."""
    if not result.pages:
        return f"no pages found for {result.query!r} ({result.method})"
    lines = format_routed([(r.document_title, r.weight, r.named_by, r.party) for r in result.routed])
    if lines:
        lines.append("")
    for rank, page in enumerate(result.pages, 1):
        lines.append(f"{rank}. {page.document_title} p.{page.page}  (score {page.score:.3f}, {page.document_id})")
        for region in page.regions:
            snippet = textwrap.shorten(" ".join(region.text.split()), width=100, placeholder=" …")
            lines.append(f"   {region.component_id:<4} {region.kind:<9} {snippet}")
        lines.append(f"   image: {page.image}")
    return "\n".join(lines)


def cmd_search(args: argparse.Namespace, ws) -> int:
    result = ws.search(
        args.query, method=args.method, top_pages=args.top_pages, documents=args.documents or None, regions=args.regions
    )
    print(result.model_dump_json(indent=2) if args.json else format_search(result))
    return 0
