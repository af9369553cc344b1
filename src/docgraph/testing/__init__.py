"""Test infrastructure shipped with the package, so every package's tests can use it:
``openai_stub`` (an OpenAI-compatible loopback server with scripted replies and faults) and
``fixtures`` (pytest fixtures and helpers building settings and model hubs around it)."""

from .openai_stub import OpenAIStub
from .stub_rules import FAULT_KINDS, SeenRequest

__all__ = ["FAULT_KINDS", "OpenAIStub", "SeenRequest"]
