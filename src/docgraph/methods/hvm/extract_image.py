"""Extractor for image chunks: the picture itself is an entity, plus what it shows.

Model strategy (paper Appendix D.1, Fig. 15): the vision model sees the crop and its
caption/nearby text (``extract_image.md``) and returns the picture as an entity (name,
type, description) and the objects, labels and titles it shows; a relation call
(``extract_relations.md``, with the image attached) adds facts. Without vision support
or without a crop file, the same prompts run on the caption alone, and the extraction
says so in a note.

Offline strategy: the picture entity is named after its caption (or "<kind> <id> on page
<n>"), its concept read from the caption's first word (figure, chart, map, photo …, else
image); NER entities and noun phrases of the caption/nearby text are entities, and each
named entity is linked to the picture by ``related_to``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from ...models.base import ChatModel, ImagePart, user
from ...prompts import material, render_prompt
from .extract_base import (
    STAGE_EXTRACT,
    ChunkFailed,
    ChunkInput,
    EntityItem,
    OfflineStrategy,
    entities_of,
    model_relations,
    run_parallel,
    with_fallback,
)
from .extraction import ExtractedEntity, ExtractedFact, Extraction, clean_name

NAME_CHARS = 80
_KIND_WORDS = {
    "figure": "figure",
    "fig": "figure",
    "chart": "chart",
    "graph": "chart",
    "diagram": "diagram",
    "map": "map",
    "photo": "photo",
    "photograph": "photo",
    "illustration": "illustration",
    "plate": "figure",
    "table": "table image",
    "image": "image",
    "picture": "image",
}


class ImageReply(BaseModel):
    image: EntityItem
    entities: list[EntityItem] = Field(default_factory=list)


def picture_concept(caption: str) -> str:
    """figure / chart / map / photo … from the caption's first words, else ``image``."""
    for word in caption.lower().replace(".", " ").replace(":", " ").split()[:3]:
        if word in _KIND_WORDS:
            return _KIND_WORDS[word]
    return "image"


def picture_name(item: ChunkInput) -> str:
    """The picture's name: its caption's first sentence, cut to a readable length."""
    caption = clean_name((item.description or "").split(". ")[0])
    if caption:
        return caption if len(caption) <= NAME_CHARS else caption[:NAME_CHARS].rsplit(" ", 1)[0] + " …"
    comp = item.chunk.component_ids[0] if item.chunk.component_ids else "image"
    return f"image {comp} on page {item.chunk.page}"


class OfflineImageStrategy:
    """The picture entity from its caption, plus the caption's entities (see module docstring)."""

    name = "offline"

    def __init__(self, text: OfflineStrategy):
        self.text = text

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction]:
        described = [i for i, item in enumerate(items) if item.description.strip()]
        texts = dict(
            zip(
                described,
                self.text.extract(
                    [
                        ChunkInput(
                            chunk=items[i].chunk.model_copy(update={"text": items[i].description}),
                            context=items[i].context,
                        )
                        for i in described
                    ]
                ),
            )
        )
        out = []
        for i, item in enumerate(items):
            name = picture_name(item)
            picture = ExtractedEntity(
                name=name,
                concept=picture_concept(item.description),
                description=(item.description or f"a picture on page {item.chunk.page}")[:240],
            )
            found = texts.get(i, Extraction())
            entities = [picture] + [e for e in found.entities if e.name.lower() != name.lower()]
            named = [e for e in found.entities if e.name[:1].isupper() and e.name.lower() != name.lower()]
            facts = [
                ExtractedFact(
                    head=name, relation="related_to", tail=e.name, head_concept=picture.concept, tail_concept=e.concept
                )
                for e in named
            ] + found.facts
            notes = [] if item.description.strip() else ["picture without caption or nearby text"]
            out.append(Extraction(entities=entities, facts=facts, strategy=self.name, notes=notes))
        return out


class ModelImageStrategy:
    """The vision model on the crop and its caption; pictures run concurrently."""

    def __init__(self, chat: ChatModel, offline: OfflineStrategy | None, workers: int = 4, vision: bool = True):
        self.chat, self.offline, self.workers, self.vision = chat, offline, workers, vision
        self.name = f"model:{chat.model}"

    def _one(self, item: ChunkInput) -> Extraction:
        images = [ImagePart(path=item.image)] if self.vision and item.image and item.image.exists() else []
        notes = [] if images else ["no image sent to the model (no vision support or no crop): caption only"]
        prompt = render_prompt(
            __package__,
            "extract_image.md",
            context=material(item.context or "(none)"),
            description=material(item.description or "(none)"),
        )
        reply = self.chat.complete([user(prompt, images)], stage=STAGE_EXTRACT, schema=ImageReply).parsed
        assert isinstance(reply, ImageReply)
        pictures = entities_of([reply.image], default_concept="image")
        picture = (
            pictures[0]
            if pictures
            else ExtractedEntity(name=picture_name(item), concept="image", description=reply.image.description)
        )
        entities = [picture] + [e for e in entities_of(reply.entities) if e.name.lower() != picture.name.lower()]
        content = f"[the attached picture]\nCaption / nearby text: {item.description or '(none)'}"
        facts = model_relations(self.chat, item.context, content, entities, images)
        return Extraction(entities=entities, facts=facts, strategy=self.name, notes=notes)

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction | ChunkFailed]:
        return run_parallel(items, with_fallback(self._one, self.offline), self.workers)
