"""What an HVM build extracts with: the extractors per modality and the conflict detector and
resolver (a model's, else the offline rules), and the signature of the settings a document's
index depends on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import MethodContext
from ..building.chunking import DEFAULT_MAX_WORDS
from ..building.markdown_tables import TABLE_READING
from .conflicts import ModelDetector, ModelResolver, OfflineDetector, OfflineResolver, SupportLimits
from .extract_base import OfflineStrategy, Strategy
from .extract_image import ModelImageStrategy, OfflineImageStrategy
from .extract_table import ModelTableStrategy, OfflineTableStrategy
from .extract_text import ModelTextStrategy, OfflineTextStrategy


@dataclass
class Toolkit:
    """The extractors per modality and the conflict pair for this build. ``offline_fallback``:
    an unusable conflict-check reply falls back to the offline rules (else it stops the document)."""

    extractors: Mapping[str, Strategy]
    name: str
    chat: Any = None
    limits: SupportLimits = SupportLimits()
    offline_fallback: bool = True

    def detector_resolver(self, max_group_size: int, context: str):
        if self.chat is None:
            return OfflineDetector(), OfflineResolver()
        return ModelDetector(self.chat, max_group_size, context), ModelResolver(self.chat, context, self.limits)


def toolkit(ctx: MethodContext) -> Toolkit:
    """Model strategies when a build model is configured, else the offline ones. The model
    strategies fall back to the offline ones per ``hvm.on_model_error``."""
    text = OfflineTextStrategy(ctx.models.nlp)
    offline: dict[str, OfflineStrategy] = {
        "text": text,
        "table": OfflineTableStrategy(text),
        "image": OfflineImageStrategy(text),
    }
    chat = ctx.models.chat("build")
    if chat is None:
        return Toolkit(extractors=offline, name="offline")
    workers = ctx.settings.models.build.max_concurrency
    vision = bool(getattr(chat, "supports_vision", ctx.settings.models.build.supports_vision))
    settings = ctx.settings.hvm.with_profile()
    fallback = {k: v if settings.on_model_error == "offline" else None for k, v in offline.items()}
    return Toolkit(
        extractors={
            "text": ModelTextStrategy(chat, fallback["text"], workers),
            "table": ModelTableStrategy(chat, fallback["table"], workers),
            "image": ModelImageStrategy(chat, fallback["image"], workers, vision=vision),
        },
        name=f"model:{chat.model}",
        chat=chat,
        limits=SupportLimits.of(settings),
        offline_fallback=settings.on_model_error == "offline",
    )


def signature_of(ctx: MethodContext, kit: Toolkit) -> dict:
    """The settings a document's HVM index depends on; a change rebuilds the document."""
    settings = ctx.settings.hvm.with_profile()
    return {
        "extractor": kit.name,
        "conflict_resolution": settings.conflict_resolution,
        "max_group_size": settings.max_group_size,
        "support_per_group": settings.support_per_group,
        "support_chars": settings.support_chars,
        "chunk_words": DEFAULT_MAX_WORDS,
        "table_reading": TABLE_READING,
    }


def extraction_changed(recorded: dict, signature: dict) -> bool:
    """Whether the recorded extractions are stale: another extractor, chunk size or table
    reading (a key the recorded signature lacks counts as unchanged, as in ``signature_changes``)."""
    return any(
        key in recorded and recorded[key] != signature[key] for key in ("extractor", "chunk_words", "table_reading")
    )


def signature_changes(recorded: dict, signature: dict) -> list[str]:
    """``"key old → new"`` for every setting that differs; a key the recorded signature lacks
    (an index built before it was recorded) counts as unchanged."""
    return [
        f"{key} {recorded[key]} → {value}"
        for key, value in signature.items()
        if key in recorded and recorded[key] != value
    ]
