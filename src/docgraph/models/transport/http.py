"""OpenAI-compatible endpoints: one client factory and one error translation for all backends.

Every HTTP backend (chat, text embeddings, image embeddings, rerank) talks through an
``openai.OpenAI`` client made by ``make_client`` (the client's own retries disabled:
retrying is ``retry.py``'s job) and turns the client's exceptions into ``EndpointError``
with ``translate_error``, so the retry policy only knows docgraph's errors.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import ModelError

if TYPE_CHECKING:
    import openai  # imported where a client is made: half a second a CLI call without endpoints need not pay

R = TypeVar("R")
NO_KEY = "EMPTY"  # what local servers (vLLM, llama.cpp, Ollama) accept when no key is set


class EndpointError(ModelError):
    """A failed request to a model endpoint.

    ``retryable`` is true for timeouts, connection errors, 429, 5xx and unreadable
    responses; ``retry_after`` holds the server's Retry-After (seconds) when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        kind: str = "error",
    ):
        self.endpoint = endpoint
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind = kind
        super().__init__(message)


def api_key(env_name: str | None, environ: dict[str, str] | None = None) -> str:
    """The key from the env var named in settings, or ``"EMPTY"`` for keyless local servers."""
    env = os.environ if environ is None else environ
    return (env.get(env_name) if env_name else None) or NO_KEY


def make_client(base_url: str, api_key_env: str | None, timeout_s: float) -> openai.OpenAI:
    """An OpenAI client for ``base_url`` with its own retries off (``retry.py`` retries)."""
    import openai

    return openai.OpenAI(base_url=base_url.rstrip("/"), api_key=api_key(api_key_env), timeout=timeout_s, max_retries=0)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (numeric form); None if absent."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


_STATUS_HINTS = {
    400: "the server rejected the request; check that the model accepts these parameters (and images)",
    401: "the API key was refused; set the environment variable named by api_key_env",
    403: "access denied; check the API key's permissions for this model",
    404: "not found; check base_url (usually ends in /v1) and the model name",
    413: "the request is too large; lower the page render dpi or send fewer images",
    422: "the server could not process the request; check the model name and parameters",
}


def translate_error(exc: Exception, endpoint: str) -> EndpointError:
    """An ``EndpointError`` describing ``exc`` (an openai/httpx/JSON exception)."""
    if isinstance(exc, EndpointError):
        return exc
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return EndpointError(f"{endpoint}: request timed out", endpoint=endpoint, retryable=True, kind="timeout")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return EndpointError(
            f"{endpoint}: connection failed ({type(cause).__name__}: {cause})",
            endpoint=endpoint,
            retryable=True,
            kind="connection",
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = parse_retry_after(exc.response.headers) if exc.response is not None else None
        body = _short(exc.response.text if exc.response is not None else str(exc))
        if status == 429 or status >= 500 or status == 408:
            kind = "rate_limit" if status == 429 else "server"
            return EndpointError(
                f"{endpoint}: HTTP {status} {body}",
                endpoint=endpoint,
                retryable=True,
                status=status,
                retry_after=retry_after,
                kind=kind,
            )
        hint = _STATUS_HINTS.get(status, "check the endpoint settings")
        return EndpointError(
            f"{endpoint}: HTTP {status} {body} — {hint}",
            endpoint=endpoint,
            retryable=False,
            status=status,
            kind="client",
        )
    if isinstance(
        exc, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError, KeyError, TypeError, IndexError)
    ):
        return EndpointError(
            f"{endpoint}: unreadable response ({type(exc).__name__}: {_short(str(exc))})",
            endpoint=endpoint,
            retryable=True,
            kind="malformed",
        )
    return EndpointError(
        f"{endpoint}: {type(exc).__name__}: {_short(str(exc))}", endpoint=endpoint, retryable=False, kind="error"
    )


def guarded(endpoint: str, fn: Callable[[], R]) -> R:
    """Run one request; any failure leaves as an ``EndpointError``."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - every failure is translated, none swallowed
        raise translate_error(exc, endpoint) from exc


def post_json(client: openai.OpenAI, path: str, body: dict[str, Any]) -> Any:
    """POST ``body`` to ``<base_url>/<path>`` through the client; the decoded JSON reply."""
    return client.post(path if path.startswith("/") else "/" + path, cast_to=object, body=body)


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"
