"""Extractor for text chunks: typed entities grounded in the chunk, then relations among them.

Model strategy (paper Appendix D.1, Figs. 13 and 16): ``extract_text_entities.md`` asks
for entities of the allowed types (``ENTITY_TYPES``; the type is the entity's concept φ)
with a description based only on the chunk; ``extract_relations.md`` then asks for
directional facts among them with lowercase_underscore relation names and the types of
both ends. Offline strategy: NER entities (concept from the NER label), noun phrases
(concept from the phrase head), and the offline NLP's subject–verb–object triples as facts.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...models.base import ChatModel, OfflineNLP, user
from ...prompts import material, render_prompt
from .extract_base import (
    STAGE_EXTRACT,
    ChunkFailed,
    ChunkInput,
    EntitiesReply,
    OfflineStrategy,
    entities_of,
    model_relations,
    offline_entities,
    offline_facts,
    run_parallel,
    with_fallback,
)
from .extraction import Extraction

ENTITY_TYPES: tuple[str, ...] = (
    "person",
    "organization",
    "group",
    "location",
    "event",
    "date",
    "product",
    "work",
    "law",
    "method",
    "dataset",
    "metric",
    "technology",
    "concept",
    "document section",
)


class OfflineTextStrategy:
    """Entities and facts from the offline NLP (see module docstring)."""

    name = "offline"

    def __init__(self, nlp: OfflineNLP):
        self.nlp = nlp

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction]:
        analyses = self.nlp.analyze([item.chunk.text for item in items]) if items else []
        out = []
        for analysis in analyses:
            entities, concepts = offline_entities(analysis)
            out.append(Extraction(entities=entities, facts=offline_facts(analysis, concepts), strategy=self.name))
        return out


class ModelTextStrategy:
    """Entities, then relations, from the build model; chunks run concurrently."""

    def __init__(self, chat: ChatModel, offline: OfflineStrategy | None, workers: int = 4):
        self.chat, self.offline, self.workers = chat, offline, workers
        self.name = f"model:{chat.model}"

    def _one(self, item: ChunkInput) -> Extraction:
        prompt = render_prompt(
            __package__,
            "extract_text_entities.md",
            types=", ".join(ENTITY_TYPES),
            context=material(item.context or "(none)"),
            text=material(item.chunk.text),
        )
        reply = self.chat.complete([user(prompt)], stage=STAGE_EXTRACT, schema=EntitiesReply).parsed
        assert isinstance(reply, EntitiesReply)
        entities = entities_of(reply.entities)
        facts = model_relations(self.chat, item.context, item.chunk.text, entities)
        return Extraction(entities=entities, facts=facts, strategy=self.name)

    def extract(self, items: Sequence[ChunkInput]) -> list[Extraction | ChunkFailed]:
        return run_parallel(items, with_fallback(self._one, self.offline), self.workers)
