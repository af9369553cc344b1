"""HVM-GraphRAG (METHODS.md "HVM-GraphRAG"): registers the ``hvm`` method on import."""

from .method import HVMMethod

__all__ = ["HVMMethod"]
