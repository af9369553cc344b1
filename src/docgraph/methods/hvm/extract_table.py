"""Extractor for table chunks: one row at a time, given the table's description and headers.

Model strategy (paper Appendix D.1, Fig. 14): for every row, ``extract_table_row.md``
shows the description and column headers as context and asks for the row's categorical
entities only (no bare numbers, no headers); then one relation call per table
(``extract_relations.md``) over the table and all its row entities. Rows of all tables
run concurrently.

Offline strategy: the row's first non-numeric cell is the row entity (its concept is the
column header, e.g. "country"); every other non-empty cell gives a fact
``(row entity, <column header>, cell)``; short non-numeric cells are also entities whose
concept is their column header, numeric cells stay values. A table that does not parse
as Markdown rows is treated as text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...models.base import ChatModel, user
from ...prompts import material, render_prompt
from ..building.markdown_tables import parse_table
from .extract_base import (
    STAGE_EXTRACT,
    ChunkFailed,
    ChunkInput,
    EntitiesReply,
    OfflineStrategy,
    entities_of,
    model_relations,
    run_parallel,
    with_fallback,
)
from .extraction import ExtractedEntity, ExtractedFact, Extraction, clean_name, concept_name, is_numeric, relation_name

_UNITS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
MAX_CELL_WORDS = 8
MAX_HEADER_WORDS = 6


def header_label(header: str, index: int) -> str:
    """A column header without units in brackets (``"Revenue (€m)"`` → ``"Revenue"``)."""
    text = " ".join(_UNITS.sub(" ", header).split())
    return text or f"column {index + 1}"


def column_concept(label: str, fallback: str) -> str:
    """The concept a column header names; a long header (a sentence, a URL) names none: ``fallback``."""
    words = label.split()
    if not words or len(words) > MAX_HEADER_WORDS or "://" in label or "www." in label.lower():
        return fallback
    return concept_name(label)


def row_text(headers: Sequence[str], row: Sequence[str]) -> str:
    """A row as ``header: cell`` lines."""
    return "\n".join(
        f"{headers[i] if i < len(headers) and headers[i] else f'column {i + 1}'}: {cell}"
        for i, cell in enumerate(row)
        if cell
    )


class OfflineTableStrategy:
    """Row entities and row facts from the parsed table (see module docstring)."""

    name = "offline"

    def __init__(self, text: OfflineStrategy):
        self.text = text

    def _table(self, headers: list[str], rows: list[list[str]]) -> Extraction:
        labels = [header_label(h, i) for i, h in enumerate(headers)]
        header_keys = {h.lower() for h in headers if h}
        entities: dict[str, ExtractedEntity] = {}
        facts: list[ExtractedFact] = []
        for row in rows:
            anchor = next((i for i, c in enumerate(row) if c and not is_numeric(c)), None)
            if anchor is None:
                continue
            name = clean_name(row[anchor])
            if not name or name.lower() in header_keys:
                continue
            row_concept = column_concept(labels[anchor], "item") if anchor < len(labels) else "item"
            summary = "; ".join(
                f"{labels[i] if i < len(labels) else ''}: {c}" for i, c in enumerate(row) if c and i != anchor
            )
            entities.setdefault(
                name.lower(),
                ExtractedEntity(name=name, concept=row_concept, description=f"table row — {summary}"[:240]),
            )
            for i, cell in enumerate(row):
                value = clean_name(cell)
                if i == anchor or not value or i >= len(labels):
                    continue
                concept = column_concept(labels[i], "value")
                if not is_numeric(value):
                    if len(value.split()) > MAX_CELL_WORDS or value.lower() in header_keys:
                        continue
                    entities.setdefault(value.lower(), ExtractedEntity(name=value, concept=concept))
                facts.append(
                    ExtractedFact(
                        head=name,
                        relation=relation_name(labels[i]),
                        tail=value,
                        head_concept=row_concept,
                        tail_concept=concept,
                    )
                )
        return Extraction(entities=list(entities.values()), facts=facts, strategy=self.name)

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction]:
        parsed = [parse_table(item.chunk.text) for item in items]
        as_text = [i for i, (headers, rows) in enumerate(parsed) if not headers or not rows]
        text_results = dict(zip(as_text, self.text.extract([items[i] for i in as_text])))
        out = []
        for i, (headers, rows) in enumerate(parsed):
            if i in text_results:
                result = text_results[i]
                result.notes.append("table without Markdown rows: extracted as text")
                out.append(result)
            else:
                out.append(self._table(headers, rows))
        return out


class ModelTableStrategy:
    """Row-by-row entity extraction with the build model, then one relation call per table."""

    def __init__(self, chat: ChatModel, offline: OfflineStrategy | None, workers: int = 4):
        self.chat, self.offline, self.workers = chat, offline, workers
        self.name = f"model:{chat.model}"

    def _row(self, job: tuple[ChunkInput, list[str], list[str]]) -> Extraction:
        item, headers, row = job
        prompt = render_prompt(
            __package__,
            "extract_table_row.md",
            context=material(item.context or "(none)"),
            description=material(item.description or item.context or "(none)"),
            headers=material(" | ".join(headers) or "(none)"),
            row=material(row_text(headers, row)),
        )
        reply = self.chat.complete([user(prompt)], stage=STAGE_EXTRACT, schema=EntitiesReply).parsed
        assert isinstance(reply, EntitiesReply)
        header_keys = {h.lower() for h in headers}
        return Extraction(entities=[e for e in entities_of(reply.entities) if e.name.lower() not in header_keys])

    def _relations(self, job: tuple[ChunkInput, list[ExtractedEntity]]) -> Extraction:
        item, entities = job
        content = (f"Table description: {item.description}\n\n" if item.description else "") + item.chunk.text
        return Extraction(
            entities=entities, facts=model_relations(self.chat, item.context, content, entities), strategy=self.name
        )

    def _table(self, item: ChunkInput) -> Extraction:
        headers, rows = parse_table(item.chunk.text)
        jobs = [(item, headers, row) for row in rows] or [(item, [], [item.chunk.text])]
        row_results = run_parallel(jobs, self._row, self.workers)
        merged: dict[str, ExtractedEntity] = {}
        for result in row_results:
            for entity in result.entities:
                merged.setdefault(entity.name.lower(), entity)
        return self._relations((item, list(merged.values())))

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction | ChunkFailed]:
        return run_parallel(items, with_fallback(self._table, self.offline), max(1, self.workers // 2))
