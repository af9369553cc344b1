"""``--workspace`` is accepted before and after the command, as the README writes it."""

from __future__ import annotations

import os

from docgraph.cli import build_parser, main


def test_workspace_after_the_command_wins(tmp_path):
    parser = build_parser()
    assert parser.parse_args(["ls", "--workspace", "a"]).workspace == "a"
    assert parser.parse_args(["--workspace", "b", "ls"]).workspace == "b"
    assert parser.parse_args(["--workspace", "b", "ls", "-w", "c"]).workspace == "c"
    assert parser.parse_args(["graph", "stats", "--workspace", "d"]).workspace == "d"
    assert parser.parse_args(["ls"]).workspace == os.environ.get("DOCGRAPH_WORKSPACE", ".docgraph")


def test_a_command_with_workspace_after_it_uses_that_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["ls", "--workspace", str(tmp_path / "ws")]) == 0
    assert (tmp_path / "ws").is_dir() and not (tmp_path / ".docgraph").exists()
