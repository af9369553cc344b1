"""Bad input: one clear line naming the file (and page) and what to do; nothing stored changes;
the good inputs of the same call are still ingested."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymupdf
import pytest
from docs_helpers import LOREM, snapshot, text_pdf, zero_page_pdf

from docgraph.config import IngestSettings
from docgraph.documents import ingest, pages, register_parser
from docgraph.progress import RecordingProgress
from docgraph.store import SQLiteStore

SETTINGS = IngestSettings(workers=1)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, documents_dir):
    """A workspace already holding one document."""
    root = tmp_path_factory.mktemp("bad") / "ws"
    store = SQLiteStore(root)
    report = ingest(store, root, SETTINGS, [documents_dir / "acciona_sustainability_report_2020_p1.pdf"])
    assert len(report.added) == 1
    yield store, root
    store.close()


def _bad_inputs(folder: Path, documents_dir: Path) -> dict[str, tuple[Path, str, IngestSettings]]:
    """name → (file, a phrase its error must contain, settings)."""
    folder.mkdir(parents=True, exist_ok=True)
    good = (documents_dir / "openstax_world_history_v1_excerpt.pdf").read_bytes()
    files = {
        "zero-byte": ("empty.pdf", b"", "0 bytes"),
        "truncated": ("truncated.pdf", good[: len(good) // 2], "truncated"),
        "corrupt": ("corrupt.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n", "damaged"),
        "not-a-pdf": ("notes.pdf", b"just some text, not a PDF at all\n" * 20, "not really a PDF"),
        "unsupported": ("table.xyz", b"a,b\n1,2\n", "unsupported file type"),
        "zero-pages": ("nopages.pdf", zero_page_pdf(), "has no pages"),
        "fake-image": ("photo.png", b"GIF89a not a png" * 10, "not a PNG/JPEG"),
    }
    out = {name: (folder / fname, phrase, SETTINGS) for name, (fname, data, phrase) in files.items()}
    for path, _, _ in out.values():
        path.write_bytes(dict((f, d) for f, d, _ in files.values())[path.name])
    text_pdf(folder / "locked.pdf", [LOREM], encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="pw")
    out["encrypted"] = (folder / "locked.pdf", "--password", SETTINGS)
    text_pdf(folder / "huge.pdf", [LOREM])
    with pymupdf.open(folder / "huge.pdf") as doc:
        doc.new_page(width=14400, height=14400)  # renders to 28800² px at 144 dpi
        doc.saveIncr()
    out["render-cap"] = (folder / "huge.pdf", "(page 2)", SETTINGS)
    out["too-large"] = (folder / "truncated.pdf", "max_file_mb", IngestSettings(workers=1, max_file_mb=0))
    out["missing"] = (folder / "absent.pdf", "does not exist", SETTINGS)
    return out


@pytest.mark.parametrize(
    "case",
    [
        "zero-byte",
        "truncated",
        "corrupt",
        "not-a-pdf",
        "unsupported",
        "zero-pages",
        "fake-image",
        "encrypted",
        "render-cap",
        "too-large",
        "missing",
    ],
)
def test_bad_input_gives_one_clear_line_and_changes_nothing(case, workspace, tmp_path, documents_dir):
    store, root = workspace
    path, phrase, settings = _bad_inputs(tmp_path / "in", documents_dir)[case]
    before = snapshot(root)
    report = ingest(store, root, settings, [path])
    assert report.added == [] and len(report.failures) == 1
    message = str(report.failures[0])
    assert message.startswith(str(path)) and phrase in message and "\n" not in message
    assert snapshot(root) == before


def test_other_inputs_of_the_same_call_are_ingested(workspace, tmp_path, documents_dir):
    store, root = workspace
    bad = _bad_inputs(tmp_path / "in", documents_dir)
    good = text_pdf(tmp_path / "good.pdf", [LOREM])
    paths = [p for name, (p, _, _) in bad.items() if name != "too-large"] + [good]
    report = ingest(store, root, SETTINGS, paths)
    assert [Path(d.path).name for d in report.added] == ["good.pdf"]
    assert sorted(f.path for f in report.failures) == sorted(str(p) for p in paths[:-1])
    store.delete_document(report.added[0].id)


def test_encrypted_pdf_opens_with_its_password(workspace, tmp_path):
    store, root = workspace
    locked = text_pdf(
        tmp_path / "locked.pdf", [LOREM], encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="pw"
    )
    wrong = ingest(store, root, SETTINGS, [locked], password="nope")
    assert "password given does not open it" in str(wrong.failures[0])
    report = ingest(store, root, SETTINGS, [locked], password="pw")
    assert report.failures == [] and "Grounded answers" in store.get_page(report.added[0].id, 1).text
    store.delete_document(report.added[0].id)


def test_a_page_failing_mid_document_leaves_the_workspace_as_it_was(workspace, tmp_path, monkeypatch):
    store, root = workspace
    doc = text_pdf(tmp_path / "three.pdf", [LOREM, LOREM + " Second.", LOREM + " Third."])
    real = pages.process_page

    def failing(job):
        if job.number == 2:
            raise RuntimeError("simulated MuPDF failure")
        return real(job)

    monkeypatch.setattr(pages, "process_page", failing)
    before = snapshot(root)
    report = ingest(store, root, SETTINGS, [doc])
    assert report.added == [] and len(report.failures) == 1
    assert str(report.failures[0]).startswith(f"{doc} (page 2): page could not be processed")
    assert snapshot(root) == before


def test_folders_are_read_recursively_skipping_hidden_and_unsupported(workspace, tmp_path):
    store, root = workspace
    folder = tmp_path / "inbox"
    (folder / "sub").mkdir(parents=True)
    (folder / ".cache").mkdir()
    text_pdf(folder / "sub" / "b.pdf", [LOREM + " B."])
    text_pdf(folder / "a.pdf", [LOREM + " A."])
    shutil.copy(folder / "a.pdf", folder / ".cache" / "hidden.pdf")
    (folder / ".DS_Store").write_bytes(b"\0")
    (folder / "README.txt").write_text("notes")
    progress = RecordingProgress()
    report = ingest(store, root, SETTINGS, [folder, folder / "a.pdf"], progress=progress)
    assert [Path(d.path).name for d in report.added] == ["a.pdf", "b.pdf"]  # a.pdf given twice: added once
    assert report.failures == []
    assert any("README.txt" in n and "unsupported" in n for n in report.notes)
    assert not any("hidden" in n or "DS_Store" in n for n in progress.notes)
    for doc in report.added:
        store.delete_document(doc.id)


def test_a_crashed_page_worker_fails_only_its_document(workspace, tmp_path):
    store, root = workspace
    register_parser("crashing", "docs_helpers:CrashingParser")
    crash = text_pdf(tmp_path / "crash.pdf", [LOREM, LOREM + " Two.", LOREM + " Three."])
    good = text_pdf(tmp_path / "good.pdf", [LOREM + " Good.", LOREM + " Still good."])
    before = snapshot(root)
    report = ingest(store, root, IngestSettings(workers=2, parser="crashing"), [crash, good])
    assert [Path(d.path).name for d in report.added] == ["good.pdf"]
    assert len(report.failures) == 1 and str(report.failures[0]).startswith(f"{crash} (page ")
    store.delete_document(report.added[0].id)
    shutil.rmtree(root / "pages" / report.added[0].id)
    shutil.rmtree(root / "crops" / report.added[0].id)
    assert snapshot(root) == before


# --------------------------------------------------------------------------- issue 15: more kinds
def _more_bad_inputs(folder: Path) -> dict[str, tuple[Path, str]]:
    """name → (file, a phrase its one-line error must contain)."""
    folder.mkdir(parents=True, exist_ok=True)
    text_pdf(folder / "bomb.pdf", [LOREM])
    with pymupdf.open(folder / "bomb.pdf") as doc:  # 14400 pt × UserUnit 75000: a PDF bomb of page size
        doc.xref_set_key(doc[0].xref, "UserUnit", "75000")
        doc.saveIncr()
    (folder / "memo.docx").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    return {
        "page-size-bomb": (folder / "bomb.pdf", "(page 1): would render to"),
        "office-without-libreoffice": (folder / "memo.docx", "need LibreOffice, which is not installed"),
    }


@pytest.mark.parametrize("case", ["page-size-bomb", "office-without-libreoffice"])
def test_more_bad_inputs_give_one_clear_line_and_change_nothing(case, workspace, tmp_path, monkeypatch):
    store, root = workspace
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no soffice on PATH
    path, phrase = _more_bad_inputs(tmp_path / "in")[case]
    before = snapshot(root)
    report = ingest(store, root, SETTINGS, [path])
    assert report.added == [] and len(report.failures) == 1
    message = str(report.failures[0])
    assert message.startswith(str(path)) and phrase in message and "\n" not in message
    assert snapshot(root) == before


def test_a_file_name_that_is_not_utf8_is_added_and_shown_readably(workspace, tmp_path):
    import os

    store, root = workspace
    good = text_pdf(tmp_path / "plain.pdf", [LOREM + " Latin-1 name."])
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9-\xff.pdf"))  # Latin-1 bytes, not UTF-8
    good.rename(odd)
    report = ingest(store, root, SETTINGS, [odd])
    assert report.failures == [] and len(report.added) == 1  # was: "cannot be read as a PDF; it is damaged"
    doc = store.get_document(report.added[0].id, with_pages=True)
    assert doc.path.endswith("caf\\xe9-\\xff.pdf") and doc.title == "caf\\xe9-\\xff"
    assert doc.path.encode("utf-8") and "Latin-1 name" in doc.pages[0].text
    assert (root / doc.pages[0].image_path).is_file()
    store.delete_document(doc.id)
    shutil.rmtree(root / "pages" / doc.id)


def test_a_symlink_loop_in_a_folder_does_not_hang_and_the_folder_is_added(workspace, tmp_path):
    store, root = workspace
    folder = tmp_path / "loop"
    (folder / "sub").mkdir(parents=True)
    text_pdf(folder / "sub" / "inside.pdf", [LOREM + " Inside a looping folder."])
    (folder / "sub" / "back").symlink_to("..")  # loop/sub/back -> loop
    (folder / "self.pdf").symlink_to("self.pdf")  # a link to itself
    report = ingest(store, root, SETTINGS, [folder])
    assert [Path(d.path).name for d in report.added] == ["inside.pdf"]
    store.delete_document(report.added[0].id)
    shutil.rmtree(root / "pages" / report.added[0].id)


def test_an_unreadable_file_gives_one_clear_line(workspace, tmp_path):
    import os

    store, root = workspace
    locked = text_pdf(tmp_path / "private.pdf", [LOREM + " Private."])
    locked.chmod(0)
    if os.access(locked, os.R_OK):
        pytest.skip("unreadable permissions: running as root, chmod 000 does not stop reads")
    before = snapshot(root)
    report = ingest(store, root, SETTINGS, [locked])
    assert report.added == [] and len(report.failures) == 1
    assert str(report.failures[0]).startswith(str(locked)) and "permission" in str(report.failures[0]).lower()
    assert snapshot(root) == before
