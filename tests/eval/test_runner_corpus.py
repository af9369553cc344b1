"""How benchmarks become corpora: passages rendered one per page (mapped back to their
ids), the packed PDF, and the workspace folders that cache them."""

from __future__ import annotations

import json

import pymupdf

from docgraph.eval.corpus import passage_spec, render_passages, write_packed_pdf
from docgraph.eval.loaders import Passage, load_mmlongbench, pack_documents


def test_passages_render_one_per_page_and_map_back(tmp_path):
    long_text = " ".join(f"word{i}" for i in range(3000))
    passages = [
        Passage(id="p1", title="First", text="Alpha beta gamma."),
        Passage(id="p2", title="", text="No title here."),
        Passage(id="long", title="Long one", text=long_text),
        Passage(id="p3", title="Last", text="Omega."),
    ]
    page_map = render_passages(passages, tmp_path / "c.pdf", title="test corpus")
    with pymupdf.open(tmp_path / "c.pdf") as doc:
        assert doc.metadata["title"] == "test corpus"
        assert doc.page_count == len(page_map) and list(page_map) == list(range(1, doc.page_count + 1))
        texts = {n: doc[n - 1].get_text() for n in page_map}
    assert page_map[1] == "p1" and "First" in texts[1] and "Alpha beta gamma." in texts[1]
    assert page_map[2] == "p2" and "No title here." in texts[2]
    long_pages = [n for n, pid in page_map.items() if pid == "long"]
    assert len(long_pages) >= 2, "a passage too long for one page continues on the next"
    words = " ".join(texts[n] for n in long_pages).split()
    assert [w for w in words if w.startswith("word")] == long_text.split(), "nothing lost, order kept"
    assert page_map[max(page_map)] == "p3"


def test_passage_spec_is_cached_by_content(tmp_path):
    passages = [Passage(id="a", title="A", text="one"), Passage(id="b", title="B", text="two")]
    first = passage_spec(tmp_path, "set", passages, [])
    assert first.level == "passage" and first.page_passages == {1: "a", 2: "b"}
    assert json.loads((first.files[0].parent / "pages.json").read_text()) == {"1": "a", "2": "b"}
    again = passage_spec(tmp_path, "set", passages, [])
    assert again.folder == first.folder and again.files[0].stat().st_mtime == first.files[0].stat().st_mtime
    changed = passage_spec(tmp_path, "set", passages[:1], [])
    assert changed.folder != first.folder


def test_packed_pdf_concatenates_in_layout_order(tmp_path, shared_data):
    bench = load_mmlongbench(shared_data / "mmlongbench_doc")
    names = ["7c3f6204b3241f142f0f8eb8e1fefe7a.pdf", "936c0e2c2e6c8e0c07c51bfaf7fd0a83.pdf"]
    items = [i for i in bench.items if i.doc_ids[0] in names]
    layout, packed = pack_documents(items, bench.page_counts)
    out = write_packed_pdf(layout, bench.documents, tmp_path / "packed.pdf")
    with pymupdf.open(out) as doc, pymupdf.open(bench.documents[names[1]]) as second:
        assert doc.page_count == layout.total_pages == 30
        assert doc[15].get_text() == second[0].get_text(), "page 1 of the second document is packed page 16"
    assert all(d == "packed" for item in packed for d, _ in item.gold_pages)
    mtime = out.stat().st_mtime
    assert write_packed_pdf(layout, bench.documents, out).stat().st_mtime == mtime, "complete file is reused"
