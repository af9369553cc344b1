"""A LangChain retriever over a docgraph workspace (``pip install 'docgraph[langchain]'``).

``DocgraphRetriever(workspace=ws, method="kg4vd").invoke("question")`` returns LangChain
``Document``s, one per page region (see ``hits.region_hits`` for the metadata).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from .hits import region_hits


class DocgraphRetriever(BaseRetriever):
    """Pages ranked by a docgraph method, split into their best regions."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Any
    """An open ``docgraph.Workspace``."""
    method: str = "kg4vd"
    top_pages: int = 5
    regions_per_page: int = 3
    documents: list[str] | None = None
    """Only pages of these documents (ids, file names or titles)."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        result = self.workspace.search(
            query, method=self.method, top_pages=self.top_pages, documents=self.documents, regions=self.regions_per_page
        )
        return [
            Document(id=hit.id, page_content=hit.text, metadata={**hit.metadata, "score": hit.score})
            for hit in region_hits(result)
        ]
