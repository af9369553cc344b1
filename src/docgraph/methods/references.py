"""Explicit references in a question: "figure 3", "Table 2", "slide 14", "page 7".

Questions about documents point at their parts by label as often as by content ("In
figure 3, how many icons…", "How many colors are in slide 14?"), and a label is exactly
what text similarity cannot match: the caption "Figure 3: …" shares one word with the
question. ``query_references`` reads the labels of a question; ``LabelIndex`` knows which
chunks *define* a label (a line that starts with it, as a caption does) and which merely
mention it, so a reference resolves to the page a figure or table is on, and a page or
slide number to that page of each document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..types import Chunk

Label = tuple[str, int]  # ("figure" | "table" | "page", number)
_KINDS = {"fig": "figure", "figure": "figure", "figures": "figure", "table": "table", "tables": "table",
          "tab": "table", "slide": "page", "slides": "page", "page": "page", "pages": "page"}
_QUERY = re.compile(r"\b(figures?|fig|tables?|tab|slides?|pages?)\.?\s*(\d{1,4})\b", re.IGNORECASE)
_DEFINES = re.compile(r"^\s*(figure|fig|table|tab)\.?\s*(\d{1,4})\b", re.IGNORECASE | re.MULTILINE)


def query_references(query: str) -> list[Label]:
    """The labels a question refers to, in order, without repeats."""
    out = [(_KINDS[m.group(1).lower()], int(m.group(2))) for m in _QUERY.finditer(query)]
    return list(dict.fromkeys(out))


@dataclass
class LabelIndex:
    """Chunk rows defining (caption lines) and mentioning each figure/table label."""

    defines: dict[Label, list[int]] = field(default_factory=dict)
    mentions: dict[Label, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, chunks: Sequence[Chunk]) -> "LabelIndex":
        index = cls()
        for row, chunk in enumerate(chunks):
            for m in _DEFINES.finditer(chunk.text):
                index.defines.setdefault((_KINDS[m.group(1).lower()], int(m.group(2))), []).append(row)
            for m in _QUERY.finditer(chunk.text):
                kind = _KINDS[m.group(1).lower()]
                if kind != "page":
                    index.mentions.setdefault((kind, int(m.group(2))), []).append(row)
        return index

    def rows(self, label: Label) -> list[int]:
        """Chunks defining ``label``, else those mentioning it."""
        return self.defines.get(label) or self.mentions.get(label, [])
