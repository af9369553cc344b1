"""The token on every route, the login form, cross-origin rules, and no file outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from server_workspace import DOC_ID, TOKEN, page_url

from docgraph.server.auth import COOKIE_NAME

PATH_VALUES = {"doc_id": DOC_ID, "number": "1", "component_id": "T1", "job_id": "build-1"}
EXTRA_PARAMS = {"/api/graph": "?entity=e:rice", "/api/documents/{doc_id}/pages/{number}/highlight": "?components=P1"}


def every_route(client) -> list[tuple[str, str]]:
    """(method, url) for every documented route, with real path values, plus the page,
    static files, images and the schema itself."""
    routes = [
        ("GET", "/"),
        ("GET", "/static/app.css"),
        ("GET", "/static/vendor/cytoscape.min.js"),
        ("GET", "/openapi.json"),
        ("GET", "/static/js/main.js"),
    ]
    schema = client.get("/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    for path, methods in schema["paths"].items():
        if path == "/login":
            continue
        url = path.format(**PATH_VALUES) + EXTRA_PARAMS.get(path, "")
        routes += [(m.upper(), url) for m in methods]
    return routes


def test_every_route_needs_the_token(token_client):
    routes = every_route(token_client)
    assert len(routes) >= 22
    for method, url in routes:
        response = token_client.request(method, url)
        assert response.status_code == 401, (method, url, response.status_code)
        assert response.headers["www-authenticate"].startswith("Bearer")
        wrong = token_client.request(method, url, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401, (method, url)


def test_every_get_route_answers_with_the_token(token_client):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for method, url in every_route(token_client):
        if method != "GET" or "/jobs/" in url:
            continue
        response = token_client.get(url, headers=auth)
        assert response.status_code == 200, (url, response.status_code, response.text[:200])


def test_token_as_query_parameter_and_cookie(token_client):
    image = page_url(1, "/image")
    assert token_client.get(image, params={"token": TOKEN}).status_code == 200
    assert token_client.get(image, params={"token": "x"}).status_code == 401
    token_client.cookies.set(COOKIE_NAME, TOKEN)
    assert token_client.get(image).status_code == 200
    assert token_client.get("/api/documents").status_code == 200


def test_link_with_token_sets_the_cookie_and_cleans_the_url(token_client):
    response = token_client.get("/", params={"token": TOKEN}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert f"{COOKIE_NAME}={TOKEN}" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert token_client.get("/").status_code == 200  # the client kept the cookie


def test_login_form(token_client):
    page = token_client.get("/", headers={"Accept": "text/html"})
    assert page.status_code == 401 and 'id="login-form"' in page.text  # a browser gets the form
    assert token_client.get("/login").status_code == 200
    wrong = token_client.post("/login", data={"token": "guess"}, follow_redirects=False)
    assert wrong.status_code == 401 and "not right" in wrong.text
    assert COOKIE_NAME not in token_client.cookies
    right = token_client.post("/login", data={"token": TOKEN}, follow_redirects=False)
    assert right.status_code == 303 and COOKIE_NAME in right.headers["set-cookie"]
    assert token_client.get("/api/documents").status_code == 200
    huge = token_client.post(
        "/login", content=b"token=" + b"x" * 10_000, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert huge.status_code == 413


def test_without_a_token_everything_is_open_and_login_redirects(client):
    assert client.get("/api/documents").status_code == 200
    assert client.get("/login", follow_redirects=False).status_code == 303


# ---------------------------------------------------------------------- cross-origin
def test_no_cors_by_default(client):
    response = client.get("/api/documents", headers={"Origin": "http://evil.example"})
    assert response.status_code == 200 and "access-control-allow-origin" not in response.headers
    preflight = client.options(
        "/api/ask", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_only_for_the_given_origin(make_client):
    client = make_client(cors_origins=["http://localhost:3000"])
    ok = client.get("/api/documents", headers={"Origin": "http://localhost:3000"})
    assert ok.headers["access-control-allow-origin"] == "http://localhost:3000"
    other = client.get("/api/documents", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    assert (
        client.post("/api/build", json={"method": "bm25"}, headers={"Origin": "http://localhost:3000"}).status_code
        == 202
    )


def test_writes_from_another_origin_are_refused(client):
    for origin in ("http://evil.example", "null"):
        response = client.post("/api/build", json={"method": "bm25"}, headers={"Origin": origin})
        assert response.status_code == 403, origin
    assert client.delete(f"/api/documents/{DOC_ID}", headers={"Origin": "http://evil.example"}).status_code == 403
    same = client.post("/api/build", json={"method": "bm25"}, headers={"Origin": "http://testserver"})
    assert same.status_code == 202


def test_allowed_hosts_refuse_other_host_headers(make_client):
    client = make_client(allowed_hosts=["127.0.0.1", "localhost"])
    assert client.get("/api/documents").status_code == 400  # Host: testserver
    assert client.get("/api/documents", headers={"Host": "localhost"}).status_code == 200


# ---------------------------------------------------------------------- traversal
@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n" + b"TOP-SECRET" * 10)
    return secret


def tamper_page(workspace, **changes) -> None:
    page = workspace.store.get_page(DOC_ID, 1)
    workspace.store.put_page(page.model_copy(update=changes))


@pytest.mark.parametrize(
    "bad_path",
    [
        "../secret.png",
        "pages/../../secret.png",
        "{abs}",
        "/etc/passwd",
        "../../../../../../etc/passwd",
        "C:\\Windows\\win.ini",
        "pages/\x00.png",
        "",
    ],
)
def test_tampered_image_paths_never_leave_the_workspace(client, workspace, outside_file, bad_path):
    tamper_page(workspace, image_path=bad_path.replace("{abs}", str(outside_file)))
    for url in (page_url(1, "/image"), page_url(1, "/highlight") + "?components=P1"):
        response = client.get(url)
        assert response.status_code == 404, (url, response.status_code)
        assert b"TOP-SECRET" not in response.content and b"root:" not in response.content


def test_tampered_crop_path_and_symlink_out_are_refused(client, workspace, outside_file):
    page = workspace.store.get_page(DOC_ID, 1)
    table = page.component("T1")
    table.crop_path = str(outside_file)
    workspace.store.put_page(page)
    assert client.get(page_url(1, "/components/T1/crop")).status_code == 404
    link = workspace.root / "pages" / DOC_ID / "link.png"
    os.symlink(outside_file, link)
    tamper_page(workspace, image_path=f"pages/{DOC_ID}/link.png")
    response = client.get(page_url(1, "/image"))
    assert response.status_code == 404 and b"TOP-SECRET" not in response.content


@pytest.mark.parametrize(
    "url",
    [
        "/static/../pyproject.toml",
        "/static/%2e%2e/%2e%2e/api.py",
        "/static/..%2f..%2fapi.py",
        "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fpyproject.toml",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/api/documents/..%2F..%2Fetc%2Fpasswd/pages/1/image",
        "/api/documents/%2Fetc%2Fpasswd/pages/1/image",
        f"/api/documents/{DOC_ID}/pages/1/components/..%2F..%2F..%2Fsecret/crop",
        "/api/documents/../../etc/passwd",
        "/../../etc/passwd",
    ],
)
def test_traversal_urls_find_nothing(client, url):
    response = client.get(url)
    assert response.status_code in (400, 404, 405), (url, response.status_code)
    body = response.content
    assert b"root:" not in body and b"[project]" not in body and b"def create_app" not in body


def test_workspace_file_unit(tmp_path):
    from fastapi import HTTPException

    from docgraph.server.files import workspace_file

    root = tmp_path / "ws"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "a.png").write_bytes(b"x")
    assert workspace_file(root, "pages/a.png") == (root / "pages" / "a.png").resolve()
    assert workspace_file(root, "pages/../pages/a.png").name == "a.png"  # stays inside: fine
    for bad in (
        "pages",
        "../ws/pages/a.png/..",
        "..",
        "/pages/a.png",
        "\\\\server\\share\\a.png",
        "D:a.png",
        None,
        "pages/missing.png",
    ):
        with pytest.raises(HTTPException) as info:
            workspace_file(root, bad)
        assert info.value.status_code == 404, bad
