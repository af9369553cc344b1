"""A method from outside docgraph's source tree (``docgraph_echo``, installed for the run as pip
would: a package and a dist-info whose ``docgraph.methods`` entry point names it) is found,
built, asked with its own modes and settings section, counted by ``graph stats``, listed by
``docgraph status`` and by the web app's ``/api/methods`` — with no line of docgraph naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import docgraph_echo

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "world_history_excerpt.pdf"

DRIVER = textwrap.dedent(
    """
    import json, sys
    from contextlib import redirect_stdout
    from io import StringIO
    from docgraph.cli import main

    ws = sys.argv[1]
    out = {}

    def run(*argv):
        buffer = StringIO()
        with redirect_stdout(buffer):
            code = main(["--workspace", ws, *argv])
        return code, buffer.getvalue()

    out["add"] = run("add", sys.argv[2])[0]
    out["build"] = run("build", "--method", "echo")
    out["status"] = run("status")
    out["ask"] = run("ask", "Which university is OpenStax part of?", "-m", "echo", "--mode", "loud", "--json")
    out["bad_mode"] = run("ask", "anything", "-m", "echo", "--mode", "multi_hop")
    out["stats"] = run("graph", "stats", "-m", "echo", "--json")
    out["no_export"] = run("graph", "export", "-m", "echo", "--out", ws + "/g.json")
    from fastapi.testclient import TestClient
    from docgraph import Workspace
    from docgraph.server import create_app
    with Workspace(ws) as opened:
        out["methods"] = TestClient(create_app(opened)).get("/api/methods").json()
    print("RESULT " + json.dumps(out))
    """
)


def run_driver(site: Path, ws: Path, toml: str | None = None) -> tuple[dict | None, str]:
    ws.mkdir(parents=True, exist_ok=True)
    if toml is not None:
        (ws / "docgraph.toml").write_text(toml, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCGRAPH_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(ws), str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=600
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    return (json.loads(lines[-1][7:]) if lines else None), done.stderr


def test_an_installed_method_is_found_configured_and_shown_everywhere(tmp_path):
    site = docgraph_echo.install(tmp_path / "site")
    result, err = run_driver(site, tmp_path / "ws", "[echo]\ntop_pages = 2\ngreeting = 'hello'\n")
    assert result is not None, err[-3000:]
    assert result["add"] == 0 and result["build"][0] == 0
    assert "echo" in result["status"][1]
    code, text = result["ask"]
    answer = json.loads(text)
    assert code == 0 and answer["method"] == "echo" and answer["mode"] == "loud"
    assert answer["answer"].startswith("HELLO: PAGE "), "its [echo] settings and its loud mode"
    assert len(answer["evidence_pages"]) == 2 and answer["citations"]
    assert result["bad_mode"][0] == 1 and "echo has no mode 'multi_hop'; use one of auto, quiet, loud" in err
    assert result["stats"][0] == 0 and json.loads(result["stats"][1]) == {"pages": 5}
    assert result["no_export"][0] == 1 and "echo has no graph export; methods with one: kg4vd" in err
    listed = {m["name"]: m for m in result["methods"]}
    assert listed["echo"] == {
        "name": "echo",
        "label": "Echo (test plug-in)",
        "modes": ["auto", "quiet", "loud"],
        "graph": False,  # no GraphBrowse capability: no graph panel
        "scoped": False,  # no ScopedRetrieval capability: the ask view offers no document chooser
    }
    assert [m["name"] for m in result["methods"]][:2] == ["kg4vd", "hvm"]


def test_its_settings_section_is_checked_and_unknown_sections_refused(tmp_path):
    site = docgraph_echo.install(tmp_path / "site")
    result, err = run_driver(site, tmp_path / "bad", "[echo]\ntop_pages = 0\n")
    assert result is None or result["add"] != 0
    assert "echo.top_pages: Input should be greater than or equal to 1" in err
    result, err = run_driver(site, tmp_path / "typo", "[echoo]\ntop_pages = 2\n")
    assert "unknown settings section [echoo]" in err and "echo" in err.split("sections:")[-1]


def test_without_the_package_the_section_is_unknown(tmp_path):
    result, err = run_driver(tmp_path / "empty-site", tmp_path / "ws", "[echo]\ntop_pages = 2\n")
    assert "unknown settings section [echo]" in err
