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
    (tmp_path / "ws").mkdir()
    assert main(["ls", "--workspace", str(tmp_path / "ws")]) == 0
    assert "no documents in" in capsys.readouterr().out and not (tmp_path / ".docgraph").exists()


def test_only_commands_that_write_create_a_workspace(tmp_path, monkeypatch, capsys, shared_data):
    """Read-only commands outside a workspace say there is none and leave nothing behind (issue 16)."""
    monkeypatch.chdir(tmp_path)
    for argv in (
        ["ls"],
        ["status"],
        ["usage"],
        ["graph", "stats"],
        ["ask", "anything"],
        ["show", "x", "1"],
        ["rm", "x"],
        ["ls", "-w", "elsewhere"],
    ):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert "no workspace at" in err and "docgraph add FILE" in err, (argv, err)
        assert not list(tmp_path.iterdir()), argv
    for argv in (["--help"], ["eval", "--help"], ["ask", "--help"]):
        try:
            main(argv)
        except SystemExit:
            pass
        assert not list(tmp_path.iterdir()), argv
    # eval run outside a workspace: its corpora go under --out, no .docgraph
    assert (
        main(
            [
                "eval",
                "kg4vd_test",
                str(shared_data / "kg4vd_test"),
                "--methods",
                "bm25",
                "--limit",
                "1",
                "--retrieval-only",
                "--out",
                "results",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]
    assert (tmp_path / "results" / "eval-corpora").is_dir()
    capsys.readouterr()
    assert main(["add", str(shared_data / "documents" / "openstax_world_history_v1_excerpt.pdf")]) == 0
    assert (tmp_path / ".docgraph").is_dir()


def test_add_prints_the_title_that_ls_shows(tmp_path, capsys, shared_data):
    """The JSTOR report's first heading is "WHITE PAPER", a kind of document: its label's title
    is the one `add` and `ls` both print."""
    report = shared_data / "documents" / "jstor_open_access_latin_america_report.pdf"
    ws = str(tmp_path / "ws")
    assert main(["add", str(report), "--workspace", ws]) == 0
    added = capsys.readouterr().out
    assert main(["ls", "--workspace", ws]) == 0
    listed = capsys.readouterr().out
    assert "The Impact of Open Access Latin American Scholarship" in added and "WHITE PAPER" not in added
    assert "The Impact of Open Access Latin American Scholarship: Digitizing the Backlist" in listed, "its subtitle"
    assert main(["add", str(report), "--workspace", ws]) == 0
    assert "present" in (again := capsys.readouterr().out) and "The Impact of Open Access" in again
