"""Markdown tables as cells, and as rows an offline answer can quote.

The layout gives every table as Markdown (``| a | b |`` lines). ``parse_table`` reads its
header and rows; ``rows_as_sentences`` rewrites it as one line per row, so the extractive
answer (``methods.answers.extractive``) quotes the row that matches ("Total current liabilities —
2021: 9,674; 2020: 8,284.") instead of the whole table. Shared by HVM's table extractor and
answer and KG4VD's offline answer.
"""

from __future__ import annotations

import re

_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")
_TAGS = re.compile(r"<br\s*/?>|<[^>]+>", re.IGNORECASE)


def split_row(line: str) -> list[str]:
    """Cells of one Markdown table line (escaped pipes kept inside cells)."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return [" ".join(_TAGS.sub(" ", c).replace("\\|", "|").replace("**", "").replace("__", "").split()) for c in cells]


def parse_table(markdown: str) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of a Markdown table; ([], []) when the text is not one."""
    lines = [ln for ln in markdown.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return [], []
    headers = split_row(lines[0])
    rows = [split_row(ln) for ln in lines[1:] if not _SEPARATOR.match(ln.strip())]
    rows = [r + [""] * (len(headers) - len(r)) for r in rows if any(r)]
    return headers, rows


def rows_as_sentences(markdown: str) -> str:
    """A Markdown table as one line per row (``first cell — header: cell; …``), blank-line separated,
    so quoting picks a row rather than the whole table; other text is returned unchanged."""
    headers, rows = parse_table(markdown)
    if not headers or not rows:
        return markdown
    lines = []
    for row in rows:
        cells = [(headers[i] if i < len(headers) else "", c) for i, c in enumerate(row) if c]
        if cells:
            first = cells[0][1]
            rest = "; ".join(f"{h}: {c}" if h else c for h, c in cells[1:])
            lines.append(f"{first} — {rest}." if rest else f"{first}.")
    return "\n\n".join(lines)
