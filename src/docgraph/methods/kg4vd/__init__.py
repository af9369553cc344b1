"""KG4VD (Multimodal Graph RAG for long-range visually rich documents).

Build side: page graphs from the adaptive extract → check → reflect loop over Set-of-Marks
pages (``loop``, ``controller``, ``model`` / ``offline`` strategies), cross-page connection
(``crosspage``, ``judge``), the multimodal index (``index``), orchestration (``build``) and
the storage contract shared with the query side (``storage``). Importing the package
registers the ``kg4vd`` method.
"""

from .method import KG4VDMethod

__all__ = ["KG4VDMethod"]
