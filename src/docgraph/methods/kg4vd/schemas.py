"""Entity-type schemas for KG4VD page graphs (the KG4VD paper, Table 7).

Each preset is a corpus-specific list of *text* entity types; every preset also carries
the six shared *visual* types that KG4VD uses for entities grounded to figures, charts,
tables and layout regions. ``general`` is docgraph's default for corpora the paper did not
profile: the general types shared by the four presets plus a few broad ones.

Contract: type names are lowercase ``snake_case``; ``EntitySchema.normalize_type`` maps a
free-form type ("Work of Art") to that form; a type is valid for a modality when it is
one of the schema's types for it (``visual`` entities use the visual types, ``text``
entities the text types).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

VISUAL_TYPES: tuple[str, ...] = (
    "visual_object",
    "chart_element",
    "diagram_component",
    "table_region",
    "layout_region",
    "figure_panel",
)

TEXT_TYPES: dict[str, tuple[str, ...]] = {
    # Table 7, "Picture book" (12): characters and story, then general.
    "picture_book": (
        "character",
        "creature",
        "setting",
        "action_event",
        "emotion",
        "narrative_arc",
        "dialogue_speaker",
        "person",
        "location",
        "date",
        "object",
        "scientific_concept",
    ),
    # Table 7, "World History" (13): general, then content and structure.
    "world_history": (
        "person",
        "organization",
        "group",
        "location",
        "event",
        "date",
        "work_of_art",
        "product",
        "scientific_concept",
        "chapter",
        "section",
        "unit",
        "assessment_type",
    ),
    # Table 7, "Env. Reports" (14): general, then sustainability and business.
    "env_reports": (
        "person",
        "organization",
        "location",
        "event",
        "date",
        "kpi",
        "target",
        "commitment",
        "material_topic",
        "stakeholder_group",
        "regulatory_framework",
        "business_segment",
        "geographic_region",
        "fiscal_period",
    ),
    # Table 7, "DLCV Slides" (24): general, then lecture and ML-specific.
    "dlcv_slides": (
        "person",
        "organization",
        "location",
        "event",
        "date",
        "work_of_art",
        "product",
        "scientific_concept",
        "concept",
        "term",
        "slide_title",
        "agenda_item",
        "code_snippet",
        "citation",
        "course_code",
        "lecture_topic",
        "dataset",
        "model_architecture",
        "task_type",
        "metric",
        "benchmark",
        "framework",
        "algorithm",
        "paper_citation",
    ),
    # docgraph's default: the general types of Table 7 plus broad ones for any corpus.
    "general": (
        "person",
        "organization",
        "group",
        "location",
        "event",
        "date",
        "work_of_art",
        "product",
        "scientific_concept",
        "concept",
        "law",
        "metric",
        "section",
    ),
}

PRESETS: tuple[str, ...] = tuple(TEXT_TYPES)

# Document-structure types: the same name in two documents is two different headings.
STRUCTURAL_TYPES = frozenset({"chapter", "section", "unit", "slide_title", "agenda_item", "lecture_topic"})
# The type the offline extractor gives a noun phrase that NER did not type, per preset.
_CONCEPT_TYPE = {
    "picture_book": "object",
    "world_history": "scientific_concept",
    "env_reports": "material_topic",
    "dlcv_slides": "concept",
    "general": "concept",
}
# The type of a heading (title component), when the preset has one.
_HEADING_TYPE = {"world_history": "section", "dlcv_slides": "slide_title", "general": "section"}


@dataclass(frozen=True)
class EntitySchema:
    """The entity types allowed in page graphs: ``text_types`` and ``visual_types``."""

    name: str
    text_types: tuple[str, ...]
    visual_types: tuple[str, ...] = VISUAL_TYPES

    @property
    def all_types(self) -> tuple[str, ...]:
        return self.text_types + self.visual_types

    @property
    def structural_types(self) -> tuple[str, ...]:
        """The schema's document-structure types (headings, chapters, slide titles)."""
        return tuple(t for t in self.text_types if t in STRUCTURAL_TYPES)

    @property
    def concept_type(self) -> str:
        """The text type for an untyped noun phrase (a concept, topic or object)."""
        return _CONCEPT_TYPE.get(self.name, self.text_types[-1])

    @property
    def heading_type(self) -> str | None:
        """The text type for a heading, or None when the schema has no structural type."""
        return _HEADING_TYPE.get(self.name)

    @staticmethod
    def normalize_type(value: str) -> str:
        """``"Work of Art"`` → ``"work_of_art"``: lowercase, runs of non-alphanumerics → ``_``."""
        return re.sub(r"[^0-9a-z]+", "_", value.strip().lower()).strip("_")

    def allows(self, type_name: str, modality: Literal["text", "visual"]) -> bool:
        """Whether ``type_name`` (already normalised) is a valid type for ``modality``."""
        return type_name in (self.visual_types if modality == "visual" else self.text_types)

    def describe(self) -> str:
        """Two lines for prompts: the text types and the visual types."""
        return f"text entity types: {', '.join(self.text_types)}\nvisual entity types: {', '.join(self.visual_types)}"


def get_schema(preset: str) -> EntitySchema:
    """The schema for a preset name (``KG4VDSettings.schema_preset``); ValueError if unknown."""
    try:
        return EntitySchema(name=preset, text_types=TEXT_TYPES[preset])
    except KeyError:
        raise ValueError(f"unknown KG4VD schema preset {preset!r}; use one of {', '.join(PRESETS)}") from None
