"""docgraph: question answering over long, visually rich documents through page-grounded
multimodal knowledge graphs (KG4VD, HVM-GraphRAG) and the baselines they are measured against."""

from .api import Workspace
from .errors import DocgraphError, InputError, ModelError, StoreError
from .types import Answer, Citation, Component, Document, Evidence, Page

__all__ = [
    "Workspace",
    "Document",
    "Page",
    "Component",
    "Evidence",
    "Answer",
    "Citation",
    "DocgraphError",
    "InputError",
    "ModelError",
    "StoreError",
]
__version__ = "0.1.0"
