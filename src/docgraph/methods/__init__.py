"""Question-answering methods; each registers itself by name (see ``base.register``)."""

from .base import BuildReport, Method, MethodContext, available_methods, get_method, register

__all__ = ["BuildReport", "Method", "MethodContext", "available_methods", "get_method", "register"]
