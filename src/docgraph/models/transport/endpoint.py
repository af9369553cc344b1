"""The shared base of the non-chat HTTP backends (text/image embeddings, rerank).

``EndpointBackend`` holds what each of them needs from its settings section — the model
name, a description for error messages, the retry policy and an OpenAI client — and
``request(fn)`` runs one request with error translation and retries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...errors import ConfigError
from .http import guarded, make_client
from .retry import RetryPolicy

R = TypeVar("R")


class EndpointBackend:
    """Base for backends configured by a section with base_url/model/api_key_env/timeout_s."""

    def __init__(self, settings: Any, kind: str, section: str, policy: RetryPolicy | None = None):
        if not settings.base_url:
            raise ConfigError(f"models.{section} uses an endpoint but models.{section}.base_url is not set")
        self.settings = settings
        self.model: str = settings.model
        self.endpoint = f"{kind} endpoint {settings.base_url} (model {settings.model!r})"
        self.policy = policy or RetryPolicy.from_settings(settings)
        self._client = make_client(settings.base_url, settings.api_key_env, settings.timeout_s)

    def request(self, fn: Callable[[], R]) -> R:
        """``fn()`` (one HTTP request and its parsing) with translated errors and retries."""
        return self.policy.call(lambda: guarded(self.endpoint, fn), self.endpoint)
