"""A setting that changes what was built makes the next build say what it rebuilds, and
rebuild it (issue 16). Offline builds of the real OpenStax excerpt (5 pages)."""

from __future__ import annotations

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.methods.kg4vd.storage import NS_PAGEGRAPH, load_relations
from docgraph.progress import RecordingProgress


def open_ws(path, **overrides) -> Workspace:
    return Workspace(path, settings=load_settings(path, environ={}, overrides=overrides))


def test_kg4vd_rebuilds_the_stages_a_changed_setting_invalidates(openstax_ws):
    with open_ws(openstax_ws) as ws:
        assert ws.build("kg4vd").pages_built == 5
        assert any(r.cross_page for r in load_relations(ws.store).values())
        assert ws.build("kg4vd").pages_built == 0 and "rebuilt" not in ws.build("kg4vd").stats
    progress = RecordingProgress()
    with open_ws(openstax_ws, kg4vd={"cross_page": False}) as ws:
        report = ws.build("kg4vd", progress=progress)
        assert report.pages_built == 0  # pages are not re-extracted, only reconnected
        assert not any(r.cross_page for r in load_relations(ws.store).values())
        assert ws.store.count_records(NS_PAGEGRAPH) == 5
    assert any(
        "cross_page true → false" in n and "reconnecting the page graphs of 5 page(s) in 1 document(s)" in n
        for n in progress.notes
    ), progress.notes
    with open_ws(openstax_ws, kg4vd={"cross_page": False, "max_rounds": 1}) as ws:
        report = ws.build("kg4vd")
        assert report.pages_built == 5 and "max_rounds 5 → 1" in report.stats["rebuilt"]
        assert "re-extracting the page graphs of 5 page(s)" in report.stats["rebuilt"]
        assert ws.retrieve("Mongol Empire", method="kg4vd").pages


def test_hvm_rebuilds_documents_when_max_group_size_changes(openstax_ws):
    with open_ws(openstax_ws) as ws:
        assert ws.build("hvm").pages_built == 5
        assert ws.build("hvm").pages_built == 0
    progress = RecordingProgress()
    with open_ws(openstax_ws, hvm={"max_group_size": 4}) as ws:
        report = ws.build("hvm", progress=progress)
        assert report.pages_built == 5
        title = ws.documents()[0].title
    assert any(
        n.startswith(
            "hvm: settings changed since the last build (max_group_size 8 → 4): rebuilding "
            f"1 document(s): {title} (5 pages)"
        )
        for n in progress.notes
    ), progress.notes


def test_hvm_extracts_again_when_tables_are_read_differently(openstax_ws, monkeypatch):
    """A new way of reading tables (``TABLE_READING``) makes the extractions stale; a changed
    grouping setting (above) keeps them and only folds again."""
    from docgraph.methods.hvm import extract_text, toolkit

    calls = []
    original = extract_text.OfflineTextStrategy.extract
    monkeypatch.setattr(
        extract_text.OfflineTextStrategy,
        "extract",
        lambda self, items: calls.append(len(items)) or original(self, items),
    )
    with open_ws(openstax_ws) as ws:
        assert ws.build("hvm").pages_built == 5 and calls
    with open_ws(openstax_ws, hvm={"max_group_size": 4}) as ws:
        calls.clear()
        assert ws.build("hvm").pages_built == 5 and not calls
    monkeypatch.setattr(toolkit, "TABLE_READING", toolkit.TABLE_READING + 1)
    progress = RecordingProgress()
    with open_ws(openstax_ws, hvm={"max_group_size": 4}) as ws:
        assert ws.build("hvm", progress=progress).pages_built == 5 and calls
    changed = f"table_reading {toolkit.TABLE_READING - 1} → {toolkit.TABLE_READING}"
    assert any(changed in n for n in progress.notes), progress.notes
