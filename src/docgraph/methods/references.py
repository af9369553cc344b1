"""Explicit references in a question: "figure 3", "Table 2", "Chapter 14", "section 3.2",
"slide 14", "page 7", and their ordinal forms: "the first figure", "the second table".

Questions about documents point at their parts by label as often as by content ("In
figure 3, how many icons…", "How many colors are in slide 14?"), and a label is exactly
what text similarity cannot match: the caption "Figure 3: …" shares one word with the
question. ``query_references`` reads the labels of a question; ``LabelIndex`` knows which
chunks *define* a label (a line that starts with it, as a caption or a heading does) and
which merely mention it, so a reference resolves to the page a figure, table, chapter or
section is on, and a page or slide number to that page of each document.

``asked_modalities`` reads the kinds of element a question asks about without a number
("how many charts…", "the photo of the library", "which table lists…"): the chunk
modalities (``image``, ``table``) whose pages can hold the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..types import Chunk

Label = tuple[str, str]  # (kind, number): ("figure", "3"), ("section", "3.2"), ("page", "14")
_KINDS = {"fig": "figure", "figure": "figure", "figures": "figure", "table": "table", "tables": "table",
          "tab": "table", "chapter": "chapter", "chapters": "chapter", "section": "section", "sections": "section",
          "unit": "unit", "units": "unit", "slide": "page", "slides": "page", "page": "page", "pages": "page"}
_WORDS = r"(figures?|fig|tables?|tab|chapters?|sections?|units?|slides?|pages?)"
_NUMBER = r"(\d{1,4}(?:\.\d{1,3})*)"
_QUERY = re.compile(rf"\b{_WORDS}\.?\s*{_NUMBER}\b", re.IGNORECASE)
_ORDINALS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6",
             "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10"}
_ORDINAL_QUERY = re.compile(rf"\b({'|'.join(_ORDINALS)}|(\d{{1,3}})(?:st|nd|rd|th))\s+{_WORDS}\b", re.IGNORECASE)
_DEFINES = re.compile(rf"^\s*{_WORDS}\.?\s*{_NUMBER}\b", re.IGNORECASE | re.MULTILINE)


def _label(match: re.Match) -> Label:
    return _KINDS[match.group(1).lower()], match.group(2)


def query_references(query: str) -> list[Label]:
    """The labels a question refers to, in order of appearance, without repeats: "figure 3"
    and "the third figure" both give ("figure", "3") (an ordinal counts from the start of
    the document, as labels do)."""
    found = [(m.start(), _label(m)) for m in _QUERY.finditer(query)]
    for m in _ORDINAL_QUERY.finditer(query):
        number = m.group(2) or _ORDINALS[m.group(1).lower()]
        found.append((m.start(), (_KINDS[m.group(3).lower()], str(int(number)))))
    return list(dict.fromkeys(label for _, label in sorted(found, key=lambda item: item[0])))


@dataclass
class LabelIndex:
    """Chunk rows defining (caption and heading lines) and mentioning each label but pages."""

    defines: dict[Label, list[int]] = field(default_factory=dict)
    mentions: dict[Label, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, chunks: Sequence[Chunk]) -> "LabelIndex":
        index = cls()
        for row, chunk in enumerate(chunks):
            for m in _DEFINES.finditer(chunk.text):
                if _label(m)[0] != "page":
                    index.defines.setdefault(_label(m), []).append(row)
            for m in _QUERY.finditer(chunk.text):
                if _label(m)[0] != "page":
                    index.mentions.setdefault(_label(m), []).append(row)
        return index

    def rows(self, label: Label) -> list[int]:
        """Chunks defining ``label``, else those mentioning it."""
        return self.defines.get(label) or self.mentions.get(label, [])


_ELEMENT_WORDS = {
    "image": ("chart", "charts", "graph", "graphs", "plot", "plots", "figure", "figures", "fig", "diagram",
              "diagrams", "image", "images", "picture", "pictures", "photo", "photos", "photograph",
              "photographs", "map", "maps", "logo", "logos", "illustration", "illustrations", "icon", "icons",
              "infographic", "infographics", "screenshot", "screenshots", "drawing", "drawings"),
    "table": ("table", "tables"),
}
_ELEMENT_QUERY = {modality: re.compile(rf"\b({'|'.join(words)})\b", re.IGNORECASE)
                  for modality, words in _ELEMENT_WORDS.items()}


def asked_modalities(query: str) -> tuple[str, ...]:
    """Chunk modalities of the elements the question names ("charts" → image, "table" →
    table), in a fixed order; empty when it names none."""
    return tuple(modality for modality, pattern in _ELEMENT_QUERY.items() if pattern.search(query))
