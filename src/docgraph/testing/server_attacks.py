"""Attacks on the web app for the reliability matrix (issue 15 item 6).

Each case returns an ``AttackResult``: requests tried, how many were refused (an expected
4xx) or absorbed (served normally), anything that leaked (a 2xx or a body with a secret
where a refusal was due, any 5xx), and whether the workspace changed
(``faults.canonical_dump``) or fails ``docgraph check``.

- ``traversal_case(app_client, secret)``: every path parameter of every documented route
  (OpenAPI) replaced, one at a time, by traversal, encoded-traversal, NUL, drive, UNC and
  oversized values, with GET and the route's own methods;
- ``token_case(make_client)``: no token, forged ones (near misses, another case, padded,
  1 MB), and an *expired* one — the token of the server's previous run — in the header, the
  query and the cookie;
- ``slow_upload_case(root)``: on a real ``docgraph serve``, slow clients trickle multipart
  bodies and hang up half-way while others read (they must be served promptly), and nothing
  of the cut uploads is kept;
- ``flood_case(root)``: a bounded flood (threads × requests on 127.0.0.1, with repeated build
  requests): every request answered, the slowest under a bound, one build job per method.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ..store.integrity import check_workspace
from .concurrency import AUTH, serve_workspace
from .faults import canonical_dump, compare_dumps

# (a bare ".." segment is resolved by the client before it is sent: the route it names is a real one)
TRAVERSALS = (
    "%2e%2e",
    ".%2e",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fpyproject.toml",
    "%252e%252e%252fetc%252fpasswd",
    "%2Fetc%2Fpasswd",
    "..%5C..%5Cwindows%5Cwin.ini",
    "C:%5CWindows%5Cwin.ini",
    "%5C%5Cserver%5Cshare",
    "%00",
    "a%00.png",
    "x" * 4096,
)
LEAK_MARKERS = (b"root:x:", b"[project]", b"TOP-SECRET", b"def create_app", b"[extensions]")
REFUSALS = frozenset({400, 401, 403, 404, 405, 409, 413, 414, 415, 422, 431})
MAX_LATENCY_S = 5.0


@dataclass
class AttackResult:
    case: str
    tried: int = 0
    refused: int = 0
    absorbed: int = 0
    leaks: list[str] = field(default_factory=list)
    slowest_s: float = 0.0
    changed_rows: int = 0
    check_problems: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def survived(self) -> bool:
        return (
            not self.leaks
            and self.refused + self.absorbed == self.tried
            and not self.changed_rows
            and not self.check_problems
            and self.slowest_s < MAX_LATENCY_S
        )

    def expect_refusal(self, what: str, response: httpx.Response, secret: bytes = b"") -> None:
        self.tried += 1
        body = response.content
        leaked = [m for m in (*LEAK_MARKERS, secret) if m and m in body]
        if response.status_code in REFUSALS and not leaked:
            self.refused += 1
        else:
            self.leaks.append(f"{what}: {response.status_code} {body[:120]!r}")


def workspace_unchanged(result: AttackResult, root: Path, before: dict[str, dict]) -> AttackResult:
    diff = compare_dumps(before, canonical_dump(root))
    result.changed_rows = sum(diff.lost.values()) + sum(diff.extra.values()) + sum(diff.changed.values())
    result.check_problems = len(check_workspace(root).findings)
    result.notes += diff.examples
    return result


# ---------------------------------------------------------------------------- path parameters
def traversal_case(client: Any, root: Path, values: dict[str, str], secret: bytes) -> AttackResult:
    """``client``: a started TestClient of the app over ``root`` (with ``AUTH``'s token);
    ``values``: a valid value per path parameter (the others stay valid while one is attacked)."""
    result = AttackResult("path traversal in every path parameter")
    before = canonical_dump(root)
    schema = client.get("/openapi.json", headers=AUTH).json()
    for path, methods in schema["paths"].items():
        params = [p.strip("{}") for p in path.split("/") if p.startswith("{")]
        for param in params:
            for payload in TRAVERSALS:
                url = path.format(**{**values, param: payload})
                for method in {"get", *methods} - {"post"}:
                    response = client.request(method.upper(), url, headers=AUTH)
                    result.expect_refusal(f"{method.upper()} {url[:100]}", response, secret)
    return workspace_unchanged(result, root, before)


# ---------------------------------------------------------------------------- tokens
def token_case(make_client: Callable[[str], Any], root: Path, token: str, previous: str) -> AttackResult:
    """``make_client(token)``: a TestClient of the app over ``root`` requiring ``token``;
    ``previous``: the token of an earlier run (expired now)."""
    result = AttackResult("missing, forged and expired tokens")
    before = canonical_dump(root)
    client = make_client(token)
    forged = {
        "none": None,
        "expired (previous run)": previous,
        "near miss": token[:-1] + "x",
        "other case": token.upper(),
        "padded": f" {token} x",
        "prefix": token[:4],
        "1 MB": "t" * (1 << 20),
    }
    urls = [
        ("GET", "/api/documents"),
        ("GET", "/openapi.json"),
        ("POST", "/api/build"),
        ("GET", "/"),
        ("DELETE", "/api/documents/040fed959f81"),
    ]
    for label, value in forged.items():
        for method, url in urls:
            ways = (
                [{}]
                if value is None
                else [
                    {"headers": {"Authorization": f"Bearer {value}"}},
                    {"params": {"token": value[:8192]}},  # URLs stop at 64 KB
                    {"cookies": {"docgraph_token": value}},
                ]
            )
            for way in ways:
                cookies = way.pop("cookies", None)
                client.cookies.clear()
                if cookies:
                    client.cookies.update(cookies)
                kwargs = {**way, **({"json": {"method": "dense"}} if method == "POST" else {})}
                response = client.request(method, url, **kwargs)
                result.expect_refusal(f"{label} token {method} {url} {list(way) or ['no token']}", response)
    client.cookies.clear()
    return workspace_unchanged(result, root, before)


# ---------------------------------------------------------------------------- slow uploads
def _trickle(port: int, seconds: float, stop: threading.Event) -> None:
    """A client that sends a multipart upload's headers and then a byte at a time, and hangs up."""
    boundary = "xyzzy"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="slow.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
    ).encode()
    request = (
        f"POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {AUTH['Authorization']}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {10 << 20}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request + head)
        ends = time.monotonic() + seconds
        while time.monotonic() < ends and not stop.is_set():
            try:
                sock.sendall(b"0")
            except OSError:  # the server dropped us: refused
                return
            time.sleep(0.2)


def slow_upload_case(root: Path, clients: int = 6, seconds: float = 8.0) -> AttackResult:
    result = AttackResult(
        f"slow uploads ({clients} clients trickling a byte every 0.2 s for {seconds:g} s, "
        "then hanging up) while others read"
    )
    before = canonical_dump(root)
    server, api = serve_workspace(root)
    port = int(api.split(":")[2].split("/")[0])
    stop = threading.Event()
    slow = [threading.Thread(target=_trickle, args=(port, seconds, stop), daemon=True) for _ in range(clients)]
    try:
        for thread in slow:
            thread.start()
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            started = time.monotonic()
            status = httpx.get(f"{api}/documents", headers=AUTH, timeout=30).status_code
            result.slowest_s = max(result.slowest_s, time.monotonic() - started)
            result.tried += 1
            if status == 200:
                result.absorbed += 1
            else:
                result.leaks.append(f"GET /api/documents during the slow uploads: {status}")
            time.sleep(0.1)
        stop.set()
        for thread in slow:
            thread.join(timeout=10)
        time.sleep(1.0)
        kept = [p for p in (root / "uploads").rglob("*") if p.is_file()] if (root / "uploads").exists() else []
        if kept:
            result.leaks.append(f"cut uploads left files: {[p.name for p in kept]}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return workspace_unchanged(result, root, before)


# ---------------------------------------------------------------------------- flood
def flood_case(root: Path, doc_id: str, threads: int = 16, per_thread: int = 40) -> AttackResult:
    result = AttackResult(
        f"request flood ({threads} threads × {per_thread} requests on 127.0.0.1, build requests among them)"
    )
    before = canonical_dump(root)
    server, api = serve_workspace(root)
    urls = [
        "/documents",
        f"/documents/{doc_id}",
        f"/documents/{doc_id}/pages/2",
        f"/documents/{doc_id}/pages/2/image",
        "/build",
        "/methods",
    ]
    lock = threading.Lock()

    def hammer(worker: int) -> None:
        with httpx.Client(headers=AUTH, timeout=60) as http:
            for i in range(per_thread):
                started = time.monotonic()
                if (worker + i) % 10 == 0:
                    response = http.post(f"{api}/build", json={"method": "dense"})
                    ok = response.status_code == 202
                else:
                    response = http.get(api + urls[(worker + i) % len(urls)])
                    ok = response.status_code == 200
                took = time.monotonic() - started
                with lock:
                    result.tried += 1
                    result.slowest_s = max(result.slowest_s, took)
                    if ok:
                        result.absorbed += 1
                    else:
                        result.leaks.append(
                            f"{response.request.method} {response.request.url.path}: {response.status_code}"
                        )

    try:
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(hammer, range(threads)))
        result.notes.append(f"{result.tried} requests in {time.monotonic() - started:.1f} s")
        builds = [j for j in httpx.get(f"{api}/jobs", headers=AUTH, timeout=30).json() if j["kind"] == "build"]
        result.notes.append(f"{len(builds)} build job(s) for {threads * per_thread // 10} build requests")
        deadline = time.monotonic() + 120
        while any(j.get("state") in ("queued", "running") for j in builds) and time.monotonic() < deadline:
            time.sleep(0.5)
            builds = [j for j in httpx.get(f"{api}/jobs", headers=AUTH, timeout=30).json() if j["kind"] == "build"]
    finally:
        server.terminate()
        server.wait(timeout=30)
    return workspace_unchanged(result, root, before)
