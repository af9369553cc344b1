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
_DIGIT = re.compile(r"\d")
MAX_HEADER_LINES = 3  # a column header set over more lines than this is read as data
TABLE_READING = 2  # bumped whenever parse_table reads a table differently; indexes built on it record it
_PERIOD = re.compile(r"^(?:FY\s?|Q[1-4]\s|[1-4]Q\s?)?(?:19|20)\d\d$", re.IGNORECASE)


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
    """(headers, rows) of a Markdown table; ([], []) when the text is not one. A heading over
    several lines — "For the Years Ended December 31," spread over the columns above a row
    "In millions | 2022 | 2021 | 2020" — is headed by its last line, the periods (``_periods_row``):
    that row is the columns' header, not a row of the table. A header whose words go on in
    the first row ("Carrying" over "Value", above rows of numbers: ``_continues_header``)
    takes that row's words, column by column."""
    lines = [ln for ln in markdown.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return [], []
    headers = split_row(lines[0])
    rows = [split_row(ln) for ln in lines[1:] if not _SEPARATOR.match(ln.strip())]
    rows = [r + [""] * (len(headers) - len(r)) for r in rows if any(r)]
    while rows and _periods_row(rows[0]) and not _periods_row(headers):
        headers, rows = rows[0], rows[1:]
    for _ in range(MAX_HEADER_LINES - 1):
        if not (rows and _continues_header(rows[0], rows[1:])):
            break
        headers = [" ".join(f"{h} {c}".split()) for h, c in zip(headers, rows[0])]
        rows = rows[1:]
    return headers, rows


def _continues_header(row: list[str], rest: list[list[str]]) -> bool:
    """Whether ``row`` is the next line of the columns' header rather than data: two cells or
    more after the first, none with a digit ("(Millions) | Value | Value"; "Segment |
    Americas | EMEA"), over rows at least half of which hold numbers there."""
    values = [c for c in row[1:] if c]
    if len(values) < 2 or any(_DIGIT.search(c) for c in values) or not rest:
        return False
    numeric = sum(1 for r in rest if any(_DIGIT.search(c) for c in r[1:]))
    return numeric >= 0.5 * len(rest)


def _periods_row(row: list[str]) -> bool:
    """Whether every cell after the first names a period ("2022", "FY2021", "Q2 2023") and
    there are at least two: a table's column heading, not its data."""
    values = row[1:]
    return len(values) >= 2 and all(_PERIOD.match(v) for v in values)


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
