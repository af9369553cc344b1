"""The baselines both papers compare against, each a registered method:
``nodocs`` (model only), ``bm25`` and ``dense`` (text chunks), ``pages`` (page retrieval +
multimodal answer) and ``hipporag`` (HippoRAG 2-style text graph RAG)."""

from . import bm25, dense, hipporag, hybrid, nodocs, pages
from .settings import BaselineSettings, HippoRAGSettings

__all__ = ["bm25", "dense", "hipporag", "hybrid", "nodocs", "pages", "BaselineSettings", "HippoRAGSettings"]
