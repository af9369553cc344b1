"""A small OpenAI-compatible HTTP server for tests (stdlib only, 127.0.0.1, a free port).

Serves ``/v1/chat/completions``, ``/v1/embeddings`` and ``/v1/rerank`` with scripted
replies, records every request, measures concurrency and injects faults::

    with OpenAIStub(default_reply="{}") as stub:
        stub.reply('{"entities": []}', stage="kg4vd.extract")          # by X-Docgraph-Stage header
        stub.reply(lambda req: {"answer": "Rome"}, when="capital")     # substring of the prompt
        stub.fault("429", times=2, retry_after=0.2)                    # next 2 chat calls get 429
        ... point ChatSettings.base_url at stub.url ...
        assert stub.count("/chat/completions") == 3
        stub.requests[-1].image_urls                                   # data URIs the client sent

Replies are matched in order: the first fault with attempts left, then the first rule, then
``default_reply``. A reply may be a str, a JSON-able object, or a callable taking the
``SeenRequest`` and returning either. Fault kinds: ``"429"`` (with Retry-After), ``"500"``,
``"503"``, ``"400"``/``"401"``/``"404"`` (not retryable), ``"hang"`` (sleeps ``hang_s``
before answering — past a short client timeout), ``"malformed"`` (a 200 whose body is
not JSON), ``"truncated"`` (a 200 whose content is cut in half with
``finish_reason="length"``), ``"disconnect"`` (a body shorter than its Content-Length),
``"reset"`` (the connection closed with a TCP reset before any reply), ``"schema"`` (a 200
whose content is JSON of the wrong shape: every property of the request's JSON schema
given a nested list), ``"empty"`` (a 200 whose content is empty), ``"broken"`` (a 200 whose
JSON is written as a small model slips: Python literals, single quotes, after a line of prose).
Token usage is words of the prompt + 100 per image, and words of the reply.

Random faults: ``stub.fault_rate(0.3, kinds=MODEL_FAULTS, seed=15)`` gives a seeded random
30 % of the matching requests one of ``kinds`` each (after any scripted ``fault``);
``stub.faults_seen()`` counts the faults served per kind.

Server capabilities, for the client's probing and downgrades: ``slots=N`` (and
``vision=``) answer ``GET /props`` like llama.cpp (``total_slots``, ``modalities``);
without ``slots`` that route is a 404. ``reject_formats={"json_schema"}`` answers a chat
request whose ``response_format`` has one of those types with a 400 naming the parameter
(as a server without constrained decoding does). ``SeenRequest.response_format`` is what
a request sent; ``stub.gets`` lists the GET paths asked.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from .stub_rules import (
    FAULT_KINDS,
    MODEL_FAULTS,
    Matcher,
    RateRule,
    Reply,
    Rule,
    SeenRequest,
    broken_json,
    wrong_shape,
)

TOKENS_PER_IMAGE = 100
_WORDS = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> int:
    return len(_WORDS.findall(text))


def hashed_embedding(text: str, dim: int = 64) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words point the same way."""
    v = np.zeros(dim, dtype=np.float64)
    for word in _WORDS.findall(text.lower()):
        v[int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little") % dim] += 1.0
    if not v.any():
        v[0] = 1.0
    return (v / np.linalg.norm(v)).tolist()


def overlap_score(query: str, document: str) -> float:
    """Share of the query's words found in the document (the stub's rerank score)."""
    q = set(_WORDS.findall(query.lower()))
    d = set(_WORDS.findall(document.lower()))
    return len(q & d) / max(1, len(q))


class OpenAIStub:
    """The stub server (see module doc). Use as a context manager or ``start()``/``stop()``."""

    def __init__(
        self,
        default_reply: Reply = "OK",
        *,
        delay_s: float = 0.0,
        hang_s: float = 5.0,
        embedding_dim: int = 64,
        embed_fn: Callable[[str], list[float]] | None = None,
        rerank_fn: Callable[[str, str], float] | None = None,
        slots: int | None = None,
        vision: bool = True,
        reject_formats: set[str] | frozenset[str] = frozenset(),
    ):
        self.default_reply = default_reply
        self.slots = slots
        self.vision = vision
        self.reject_formats = set(reject_formats)
        self.gets: list[str] = []
        self.delay_s = delay_s
        self.hang_s = hang_s
        self.embedding_dim = embedding_dim
        self.embed_fn = embed_fn or (lambda text: hashed_embedding(text, self.embedding_dim))
        self.rerank_fn = rerank_fn or overlap_score
        self.requests: list[SeenRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "images": 0}
        self._rules: list[Rule] = []
        self._faults: list[Rule] = []
        self._rate: RateRule | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ scripting
    def reply(
        self,
        reply: Reply,
        *,
        when: Matcher = None,
        stage: str | None = None,
        times: int | None = None,
        path: str = "/chat/completions",
    ) -> OpenAIStub:
        """Answer matching requests with ``reply`` (``times`` uses at most; None = always)."""
        with self._lock:
            self._rules.append(Rule(reply, when, stage, times, path))
        return self

    def fault(
        self,
        kind: str,
        *,
        times: int = 1,
        when: Matcher = None,
        stage: str | None = None,
        retry_after: float | None = None,
        path: str = "/chat/completions",
    ) -> OpenAIStub:
        """Inject ``kind`` (one of ``FAULT_KINDS``) into the next ``times`` matching requests."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; use one of {FAULT_KINDS}")
        with self._lock:
            self._faults.append(Rule(None, when, stage, times, path, kind, retry_after))
        return self

    def fault_rate(
        self,
        rate: float,
        *,
        kinds: tuple[str, ...] | list[str] = MODEL_FAULTS,
        seed: int = 0,
        stage: str | None = None,
        retry_after: float | None = 0.05,
        path: str = "/chat/completions",
    ) -> OpenAIStub:
        """Give a seeded random ``rate`` of the matching requests one of ``kinds`` each (``rate=0``
        turns it off); a 429 carries ``Retry-After: retry_after``."""
        unknown = [k for k in kinds if k not in FAULT_KINDS]
        if unknown or not 0 <= rate <= 1 or not kinds:
            raise ValueError(f"fault_rate({rate}, kinds={list(kinds)}): rate in [0, 1], kinds among {FAULT_KINDS}")
        with self._lock:
            self._rate = RateRule(rate, tuple(kinds), random.Random(seed), path, stage, retry_after) if rate else None
        return self

    def clear_faults(self) -> None:
        """Stop injecting faults (scripted and random); replies and recorded requests stay."""
        with self._lock:
            self._faults.clear()
            self._rate = None

    def faults_seen(self) -> Counter:
        """Faults served so far, per kind."""
        with self._lock:
            return Counter(r.fault for r in self.requests if r.fault)

    def reset(self) -> None:
        """Forget rules, faults, recorded requests and counters."""
        with self._lock:
            self._rules.clear()
            self._faults.clear()
            self._rate = None
            self.requests.clear()
            self.max_in_flight = 0
            self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "images": 0}

    def count(self, path: str | None = None, stage: str | None = None) -> int:
        """Requests seen (ending in ``path``, with ``stage``), faults included."""
        return len(self.seen(path, stage))

    def seen(self, path: str | None = None, stage: str | None = None) -> list[SeenRequest]:
        with self._lock:
            return [
                r
                for r in self.requests
                if (path is None or r.path.endswith(path)) and (stage is None or r.stage == stage)
            ]

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        """The base URL to configure (``http://127.0.0.1:<port>/v1``)."""
        if self._server is None:
            raise RuntimeError("stub not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> OpenAIStub:
        handler = type("StubHandler", (_Handler,), {"stub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ serving (handler threads)
    def _pick(self, req: SeenRequest) -> tuple[Rule | None, Reply]:
        with self._lock:
            self.requests.append(req)
            for rule in self._faults:
                if rule.applies(req):
                    rule.used += 1
                    req.fault = rule.kind
                    return rule, None
            rate = self._rate
            kind = rate.draw(req) if rate is not None else None
            if rate is not None and kind is not None:
                req.fault = kind
                return Rule(None, kind=kind, retry_after=rate.retry_after if kind == "429" else None), None
            for rule in self._rules:
                if rule.applies(req):
                    rule.used += 1
                    return None, rule.reply
        return None, self.default_reply

    @staticmethod
    def _render(reply: Reply, req: SeenRequest) -> str:
        value = reply(req) if callable(reply) else reply
        return value if isinstance(value, str) else json.dumps(value)

    def _chat_body(self, req: SeenRequest, text: str, finish: str) -> dict[str, Any]:
        prompt_tokens = sum(_words(t) for t in req.texts) + TOKENS_PER_IMAGE * len(req.image_urls)
        completion_tokens = _words(text)
        return {
            "id": f"chatcmpl-stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": (req.body or {}).get("model", "stub"),
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _embeddings_body(self, req: SeenRequest) -> dict[str, Any]:
        body = req.body or {}
        if "messages" in body:  # vLLM-style multimodal embedding request: one item
            key = (
                " ".join(req.texts) + " " + " ".join(hashlib.sha256(u.encode()).hexdigest()[:8] for u in req.image_urls)
            )
            inputs = [key]
        else:
            inputs = req.texts
        data = [{"object": "embedding", "index": i, "embedding": self.embed_fn(t)} for i, t in enumerate(inputs)]
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "stub"),
            "usage": {"prompt_tokens": sum(_words(t) for t in inputs), "total_tokens": 0},
        }

    def _rerank_body(self, req: SeenRequest) -> dict[str, Any]:
        body = req.body or {}
        docs = [str(d) for d in body.get("documents", [])]
        scored = [{"index": i, "relevance_score": self.rerank_fn(body.get("query", ""), d)} for i, d in enumerate(docs)]
        scored.sort(key=lambda r: -r["relevance_score"])
        return {"id": "rerank-stub", "model": body.get("model", "stub"), "results": scored}

    def handle(self, req: SeenRequest) -> tuple[int, dict[str, str], bytes, str | None]:
        """(status, headers, body, special) for a request; special is 'disconnect', 'reset' or None."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            fault, reply = self._pick(req)
            if self.delay_s:
                self._stopping.wait(self.delay_s)
            kind = fault.kind if fault else None
            if kind == "hang":
                self._stopping.wait(self.hang_s)
            if fault is not None and kind in ("400", "401", "404", "429", "500", "503"):
                req.status = int(kind)
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
                err: dict[str, dict[str, object]] = {
                    "error": {"message": f"stub fault {kind}", "type": "stub", "code": kind}
                }
                return req.status, headers, json.dumps(err).encode(), None
            fmt = req.response_format
            if (
                req.path.endswith("/chat/completions")
                and isinstance(fmt, dict)
                and fmt.get("type") in self.reject_formats
            ):
                req.status = 400
                err = {
                    "error": {
                        "message": f"response_format type {fmt.get('type')!r} is not supported",
                        "type": "invalid_request_error",
                        "code": 400,
                    }
                }
                return 400, {}, json.dumps(err).encode(), None
            if kind == "malformed":
                return 200, {}, b'{"choices": [{"message": {"content": "unterminated', None
            if kind == "reset":
                return 0, {}, b"", "reset"
            if req.path.endswith("/embeddings"):
                out = self._embeddings_body(req)
            elif req.path.endswith("/rerank"):
                out = self._rerank_body(req)
            elif req.path.endswith("/chat/completions"):
                text = self._render(reply if not fault else self.default_reply_for(req), req)
                finish = "stop"
                if kind == "truncated":
                    text, finish = text[: max(1, len(text) // 2)], "length"
                elif kind == "schema":
                    text = wrong_shape(req)
                elif kind == "empty":
                    text = ""
                elif kind == "broken":
                    text = broken_json(text)
                out = self._chat_body(req, text, finish)
                if kind != "disconnect":  # count only replies the client can read
                    with self._lock:
                        self.usage["prompt_tokens"] += out["usage"]["prompt_tokens"]
                        self.usage["completion_tokens"] += out["usage"]["completion_tokens"]
                        self.usage["images"] += len(req.image_urls)
            else:
                req.status = 404
                return 404, {}, json.dumps({"error": {"message": f"no route {req.path}"}}).encode(), None
            return 200, {}, json.dumps(out).encode(), ("disconnect" if kind == "disconnect" else None)
        finally:
            with self._lock:
                self.in_flight -= 1

    def default_reply_for(self, req: SeenRequest) -> Reply:
        """The reply a faulted request would have had (first matching rule, else the default)."""
        with self._lock:
            for rule in self._rules:
                if rule.applies(req):
                    return rule.reply
        return self.default_reply


class _Handler(BaseHTTPRequestHandler):
    stub: OpenAIStub
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        stub = self.stub
        with stub._lock:
            stub.gets.append(self.path)
        if self.path.rstrip("/").endswith("/props") and stub.slots is not None:
            status, body = 200, {"total_slots": stub.slots, "modalities": {"vision": stub.vision}}
        else:
            status, body = 404, {"error": {"message": f"no route {self.path}"}}
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        req = SeenRequest(self.path, body, {k.lower(): v for k, v in self.headers.items()})
        status, headers, payload, special = self.stub.handle(req)
        if special == "reset":  # SO_LINGER 0: close() sends a TCP RST, no reply at all
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            if special == "disconnect":
                self.send_header("Content-Length", str(len(payload) + 100))
                self.end_headers()
                self.wfile.write(payload[: len(payload) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout): nothing to send to
