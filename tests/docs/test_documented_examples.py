"""Every documented example runs as written (issue 16).

Collects each ``sh``/``bash``, ``python`` and ``toml`` fenced block of README.md and
docs/*.md and runs it against the bundled example document (the 5-page OpenStax excerpt)
and one temporary workspace shared by all commands, in document order:

- shell lines: ``docgraph …`` runs in-process (``docgraph.cli.main``), with ``report.pdf``,
  ``slides.pptx`` and ``scans/`` replaced by the example PDF, ``ws/`` by the workspace and
  ``DOC`` by the example's document id; it must exit 0;
- python blocks run as ``python - < block`` in a subprocess, with the same substitutions;
- toml blocks are written as the workspace's docgraph.toml and must load as settings.

A command that needs a model endpoint or a long run is marked in the document itself, on
the line before its block: ``<!-- docs-test: skip "PREFIX": reason; … -->`` skips the
lines starting with PREFIX, each reported as a skipped test with the reason. A shell line
that is neither ``docgraph`` nor marked fails the test, so nothing is skipped silently.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from docgraph.config import load_settings

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)\s*$")
MARK = re.compile(r"<!--\s*docs-test:(.*?)-->")
SKIP = re.compile(r'skip\s+"([^"]+)"\s*:\s*([^;]+)')
EXAMPLE = "openstax_world_history_v1_excerpt.pdf"
INPUTS = ("report.pdf", "slides.pptx", "scans/")


@dataclass
class Example:
    source: str  # "README.md:40"
    lang: str
    text: str
    skip: str | None = None  # '"PREFIX": reason' as marked in the doc


def _blocks(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marks = MARK.search(previous)
        skips = dict((p.strip(), r.strip()) for p, r in SKIP.findall(marks.group(1))) if marks else {}
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        yield i + 1, match.group(1), lines[i + 1 : end], skips
        i = end + 1


def collect() -> list[Example]:
    examples: list[Example] = []
    for path in DOCS:
        for line_no, lang, body, skips in _blocks(path):
            where = f"{path.relative_to(REPO)}:{line_no}"
            if lang in ("sh", "bash"):
                text = "\n".join(body).replace("\\\n", " ")
                for offset, command in enumerate(re.sub(r"\\\s*\n\s*", " ", text).splitlines()):
                    if not command.strip() or command.lstrip().startswith("#"):
                        continue
                    reason = next(
                        (f'"{prefix}": {r}' for prefix, r in skips.items() if command.strip().startswith(prefix)), None
                    )
                    examples.append(Example(f"{where}+{offset + 1}", "sh", command.strip(), reason))
            elif lang in ("python", "toml"):
                examples.append(Example(where, lang, "\n".join(body)))
    return examples


EXAMPLES = collect()


@dataclass
class Sandbox:
    cwd: Path
    ws: Path
    pdf: Path
    doc_id: str = ""

    def substitute(self, text: str) -> str:
        for name in INPUTS:
            text = re.sub(rf"(?<![\w/.]){re.escape(name)}(?![\w])", str(self.pdf), text)
        text = re.sub(r"(?<![\w/.])ws/", str(self.ws) + "/", text)
        return re.sub(r"\bDOC\b", self.doc_id, text) if self.doc_id else text


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory, shared_data: Path, _openstax_template: Path):
    import shutil

    cwd = tmp_path_factory.mktemp("documented")
    ws = cwd / "ws"
    shutil.copytree(_openstax_template, ws)  # the example added once; `docgraph add` then finds it
    from docgraph import Workspace

    with Workspace(ws) as opened:
        doc_id = opened.documents()[0].id
    return Sandbox(cwd, ws, shared_data / "documents" / EXAMPLE, doc_id)


def test_every_shell_line_is_docgraph_or_marked():
    unknown = [
        f"{e.source}: {e.text}"
        for e in EXAMPLES
        if e.lang == "sh" and e.skip is None and not e.text.startswith("docgraph ")
    ]
    assert not unknown, (
        "documented commands with no rule to run them; mark them in the doc with "
        '<!-- docs-test: skip "PREFIX": reason -->:\n' + "\n".join(unknown)
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.source}-{e.lang}" for e in EXAMPLES])
def test_documented_example_runs(example: Example, sandbox: Sandbox, monkeypatch, capsys):
    if example.skip:
        pytest.skip(f"marked in the doc: {example.skip}")
    for name in [n for n in __import__("os").environ if n.startswith("DOCGRAPH_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(sandbox.cwd)
    text = sandbox.substitute(example.text)
    if example.lang == "toml":
        (sandbox.ws / "docgraph.toml").write_text(text, encoding="utf-8")
        try:
            load_settings(sandbox.ws, environ={})
        finally:
            (sandbox.ws / "docgraph.toml").unlink()
    elif example.lang == "python":
        done = subprocess.run(
            [sys.executable, "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=sandbox.cwd,
            timeout=600,
            env={k: v for k, v in __import__("os").environ.items() if not k.startswith("DOCGRAPH_")},
        )
        assert done.returncode == 0, f"{example.source}:\n{text}\n{done.stderr[-3000:]}"
    elif example.text.startswith("docgraph "):
        from docgraph.cli import main

        argv = shlex.split(text, comments=True)[1:]
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 0, f"{example.source}: {text}\n{captured.out[-2000:]}\n{captured.err[-2000:]}"
