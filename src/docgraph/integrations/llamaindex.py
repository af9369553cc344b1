"""A LlamaIndex retriever over a docgraph workspace (``pip install 'docgraph[llamaindex]'``).

``DocgraphRetriever(ws, method="kg4vd").retrieve("question")`` returns ``NodeWithScore``s of
``TextNode``s, one per page region (see ``hits.region_hits`` for the metadata).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from .hits import RegionHit, region_hits

SHOWN_TO_MODELS = ("document_title", "page")


class DocgraphRetriever(BaseRetriever):
    """Pages ranked by a docgraph method, split into their best regions."""

    def __init__(
        self,
        workspace: Any,
        method: str = "kg4vd",
        *,
        top_pages: int = 5,
        regions_per_page: int = 3,
        documents: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.workspace, self.method = workspace, method
        self.top_pages, self.regions_per_page, self.documents = top_pages, regions_per_page, documents

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.workspace.search(
            query_bundle.query_str,
            method=self.method,
            top_pages=self.top_pages,
            documents=self.documents,
            regions=self.regions_per_page,
        )
        return [NodeWithScore(node=self._node(hit), score=hit.score) for hit in region_hits(result)]

    @staticmethod
    def _node(hit: RegionHit) -> TextNode:
        """A node whose text for models carries only the document title and page, not boxes and paths."""
        hidden = [key for key in hit.metadata if key not in SHOWN_TO_MODELS]
        return TextNode(
            id_=hit.id,
            text=hit.text,
            metadata=hit.metadata,
            excluded_llm_metadata_keys=hidden,
            excluded_embed_metadata_keys=hidden,
        )
