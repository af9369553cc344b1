"""The cover's display line (``documents.cover_text``) and the title a label takes from it:
what a document's first page prints largest names it when its headings do not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docgraph.documents.cover_text import display_line
from docgraph.documents.metadata import better_title


@pytest.fixture(scope="module")
def covers(shared_data: Path) -> Path:
    folder = shared_data / "mmlongbench_doc" / "documents"
    if not folder.is_dir():
        pytest.skip("the MMLongBench-Doc documents are not in the shared data")
    return folder


def test_the_largest_type_of_a_cover_is_its_display_line(covers: Path):
    # the layout merges this paper's title with its authors into one paragraph; the type sizes do not
    title = "Fact-Checking Complex Claims with Program-Guided Reasoning"
    assert display_line(covers / "2023.acl-long.386.pdf") == title
    # a title in small capitals comes as many spans; the arXiv stamp in the margin is rotated, no title
    assert display_line(covers / "2305.13186v3.pdf") == (
        "SCITAB: A Challenging Benchmark for Compositional Reasoning and Claim Verification on Scientific Tables"
    )
    assert display_line(covers / "2024.ug.eprospectus.pdf") == "Undergraduate Prospectus"  # nothing else on it


def test_a_cover_without_a_prominent_line_has_none(covers: Path, tmp_path: Path):
    import pymupdf

    # a report whose title is a picture: its largest text is a byline, as large as the text
    assert display_line(covers / "PG_2020.03.09_US-Germany_FINAL.pdf") is None
    flat = tmp_path / "flat.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page()
        for i, line in enumerate(["Quarterly update", "Sales rose in every region.", "Costs fell."]):
            page.insert_text((72, 100 + 20 * i), line, fontsize=11)
        doc.save(flat)
    assert display_line(flat) is None, "one size throughout: nothing stands out"
    assert display_line(tmp_path / "missing.pdf") is None


def test_the_display_line_titles_a_document_whose_headings_name_none():
    display = "Fact-Checking Complex Claims with Program-Guided Reasoning"
    found = better_title("Abstract", ["Abstract", "1 Introduction"], "2023.acl-long.386", display)
    assert (found.value, found.source) == (display, "cover")
    assert better_title("Fact-Checking", [], "x", "Other words").value == "Fact-Checking", "a real title stays"
    assert better_title("Contents", [], "nova_y70", "User Guide").value == "nova y70", "a kind of document names none"


def test_ingest_keeps_the_display_line_so_a_later_guess_needs_no_file(covers: Path, tmp_path: Path, monkeypatch):
    from docgraph import Workspace
    from docgraph.documents import metadata, metadata_store
    from docgraph.testing.files import excerpt_pdf

    paper = excerpt_pdf(covers / "2023.acl-long.386.pdf", (1, 2), tmp_path / "2023.acl-long.386.pdf")
    with Workspace(tmp_path / "ws") as ws:
        ws.add([paper])
        doc = ws.documents()[0]
        label = ws.metadata()[doc.id]
        assert label.title == "Fact-Checking Complex Claims with Program-Guided Reasoning"
        assert label.hints["display"] == label.title
        paper.unlink()  # the file is gone; the rules change, so the label is guessed again
        monkeypatch.setattr(metadata, "GUESSER", metadata.GUESSER + 1)
        again = metadata_store.ensure_metadata(ws.store, [doc])[doc.id]
        assert again.guesser == metadata.GUESSER and again.title == label.title


def test_a_label_guessed_before_hints_were_kept_reads_the_file_once(covers: Path, tmp_path: Path):
    from docgraph import Workspace
    from docgraph.documents import metadata_store

    paper = shutil.copy(covers / "2024.ug.eprospectus.pdf", tmp_path / "2024.ug.eprospectus.pdf")
    with Workspace(tmp_path / "ws") as ws:
        ws.add([Path(paper)])
        doc = ws.documents()[0]
        old = ws.metadata()[doc.id].model_copy(
            update={"guesser": metadata_store.HINTS_KEPT - 1, "hints": {}, "title": ""}
        )
        ws.store.put_record(metadata_store.NAMESPACE, doc.id, old.model_dump(), doc_id=doc.id)
        assert metadata_store.ensure_metadata(ws.store, [doc])[doc.id].title == "Undergraduate Prospectus"


def test_a_title_printed_as_a_picture_is_read_from_the_covers_citation_line():
    from docgraph.documents.metadata import cited_title

    # Pew Research Center's covers draw the title as outlines; the citation line spells it
    cover = (
        "FOR MEDIA OR OTHER INQUIRIES:\nRECOMMENDED CITATION\nPew Research Center, March, 2020, "
        "\u201cAmericans and Germans Differ in Their Views of Each Other and the World\u201d\n2"
    )
    title = "Americans and Germans Differ in Their Views of Each Other and the World"
    assert cited_title(cover) == title
    assert better_title("RECOMMENDED CITATION", ["About Pew Research Center"], "PG_2020", None, title).value == title
    assert cited_title("Suggested citation: Smith, J. (2021). \u201cWater.\u201d Paris: OECD.") is None, "one word"
    assert cited_title("Cite as: 2012 WL 3860732 (Del.Super.)") is None, "a citation that quotes no title"


def test_a_pew_report_is_titled_by_its_citation_line(covers: Path, tmp_path: Path):
    from docgraph import Workspace
    from docgraph.testing.files import excerpt_pdf

    name = "PG_2020.03.09_US-Germany_FINAL.pdf"
    report = excerpt_pdf(covers / name, (1, 2), tmp_path / name)
    with Workspace(tmp_path / "ws") as ws:
        ws.add([report])
        label = next(iter(ws.metadata().values()))
    assert label.title == "Americans and Germans Differ in Their Views of Each Other and the World"
    assert "PG 2020.03.09 US-Germany FINAL" not in label.names(), "a long file name is no name"
