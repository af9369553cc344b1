"""``Document.pages`` is never an empty list meaning "not loaded" (issue 16).

Documents from ``Workspace.add`` / ``documents`` / ``document`` read their pages on first use;
listing documents reads none.
"""

from __future__ import annotations

from docgraph import Workspace


def test_pages_of_added_and_listed_documents_load_when_used(tmp_path, shared_data):
    pdf = shared_data / "documents" / "openstax_world_history_v1_excerpt.pdf"
    with Workspace(tmp_path / "ws") as ws:
        docs = ws.add([pdf])
        page = docs[0].pages[0]  # the README's example
        assert page.number == 1 and page.components and page.components[0].id
        again = ws.add([pdf])  # skipped as already added: same answer
        assert [p.number for p in again[0].pages] == [1, 2, 3, 4, 5]

        listed = ws.documents()
        assert not listed[0].pages.loaded  # listing reads no pages
        assert len(listed[0].pages) == listed[0].page_count == 5
        assert listed[0].pages.loaded and listed[0].pages[-1].number == 5
        assert ws.documents(with_pages=True)[0].pages.loaded
        assert ws.document(docs[0].id, with_pages=False).pages[2].number == 3
        dumped = ws.documents()[0].model_dump()
        assert [p["number"] for p in dumped["pages"]] == [1, 2, 3, 4, 5]


def test_the_openstax_excerpt_is_titled_by_its_unit_not_chapter_14(openstax_ws):
    """Its unit title on page 1 is typed as a page header; page 1 lists chapters 14-16 (issue 16)."""
    with Workspace(openstax_ws) as ws:
        assert ws.documents()[0].title == "Unit 4 A Global Middle Ages, 1200–1500 CE"
