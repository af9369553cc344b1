"""Documents know what they are (``documents.metadata``): title, organisation, period and
kind guessed from real covers and file names, kept in the store, corrected by the user."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from docgraph.documents.file_names import file_name_fields
from docgraph.documents.metadata import (
    better_title,
    cover_kind,
    cover_organisation,
    cover_period,
    cover_ticker,
    subtitled,
)


def cover_text(path: Path) -> str:
    import pymupdf

    with pymupdf.open(path) as doc:
        return doc[0].get_text()


@pytest.fixture(scope="module")
def filings(shared_data: Path) -> Path:
    folder = shared_data / "financebench" / "pdfs"
    if not folder.is_dir():
        pytest.skip("the FinanceBench filings are not in the shared data")
    return folder


def test_file_names_give_name_period_and_kind():
    assert file_name_fields("3M_2018_10K") == ("3M", "2018", "10-K")
    assert file_name_fields("JPMORGAN_2021Q1_10Q") == ("JPMORGAN", "Q1 2021", "10-Q")
    assert file_name_fields("AMERICANWATERWORKS_2022_10K") == ("AMERICANWATERWORKS", "2022", "10-K")
    assert file_name_fields("PEPSICO_2023_8K_dated-2023-05-30") == ("PEPSICO", "2023", "8-K")
    assert file_name_fields("AMCOR_2023Q4_EARNINGS") == ("AMCOR", "Q4 2023", "earnings release")
    assert file_name_fields("Nestle_2022_ESG") == ("Nestle", "2022", "sustainability report")
    assert file_name_fields("SIEMENS_2021_AR") == ("SIEMENS", "2021", "annual report")
    # initials name no one; a date is a period; an arXiv id is a paper; a bare name says nothing
    assert file_name_fields("PH_2016.06.08_Economy-Final") == ("", "2016", "")
    assert file_name_fields("2310.05634v2") == ("", "", "paper")
    assert file_name_fields("report") == ("", "", "")


def test_file_names_as_people_write_them_give_name_period_and_kind():
    # hyphens part a name with no underscores or spaces; form numbers and dates stay whole
    assert file_name_fields("apple-2023-annual-report") == ("apple", "2023", "annual report")
    assert file_name_fields("acme-2q23-earnings-release") == ("acme", "Q2 2023", "earnings release")
    assert file_name_fields("globex-10-K-2021") == ("globex", "2021", "10-K")
    assert file_name_fields("Coca-Cola_2017_10K") == ("Coca-Cola", "2017", "10-K")  # else a hyphen joins
    # fiscal years and quarters written in the ways filers and analysts write them
    assert file_name_fields("nvidia_fy24_10k") == ("nvidia", "2024", "10-K")
    assert file_name_fields("Acme Q2 2024 10-Q") == ("Acme", "Q2 2024", "10-Q")
    assert file_name_fields("Initech_Q3FY23_slides") == ("Initech", "Q3 2023", "slides")
    # a kind in two words is the kind, not part of the name
    assert file_name_fields("Tesla_Impact_Report_2022") == ("Tesla", "2022", "sustainability report")
    assert file_name_fields("acciona_sustainability_report_2020_p1") == ("acciona", "2020", "sustainability report")
    # a lower-case code before the words is no name; initials are left out of one
    assert file_name_fields("dl_comp_mech_slides_ch3_1") == ("", "", "slides")
    assert file_name_fields("AB_InBev_2021_AR") == ("InBev", "2021", "annual report")
    assert file_name_fields("Independents-Report") == ("", "", "")


@pytest.mark.parametrize(
    "name, organisation, period, kind, ticker",
    [
        ("3M_2018_10K.pdf", "3M COMPANY", "FY2018", "10-K", None),  # no "(Exact name of registrant)" line
        ("WALMART_2020_10K.pdf", "WALMART INC.", "FY2020", "10-K", "WMT"),  # fiscal year ending in January
        ("JPMORGAN_2021Q1_10Q.pdf", "JPMorgan Chase & Co.", "Q1 2021", "10-Q", "JPM"),  # the date a line below
        ("AMD_2015_10K.pdf", "ADVANCED MICRO DEVICES, INC.", "FY2015", "10-K", None),
        ("COCACOLA_2017_10K.pdf", None, "FY2017", "10-K", None),  # the name a logo: the line above is no name
        ("BOEING_2022_10K.pdf", "THE BOEING COMPANY", "FY2022", "10-K", "BA"),  # the column heads below the row
        ("CVSHEALTH_2022_10K.pdf", "CVS HEALTH CORPORATION", "FY2022", "10-K", "CVS"),
    ],
)
def test_a_filings_cover_names_registrant_period_form_and_symbol(
    filings: Path, name, organisation, period, kind, ticker
):
    text = cover_text(filings / name)
    assert (cover_organisation(text).value if cover_organisation(text) else None) == organisation
    assert cover_period(text).value == period
    assert cover_kind(text, 0.0).value == kind
    assert (cover_ticker(text).value if cover_ticker(text) else None) == ticker


def test_a_symbol_in_a_table_of_the_cover_is_read_cell_by_cell():
    text = (
        "Trading Symbol(s) | Name of each exchange on which registered\n"
        "Common Stock, par value $0.10 per share | WMT | NYSE\n1.900% Notes Due 2022 | WMT22 | NYSE"
    )
    assert cover_ticker(text).value == "WMT"
    assert cover_ticker("Name of each exchange | NYSE") is None


def test_a_symbol_is_read_from_the_row_of_its_exchange_and_never_past_the_listed_securities():
    """The row before its column heads ("Class B Common Stock NKE New York Stock Exchange
    (Title of each class) (Trading symbol) …"), and not the check box after the table."""
    text = (
        "SECURITIES REGISTERED PURSUANT TO SECTION 12(B) OF THE ACT:\nClass B Common Stock\nNKE\n"
        "New York Stock Exchange\n(Title of each class)\n(Trading symbol)\n(Name of each exchange on which "
        "registered)\nSECURITIES REGISTERED PURSUANT TO SECTION 12(G) OF THE ACT:\nNONE\nIndicate by check mark:\nYES"
    )
    assert cover_ticker(text).value == "NKE"
    without_row = text.replace("NKE\n", "")
    assert cover_ticker(without_row) is None, "a check box's YES is no symbol"


def test_a_report_cover_gives_its_date_and_kind():
    text = "Pew Research Center\nJune 8, 2016\nFOR RELEASE\nMore Americans say the economy is improving\n"
    assert cover_organisation(text).value == "Pew Research Center"
    assert cover_period(text).value == "2016"
    # a month and year alone (the St Mary Witney audit's cover), but not a chart's axis of them
    assert cover_period("St Mary the Virgin, Witney Social Audit January 2012").value == "2012"
    axis = "Sessions 5,000\nJuly 2011 January 2012 July 2012 January 2013\nFriends of Caltrain June 2015"
    assert cover_period(axis).value == "2015"
    assert cover_period("July 2011 January 2012 July 2012") is None
    assert cover_kind("Sustainability Report 2020\nACCIONA", 0.0).value == "sustainability report"
    assert cover_kind("Chapter 3\nThe derivative", 0.9).value == "slides"  # landscape pages
    assert cover_kind("Chapter 3\nThe derivative", 0.1) is None
    # landscape pages that hold paragraphs are a report laid out sideways, not slides
    assert cover_kind("Chapter 3\nThe derivative", 0.9, words_per_page=320) is None
    assert cover_kind("Chapter 3\nThe derivative", 0.9, words_per_page=95).value == "slides"
    # the regulator on every filing's cover is no organisation of the document
    assert cover_organisation("UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nWashington") is None


def test_a_display_line_that_announces_a_subtitle_gets_it():
    cover = "WHITE PAPER\nThe Impact of Open Access:  Digitizing the Backlist\nJohn Kiplinger"
    assert subtitled("The Impact of Open Access:", cover) == "The Impact of Open Access: Digitizing the Backlist"
    assert subtitled("The Impact of Open Access:", "The Impact of Open Access:\nJohn Kiplinger").endswith(":")
    assert subtitled("Annual Report 2020", "Annual Report 2020: ours") == "Annual Report 2020", "no colon: as it is"


def test_a_title_that_names_no_document_is_replaced():
    assert (
        better_title("Contents:", ["Contents:", "Your guide to NHS services"], "nhs").value
        == "Your guide to NHS services"
    )
    assert (
        better_title("PG_2020.03.09_US-Germany_FINAL", [], "PG_2020.03.09_US-Germany_FINAL").value
        == "PG 2020.03.09 US-Germany FINAL"
    )
    # a heading that names a kind of document, not which one
    white = better_title("WHITE PAPER", ["WHITE PAPER", "The Impact of Open Access Scholarship"], "jstor_report")
    assert (white.value, white.source) == ("The Impact of Open Access Scholarship", "cover")
    kept = better_title("Americans and Germans differ", ["Contents"], "x")
    assert (kept.value, kept.source) == ("Americans and Germans differ", "ingest")
    # a numbered section or a paper's section heading is no document's title …
    paper = better_title("Abstract", ["Abstract", "1 Introduction", "2 Related Work"], "2023.acl-long.386")
    assert (paper.value, paper.source) == ("2023.acl-long.386", "file name")
    assert better_title("Terminology", ["Terminology", "II. Methods", "Latinos see the economy"], "x").value == (
        "Latinos see the economy"
    )
    # … unless the file name is a bare digest: then the section says more
    digest = "7c3f6204b3241f142f0f8eb8e1fefe7a"
    assert better_title("I. Ruddertowne", [], digest).value == "I. Ruddertowne"


@pytest.fixture(scope="module")
def two_filings(tmp_path_factory, filings: Path) -> Path:
    """A workspace with the first two pages of two real filings (names kept)."""
    import pymupdf

    from docgraph import Workspace

    tmp = tmp_path_factory.mktemp("two_filings")
    for name in ("3M_2018_10K.pdf", "JPMORGAN_2021Q1_10Q.pdf"):
        with pymupdf.open(filings / name) as whole, pymupdf.open() as part:
            part.insert_pdf(whole, from_page=0, to_page=1)
            part.save(tmp / name)
    with Workspace(tmp / "ws") as ws:
        ws.add(sorted(tmp.glob("*.pdf")))
    return tmp / "ws"


def test_ingest_keeps_the_label_and_the_user_corrects_it(two_filings: Path, tmp_path: Path):
    from docgraph import Workspace
    from docgraph.documents.metadata_store import NAMESPACE, store_guess

    ws_dir = Path(shutil.copytree(two_filings, tmp_path / "ws"))
    with Workspace(ws_dir) as ws:
        doc = ws.document("3M_2018_10K.pdf", with_pages=False)
        stored = ws.store.get_record(NAMESPACE, doc.id)  # written at ingest, not on first read
        assert stored["organisation"] == "3M COMPANY" and stored["sources"]["period"] == "cover"
        assert ws.metadata(doc.id)[doc.id].title == "3M COMPANY Form 10-K FY2018"
        reread = store_guess(ws.store, ws.store.get_document(doc.id))  # the sampled pages read back
        assert reread.model_dump() == stored, "ingest guessed from the pages it held, the same pages"
        ws.set_metadata(doc.id, organisation="3M", title="3M annual report 2018")
        store_guess(ws.store, ws.store.get_document(doc.id))  # a later guess keeps what the user set
        label = ws.metadata(doc.id)[doc.id]
        assert (label.organisation, label.title, label.period) == ("3M", "3M annual report 2018", "FY2018")
        assert label.sources["organisation"] == "user" and label.sources["period"] == "cover"
        assert ws.document(doc.id, with_pages=False).title == "3M annual report 2018"
        with pytest.raises(Exception, match="unknown metadata field"):
            ws.set_metadata(doc.id, colour="red")
        ws.remove(doc.id)
        assert ws.store.get_record(NAMESPACE, doc.id) is None  # deleted with its document


def test_a_workspace_from_before_labels_gets_them_on_first_use(two_filings: Path, tmp_path: Path):
    from docgraph import Workspace
    from docgraph.documents.metadata_store import NAMESPACE

    ws_dir = Path(shutil.copytree(two_filings, tmp_path / "ws"))
    with Workspace(ws_dir) as ws:
        ws.store.delete_records(NAMESPACE)
        labels = ws.metadata()
        assert sorted((m.organisation, m.period, m.kind, m.ticker) for m in labels.values()) == [
            ("3M COMPANY", "FY2018", "10-K", ""),
            ("JPMorgan Chase & Co.", "Q1 2021", "10-Q", "JPM"),
        ]
        assert len(list(ws.store.iter_records(NAMESPACE))) == 2


def test_cli_meta_prints_and_sets_and_ls_shows_the_label(two_filings: Path, tmp_path: Path, capsys):
    from docgraph.cli import main

    ws_dir = str(shutil.copytree(two_filings, tmp_path / "ws"))
    assert main(["meta", "JPMORGAN_2021Q1_10Q.pdf", "--workspace", ws_dir]) == 0
    shown = capsys.readouterr().out
    assert "organisation  JPMorgan Chase & Co.  (cover)" in shown and "period        Q1 2021  (cover)" in shown
    assert main(["meta", "JPMORGAN_2021Q1_10Q.pdf", "--period", "Q1 FY2021", "--json", "--workspace", ws_dir]) == 0
    assert json.loads(capsys.readouterr().out)["sources"]["period"] == "user"
    assert main(["ls", "--workspace", ws_dir]) == 0
    listing = capsys.readouterr().out
    assert "10-Q" in listing and "Q1 FY2021" in listing and "JPMorgan Chase & Co." in listing
    assert main(["ls", "--json", "--workspace", ws_dir]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["metadata"]["period"] for r in rows} == {"FY2018", "Q1 FY2021"}
    assert main(["meta", "nope.pdf", "--workspace", ws_dir]) != 0
    assert "no document 'nope.pdf'" in capsys.readouterr().err


def test_ls_lists_the_documents_whose_labels_hold_every_word(two_filings: Path, capsys):
    from docgraph.cli import main

    ws_dir = str(two_filings)
    assert main(["ls", "jpmorgan", "10-q", "--workspace", ws_dir]) == 0
    listing = capsys.readouterr().out
    assert "JPMorgan Chase & Co." in listing and "3M COMPANY" not in listing and "1 of 2 documents" in listing
    assert main(["ls", "3m_2018", "--json", "--workspace", ws_dir]) == 0  # the file name counts too
    assert [r["path"].rsplit("/", 1)[-1] for r in json.loads(capsys.readouterr().out)] == ["3M_2018_10K.pdf"]
    assert main(["ls", "fy2018", "jpmorgan", "--workspace", ws_dir]) == 0
    assert "no document of the 2 matches 'fy2018 jpmorgan'" in capsys.readouterr().out


def test_a_label_guessed_by_older_rules_is_guessed_again_keeping_the_users_fields(two_filings: Path, tmp_path: Path):
    from docgraph import Workspace
    from docgraph.documents.metadata import GUESSER
    from docgraph.documents.metadata_store import NAMESPACE

    ws_dir = Path(shutil.copytree(two_filings, tmp_path / "ws"))
    with Workspace(ws_dir) as ws:
        doc = ws.document("3M_2018_10K.pdf", with_pages=False)
        ws.set_metadata(doc.id, kind="annual report")
        old = dict(ws.store.get_record(NAMESPACE, doc.id), guesser=GUESSER - 1, period="1900")
        ws.store.put_record(NAMESPACE, doc.id, old, doc_id=doc.id)
        label = ws.metadata(doc.id)[doc.id]
        assert (label.period, label.kind, label.guesser) == ("FY2018", "annual report", GUESSER)


def test_a_short_file_name_stays_a_name_beside_a_better_title():
    from docgraph.documents.metadata import DocumentMeta, short_file_name

    paper = DocumentMeta(title="TAKE A STEP BACK: EVOKING REASONING VIA ABSTRACTION", file_name="STEPBACK")
    assert paper.names() == ["TAKE A STEP BACK: EVOKING REASONING VIA ABSTRACTION", "STEPBACK"]
    assert short_file_name("nova_y70") == "nova y70"
    # long, hashed or generic file names name nothing
    assert short_file_name("12-15-15-ISIS-and-terrorism-release-final") == ""
    assert short_file_name("fdac8d1e9ef56519371df7e6532df27d") == ""
    assert short_file_name("report_final") == "" and short_file_name("User_Manual") == ""
