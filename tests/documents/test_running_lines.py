"""Running lines (``documents.running_lines``) and what the label guesser makes of them: a
report's running title, a publisher's footer, a filing's statements' heading."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.documents.metadata import _Found, organisation_line, running_title, title_field
from docgraph.documents.running_lines import RunningLine, clean_line, running_lines, sample_numbers
from docgraph.testing.files import excerpt_pdf
from docgraph.types import BBox, Component, ComponentKind, Page


def page(number: int, *lines: tuple[str, float]) -> Page:
    """A 600×800 page with one component per (text, top) line."""
    components = [
        Component(
            id=f"P{i + 1}",
            kind=ComponentKind.PARAGRAPH,
            bbox=BBox(x0=50, y0=top, x1=550, y1=top + 12),
            order=i,
            text=text,
        )
        for i, (text, top) in enumerate(lines)
    ]
    return Page(doc_id="d", number=number, width=600, height=800, image_path="", dpi=72, components=components)


def report(pages: int) -> list[Page]:
    return [
        page(
            n,
            (f"{n} The Limes Residential Home Inspection report 12/05/2015", 20),  # number and date around it
            ("A paragraph of body text that the page does not repeat " * 2, 300),
            ("Residents said the staff were kind", 400),  # in the body: no running line however often
            (f"Page {n} of {pages}", 780),
            ("Table of Contents", 790),
            ("Chapter 2 Care" if n % 4 == 0 else "www.example.org", 760),
        )
        for n in range(1, pages + 1)
    ]


def test_lines_repeated_in_the_margins_are_read_without_their_numbers():
    found = running_lines(report(12))
    assert [line.text for line in found] == ["The Limes Residential Home Inspection report"]
    assert found[0].share == 1.0
    assert clean_line("17 | Annual Report 2021 | 18") == "Annual Report 2021"
    # too few pages, or a line on too few of them, is no running line
    assert running_lines(report(2)) == []
    mixed = report(4) + [page(n, ("Another heading", 20)) for n in range(5, 30)]
    assert [line.text for line in running_lines(mixed)] == ["Another heading"]  # the Limes on 4 of 29 pages


def test_a_long_document_is_sampled_from_first_to_last_page():
    assert sample_numbers(range(1, 11), size=40) == list(range(1, 11))
    picked = sample_numbers(range(1, 501), size=40)
    assert len(picked) == 40 and picked[0] == 1 and picked[-1] == 500


def test_organisations_are_read_from_names_copyright_lines_and_statement_headings():
    assert organisation_line("THE COCA-COLA COMPANY AND SUBSIDIARIES") == "THE COCA-COLA COMPANY"
    assert organisation_line("Copyright © Huawei Technologies Co., Ltd.") == "Huawei Technologies Co., Ltd."
    assert organisation_line("© 2021 Acme Corporation. All rights reserved.") == "Acme Corporation"
    assert organisation_line("© Disciplined Agile Consortium") == "Disciplined Agile Consortium"
    assert organisation_line("About Pew Research Center") == "Pew Research Center"
    # a heading that is no name, or a phrase that ends as one
    assert organisation_line("Notes to Consolidated Financial Statements") is None
    assert organisation_line("Executive Officers of the Company") is None
    assert organisation_line("Residents said the staff were kind") is None


def test_running_lines_name_a_document_its_file_name_or_cover_names_poorly():
    running = [
        RunningLine("PEW RESEARCH CENTER", 1.0),  # an organisation, not a title
        RunningLine("Published as a conference paper at ICLR 2024", 1.0),  # a venue
        RunningLine("Object Storage Service Product Introduction", 0.95),
        RunningLine("Camera and Gallery", 0.3),  # a chapter's header: too few pages
    ]
    from_file = running_title(_Found("obs productdesc en", "file name"), running)
    assert (from_file.value, from_file.source) == ("Object Storage Service Product Introduction", "running header")
    extended = running_title(_Found("Product Introduction", "ingest"), running)
    assert extended.value == "Object Storage Service Product Introduction"
    # a title the running line does not hold, or extends by one word only, stays
    assert running_title(_Found("Views of Government", "cover"), running).value == "Views of Government"
    one_word = [RunningLine("MMDetection, Release 2.18.0", 0.9)]  # a version number is no word
    assert running_title(_Found("MMDetection", "ingest"), one_word).value == "MMDetection"
    assert running_title(_Found("x", "file name"), running[:2]).value == "x"  # nothing better: the file's name


def test_a_running_line_of_fields_offers_its_title_field():
    footer = (
        "Leon Herrmann & Stefan Kollmannsberger || Deep Learning in Computational Mechanics"
        " || Bauhaus-Universität Weimar"
    )
    assert title_field(footer) == "Deep Learning in Computational Mechanics"
    assert title_field("A. Author (MIT) | Kernel methods for graphs | 2021") == "Kernel methods for graphs"
    assert title_field("Annual Report 2020 | ACCIONA") == "Annual Report 2020"
    assert title_field("Sustainability Report · 2022 · Acme Inc.") == "Sustainability Report"  # a year, a company
    # no field is a title (an organisation and a date), or there are no fields: the line as it is
    assert title_field("Pew Research Center | March 2020") == "Pew Research Center | March 2020"
    assert title_field("Object Storage Service Product Introduction") == "Object Storage Service Product Introduction"
    titled = running_title(_Found("dl comp mech slides ch3 1", "file name"), [RunningLine(footer, 1.0)])
    assert (titled.value, titled.source) == ("Deep Learning in Computational Mechanics", "running header")


def test_a_slide_deck_is_titled_by_its_footers_title_field(shared_data: Path, tmp_path: Path):
    from docgraph import Workspace

    source = shared_data / "documents" / "dl_comp_mech_slides_ch3_1.pdf"
    pdf = excerpt_pdf(source, range(1, 7), tmp_path / "dl_comp_mech_slides_ch3_1.pdf")
    with Workspace(tmp_path / "ws") as ws:
        ws.add([pdf])
        (label,) = ws.metadata().values()
    assert (label.title, label.sources["title"]) == ("Deep Learning in Computational Mechanics", "running header")
    assert label.kind == "slides"


def test_a_filing_whose_cover_prints_its_name_as_a_logo_is_named_by_its_statements(shared_data: Path, tmp_path: Path):
    from docgraph import Workspace

    source = shared_data / "financebench" / "pdfs" / "COCACOLA_2017_10K.pdf"
    if not source.is_file():
        pytest.skip("the FinanceBench filings are not in the shared data")
    pdf = excerpt_pdf(source, [1, 3, 4, 75, 76], tmp_path / "annual-filing.pdf")  # a file name that names no one
    with Workspace(tmp_path / "ws") as ws:
        ws.add([pdf])
        (label,) = ws.metadata().values()
    assert (label.organisation, label.sources["organisation"]) == ("THE COCA-COLA COMPANY", "statements")
    assert (label.period, label.kind) == ("FY2017", "10-K")
    assert label.title == "THE COCA-COLA COMPANY Form 10-K FY2017"


def test_a_manual_is_titled_by_its_running_header(shared_data: Path, tmp_path: Path):
    from docgraph import Workspace

    source = shared_data / "mmlongbench_doc" / "documents" / "obs-productdesc-en.pdf"
    if not source.is_file():
        pytest.skip("the MMLongBench-Doc documents are not in the shared data")
    pdf = excerpt_pdf(source, range(1, 9), tmp_path / "obs-productdesc-en.pdf")
    with Workspace(tmp_path / "ws") as ws:
        ws.add([pdf])
        (label,) = ws.metadata().values()
    assert (label.title, label.sources["title"]) == ("Object Storage Service Product Introduction", "running header")
    assert label.organisation.lower() == "huawei technologies co., ltd."
