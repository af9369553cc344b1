"""The LangChain and LlamaIndex retrievers against the real packages: framework types, one per
page region, with page, box, region id, document title, score and image path in metadata."""

from __future__ import annotations

from pathlib import Path

from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeWithScore

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.integrations.langchain import DocgraphRetriever as LangChainRetriever
from docgraph.integrations.llamaindex import DocgraphRetriever as LlamaIndexRetriever

QUERY = "Creative Commons license"


def opened(ws_path: Path) -> Workspace:
    return Workspace(ws_path, settings=load_settings(ws_path, environ={}))


def test_langchain_retriever_returns_regions_with_their_place(example_ws):
    with opened(example_ws) as ws:
        docs = LangChainRetriever(workspace=ws, method="kg4vd", top_pages=2, regions_per_page=2).invoke(QUERY)
        page = ws.page(docs[0].metadata["document_id"], docs[0].metadata["page"])
    assert all(isinstance(d, Document) for d in docs) and len(docs) == 4
    first = docs[0]
    assert first.metadata["page"] == 2 and "Creative Commons" in first.page_content
    component = next(c for c in page.components if c.id == first.metadata["component_id"])
    assert first.metadata["bbox"] == list(component.bbox.as_tuple())
    assert first.metadata["document_title"] and Path(first.metadata["image"]).is_file()
    assert first.metadata["score"] >= docs[-1].metadata["score"]
    assert [d.metadata["page_rank"] for d in docs] == [1, 1, 2, 2]


def test_llamaindex_retriever_returns_scored_nodes(example_ws):
    with opened(example_ws) as ws:
        nodes = LlamaIndexRetriever(ws, method="hybrid", top_pages=3).retrieve(QUERY)
        only = LlamaIndexRetriever(ws, method="hybrid", documents=["nosuch.pdf"])
        try:
            only.retrieve(QUERY)
            raise AssertionError("an unknown document must be an error")
        except Exception as exc:  # docgraph's InputError, raised through the framework
            assert "no document 'nosuch.pdf'" in str(exc)
    assert all(isinstance(n, NodeWithScore) for n in nodes) and len({n.node.metadata["page"] for n in nodes}) == 3
    best = nodes[0]
    assert best.node.metadata["page"] == 2 and best.score == max(n.score for n in nodes)
    assert {"component_id", "bbox", "image", "document_title"} <= set(best.node.metadata)
    assert best.node.node_id == f"{best.node.metadata['document_id']}:p2:{best.node.metadata['component_id']}"
    shown = best.node.get_content(MetadataMode.LLM)
    assert "document_title" in shown and "bbox" not in shown and "image" not in shown
