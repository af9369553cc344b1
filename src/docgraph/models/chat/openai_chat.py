"""The OpenAI-compatible chat/vision backend (OpenAI, vLLM, SGLang, Ollama, llama.cpp, LM Studio).

One HTTP request per ``complete``; no retries, cache or parsing here — those are wrappers
(``retry``, ``cache``, ``structured``). Images travel as ``image_url`` parts with data URIs.
The stage goes along as an ``X-Docgraph-Stage`` header (servers ignore it; the test stub
scripts replies by it).

With a ``schema`` the request carries a ``response_format`` in the endpoint's current
structured-output mode (``response_format.py``; a call's own json_schema format wins over
the one built from the schema). When the server answers 400 naming the parameter, the
mode is lowered (json_schema -> json_object -> none, one log line, remembered in the
``CapabilityBook``) and the request is sent again at once.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from ...config import ChatSettings
from ...errors import ModelError
from ...types import Usage
from ..base import ChatResult, Message
from ..transport.http import EndpointError, guarded, make_client
from .capabilities import CapabilityBook
from .keys import data_uri
from .response_format import format_for, rejects_format

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

STAGE_HEADER = "X-Docgraph-Stage"


def header_value(text: str) -> str:
    """``text`` made safe for an HTTP header (printable ASCII)."""
    return "".join(ch if " " <= ch <= "~" else "?" for ch in text)[:200]


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat-completions messages; a message with images becomes text + image_url parts."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if not m.images:
            out.append({"role": m.role, "content": m.text})
            continue
        parts: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
        parts += [{"type": "image_url", "image_url": {"url": data_uri(i)}} for i in m.images]
        out.append({"role": m.role, "content": parts})
    return out


class OpenAIChat:
    """ChatModel over ``/v1/chat/completions``.

    Defaults from settings: temperature, ``max_tokens`` (= max_output_tokens), timeout.
    Call ``params`` override them; names the client accepts go as arguments, others in the
    request body (``extra_body``), so server-specific options (e.g. vLLM's ``guided_json``)
    pass through. Raises ``EndpointError`` (retryable or not) on any failure.
    """

    def __init__(self, settings: ChatSettings, role: str = "build", capabilities: CapabilityBook | None = None):
        if not settings.base_url:
            raise ModelError(f"models.{role}.base_url is not set; configure an endpoint or use offline mode")
        self.settings = settings
        self.role = role
        self.model = settings.model
        self.supports_vision = settings.supports_vision
        self.endpoint = f"chat endpoint {settings.base_url} (model {settings.model!r}, role {role})"
        self._client = make_client(settings.base_url, settings.api_key_env, settings.timeout_s)
        self._known = set(inspect.signature(self._client.chat.completions.create).parameters)
        self.capabilities = capabilities or CapabilityBook(
            f"{settings.base_url}|{settings.model}", settings.structured_output
        )

    @property
    def default_params(self) -> dict[str, Any]:
        return {"temperature": self.settings.temperature, "max_tokens": self.settings.max_output_tokens}

    def complete(
        self, messages: Sequence[Message], *, stage: str, schema: type[BaseModel] | None = None, **params: Any
    ) -> ChatResult:
        images = sum(len(m.images) for m in messages)
        if images and not self.supports_vision:
            raise ModelError(
                f"{self.endpoint}: stage {stage!r} sent {images} image(s) but models.{self.role}."
                "supports_vision is false; configure a vision model or set supports_vision = true"
            )
        merged = {**self.default_params, **params}
        given = merged.pop("response_format", None)
        payload = to_openai_messages(messages)
        while True:
            mode = self.capabilities.mode if schema is not None else "none"
            fmt = format_for(mode, schema, given, self.settings.schema_max_items) if schema is not None else given
            try:
                return self._send(payload, stage, images, {**merged, **({"response_format": fmt} if fmt else {})})
            except EndpointError as exc:
                said = str(exc).replace(self.endpoint, "")
                if schema is None or mode == "none" or not rejects_format(exc.status, said):
                    raise
                self.capabilities.lower(mode, said, self.endpoint)

    def _send(self, payload: list[dict[str, Any]], stage: str, images: int, merged: dict[str, Any]) -> ChatResult:
        kwargs = {k: v for k, v in merged.items() if k in self._known}
        extra = {k: v for k, v in merged.items() if k not in self._known}
        start = time.perf_counter()

        def call() -> ChatResult:
            resp = self._client.chat.completions.create(
                model=self.model,
                # to_openai_messages builds the chat-completions shape; its roles come from
                # Message.role as plain strings, which the client's per-role TypedDicts cannot see
                messages=cast("list[ChatCompletionMessageParam]", payload),
                extra_headers={STAGE_HEADER: header_value(stage)},
                extra_body=extra or None,
                **kwargs,
            )
            choice = resp.choices[0]
            text = choice.message.content or ""
            u = resp.usage
            usage = Usage(
                calls=1,
                input_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
                output_tokens=int(getattr(u, "completion_tokens", 0) or 0),
                images=images,
                seconds=time.perf_counter() - start,
            )
            return ChatResult(
                text=text, usage=usage, model=resp.model or self.model, finish_reason=choice.finish_reason or ""
            )

        return guarded(self.endpoint, call)

    def __repr__(self) -> str:
        return f"OpenAIChat({self.settings.base_url!r}, {self.model!r})"
