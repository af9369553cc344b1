"""Every benchmark loader on the shared sets (real counts) and on small fixtures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from docgraph.errors import InputError
from docgraph.eval.loaders import (
    by_document,
    load_benchmark,
    load_dlvqa,
    load_financebench,
    load_mmlongbench,
    pack_documents,
    pdf_page_counts,
)
from docgraph.eval.loaders.base import parse_literal_list, parse_pages, unique_title_ids
from docgraph.eval.loaders.kg4vd_test import pages_from_note
from docgraph.eval.metrics import is_unanswerable_gold, retrieval_summary

FIXTURES = Path(__file__).parent / "test_loaders_data"


@pytest.fixture(scope="module")
def data(shared_data) -> Path:
    return shared_data


@pytest.fixture(scope="module")
def mmlb_dir(data) -> Path:
    return data / "mmlongbench_doc"


@pytest.fixture(scope="module")
def mmlb(mmlb_dir):
    return load_mmlongbench(mmlb_dir)


@pytest.fixture(scope="module")
def pdf_counts(mmlb_dir):
    """PyMuPDF page counts of the 42 MMLongBench PDFs, computed once for the module."""
    return pdf_page_counts(sorted((mmlb_dir / "documents").glob("*.pdf")))


def test_parse_helpers():
    assert parse_literal_list("['Chart', 'Pure-text (Plain-text)']") == ["Chart", "Pure-text (Plain-text)"]
    assert parse_literal_list("[]") == [] and parse_literal_list("") == [] and parse_literal_list(None) == []
    assert parse_literal_list("['Chart'") == ["['Chart'"]  # broken literal: kept as text
    assert parse_pages("[5, 6, 5]") == [5, 6] and parse_pages("5") == [5] and parse_pages(7) == [7]
    assert parse_pages("[3, 'x', '4', 2.0, True]") == [3, 4, 2]
    assert parse_pages("[3, 4") == [3, 4]  # unparseable list of digits: its integers
    assert parse_pages("page three") == []
    assert unique_title_ids(["A", "B", "A", "A"]) == ["A", "B", "A#2", "A#3"]


def test_mmlongbench_counts(mmlb):
    assert len(mmlb.items) == 321
    assert len(mmlb.documents) == 42 and sum(mmlb.page_counts.values()) == 2196
    assert len({i.id for i in mmlb.items}) == 321
    assert sum(i.unanswerable for i in mmlb.items) == 61
    # the benchmark's own split, by evidence page count (an unanswerable question is neither)
    assert Counter(i.question_type for i in mmlb.items) == {"single-page": 149, "cross-page": 111, "unanswerable": 61}
    assert all(is_unanswerable_gold(i.answer) == i.unanswerable for i in mmlb.items)
    assert Counter(i.doc_type for i in mmlb.items)["Research report / Introduction"] == 88
    assert Counter(i.answer_format for i in mmlb.items) == {"Int": 86, "Str": 72, "None": 61, "Float": 56, "List": 46}
    sources = Counter(s for i in mmlb.items for s in i.evidence_sources)
    assert set(sources) == {"text", "table", "chart", "figure", "layout"}
    # one question may have several sources and counts in each
    assert sum(len(i.evidence_sources) > 1 for i in mmlb.items) == 71
    first = mmlb.items[0]
    assert first.gold_pages == [("PH_2016.06.08_Economy-Final.pdf", 5)] and first.evidence_sources == ["chart"]
    # questions without gold pages (unanswerable ones, and 2 answerable ones) leave retrieval metrics
    assert sum(1 for i in mmlb.items if not i.gold_pages and not i.unanswerable) == 2
    assert retrieval_summary([[]] * 321, [i.gold_pages for i in mmlb.items]).n_excluded == sum(
        1 for i in mmlb.items if not i.gold_pages
    )
    listed = [i for i in mmlb.items if i.answer_format == "List"]
    assert all(isinstance(i.answer, str) for i in listed) and sum("answer_list" in i.extra for i in listed) > 30


def test_mmlongbench_pdf_page_counts_agree_with_tsv(mmlb, mmlb_dir, pdf_counts):
    assert pdf_counts == mmlb.page_counts
    with_pdf = load_mmlongbench(mmlb_dir, page_counts=pdf_counts)
    # In this development split no evidence page lies past the end of its document (checked
    # against the PDFs), so nothing is dropped here; the next test exercises dropping.
    assert not any("dropped_pages" in i.extra for i in with_pdf.items)


def test_mmlongbench_page_past_the_end_is_dropped_and_question_kept(mmlb, mmlb_dir):
    counts = dict(mmlb.page_counts)
    counts["PH_2016.06.08_Economy-Final.pdf"] = 5
    short = load_mmlongbench(mmlb_dir, page_counts=counts.get)  # a callback works as well as a mapping
    assert len(short.items) == 321
    q0, q1 = short.items[0], short.items[1]
    assert q0.gold_pages == [("PH_2016.06.08_Economy-Final.pdf", 5)] and "dropped_pages" not in q0.extra
    assert q1.gold_pages == [] and q1.extra["dropped_pages"] == [19, 20]
    summary = retrieval_summary([[p for p in i.gold_pages] for i in short.items], [i.gold_pages for i in short.items])
    assert q1.unanswerable is False and 1 in summary.excluded
    assert summary.n_excluded == sum(1 for i in short.items if not i.gold_pages)


def test_mmlongbench_defensive_parsing(tmp_path):
    samples = [
        {
            "doc_id": "a.pdf",
            "doc_type": "Guidebook",
            "question": "q0",
            "answer": "x",
            "evidence_pages": "[2, 999]",
            "evidence_sources": "['Table']",
            "answer_format": "Str",
        },
        {
            "doc_id": "a.pdf",
            "question": "q1",
            "answer": "Not answerable",
            "evidence_pages": "",
            "evidence_sources": "['Chart'",
            "answer_format": "None",
        },
        {"doc_id": "a.pdf", "question": "q2", "answer": "['u', 'v']", "evidence_pages": 3, "answer_format": "List"},
        {"doc_id": "a.pdf", "question": "q3", "answer": "y", "evidence_pages": "[0, '4']"},
    ]
    (tmp_path / "samples.json").write_text(json.dumps(samples))
    bench = load_mmlongbench(tmp_path, page_counts={"a.pdf": 10})
    q0, q1, q2, q3 = bench.items
    assert q0.gold_pages == [("a.pdf", 2)] and q0.extra["dropped_pages"] == [999]
    assert q1.unanswerable and q1.gold_pages == [] and q1.evidence_sources == ["['chart'"]
    assert q2.gold_pages == [("a.pdf", 3)] and q2.extra["answer_list"] == ["u", "v"]
    assert q3.gold_pages == [("a.pdf", 4)] and q3.extra["dropped_pages"] == [0]
    (tmp_path / "samples.json").write_text(json.dumps([{"question": "no doc"}]))
    with pytest.raises(InputError, match="sample 0"):
        load_mmlongbench(tmp_path)


def test_mmlongbench_per_document_and_packed(mmlb):
    groups = by_document(mmlb.items)
    assert len(groups) == 42 and sum(len(v) for v in groups.values()) == 321
    assert len(groups["BESTBUY_2023_10K.pdf"]) == 17
    layout, packed = pack_documents(mmlb.items, mmlb.page_counts)
    assert layout.total_pages == 2196 and len(packed) == 321
    assert all(i.doc_ids == ["packed"] for i in packed)
    for original, item in zip(mmlb.items, packed):
        assert len(item.gold_pages) == len(original.gold_pages)
        for (doc, page), (_, global_page) in zip(original.gold_pages, item.gold_pages):
            assert layout.from_packed(global_page) == (doc, page)
    first_doc = layout.order[0]
    assert layout.to_packed(first_doc, 1) == 1 and layout.to_packed(layout.order[1], 1) == layout.counts[first_doc] + 1
    with pytest.raises(ValueError):
        layout.from_packed(2197)


def test_hotpotqa(data):
    bench = load_benchmark("hotpotqa", data / "multihop")
    assert len(bench.items) == 100 and len(bench.corpus) == 994
    ids = bench.corpus.ids()
    assert len(ids) == 994
    assert all(i.gold_passages and set(i.gold_passages) <= ids for i in bench.items)
    assert all("unmatched_gold" not in i.extra for i in bench.items)
    assert sum(len(i.gold_passages) for i in bench.items) == 200
    assert Counter(i.question_type for i in bench.items) == {"bridge": 78, "comparison": 22}
    text = bench.corpus.by_id()["Demon Dice"].text
    assert text.startswith("Demon Dice, originally published") and "  " not in text


def test_musique(data):
    bench = load_benchmark("musique", data / "multihop" / "musique_train.json")
    assert len(bench.items) == 100 and len(bench.corpus) == 1890
    ids = bench.corpus.ids()
    assert len(ids) == 1890  # 85 titles repeat; their later passages get '#k'
    assert all(set(i.gold_passages) <= ids for i in bench.items)
    assert Counter(len(i.gold_passages) for i in bench.items) == {2: 68, 3: 27, 4: 5}
    first = bench.items[0]
    assert first.answer == ["G. Stanley Hall", "Stanley Hall"] and first.question_type == "2hop"
    assert first.gold_passages == ["Journal of Psychotherapy Integration", "Adolescence"]


def test_hipporag_sample_format(data):
    bench = load_benchmark("hipporag", data / "multihop")
    assert len(bench.items) == 1 and len(bench.corpus) == 3
    item = bench.items[0]
    assert item.answer == ["Thomas C. Sudhof"] and item.gold_passages == ["Thomas C. Sudhof"]


def test_qasper_both_sources(data):
    bench = load_benchmark("qasper", data / "qasper")
    assert len(bench.items) == 16
    assert len({i.doc_ids[0] for i in bench.items}) == 3  # the same paper in two versions stays apart
    assert len(bench.corpus) == 138 and len(bench.corpus.ids()) == 138
    assert len({i.id for i in bench.items}) == 16  # the official sample repeats one question id
    ids = bench.corpus.ids()
    assert all(set(i.gold_passages) <= ids for i in bench.items)
    official = [i for i in bench.items if i.doc_ids[0].startswith("qasper_sample_small/")]
    assert len(official) == 4
    assert [i.answer_format for i in official] == ["abstractive", "boolean", "none", "extractive"]
    assert official[1].answer == ["Yes"] and official[2].unanswerable and official[2].answer == ["Unanswerable"]
    # a question whose only evidence is a table: no passage gold, excluded from retrieval metrics
    table_only = [i for i in bench.items if not i.gold_passages]
    assert len(table_only) == 1 and table_only[0].extra["float_evidence"]
    single = load_benchmark("qasper", data / "qasper" / "navin164_subset")
    assert len(single.items) == 12 and single.items[0].doc_ids == ["1909.00694"]


def test_financebench_fixture_pages_become_one_based(mmlb_dir):
    bench = load_financebench(
        FIXTURES / "financebench_sample.jsonl", pdf_dir=mmlb_dir / "documents", page_counts={"3M_2018_10K": 160}
    )
    assert [i.id for i in bench.items] == ["fixture_0001", "fixture_0002", "fixture_0003"]
    one, two, three = bench.items
    assert one.gold_pages == [("3M_2018_10K", 60)] and one.doc_type == "10k"
    assert two.gold_pages == [("3M_2018_10K", 1)] and two.extra["dropped_pages"] == [("3M_2018_10K", 300)]
    assert three.doc_ids == ["NIKE_2021_10K", "NIKE_2020_10K"] and three.gold_pages == [("NIKE_2020_10K", 5)]
    # documents found as <doc_name>.pdf; NIKE_2020_10K has no file there
    assert bench.documents == {
        "3M_2018_10K": mmlb_dir / "documents" / "3M_2018_10K.pdf",
        "NIKE_2021_10K": mmlb_dir / "documents" / "NIKE_2021_10K.pdf",
    }


def test_dlvqa_fixture():
    bench = load_dlvqa(FIXTURES / "dlvqa_sample.jsonl")
    first, second = bench.items
    assert first.id == "WH_q001" and first.answer_format == "wiki" and first.doc_type == "World History"
    assert first.gold_pages == [("World_History_Volume_1.pdf", p) for p in (12, 25, 30)]
    assert first.evidence_sources == ["text", "visual"]
    assert [f["id"] for f in first.extra["gt_facts"]] == ["f1", "f2", "f3", "f4"]
    assert first.extra["answer_guidelines"].startswith("Write a Wikipedia-style")
    # no fact pages: the page span is the gold; a null reference becomes ""
    assert second.gold_pages == [("picture_books.pdf", p) for p in (3, 4, 18)] and second.answer == ""
    assert second.extra["gt_facts"][0]["text"] == "A plain-string fact without a page."


def test_kg4vd_test_questions(data):
    bench = load_benchmark("kg4vd_test", data / "kg4vd_test")
    assert len(bench.items) == 8 and list(bench.documents) == ["world_history_p10-15.pdf"]
    assert Counter(i.question_type for i in bench.items) == {"mmlongbench": 6, "dlvqa": 2}
    by_id = {i.id: i for i in bench.items}
    assert by_id["test_q006"].gold_pages == [("world_history_p10-15.pdf", 5)]
    assert by_id["test_q008"].gold_pages == [("world_history_p10-15.pdf", 3), ("world_history_p10-15.pdf", 4)]
    assert pages_from_note("synthesis over preface, pages 3–4") == [3, 4] and pages_from_note("TOC") == []


def test_registry_errors(tmp_path):
    with pytest.raises(InputError, match="unknown benchmark"):
        load_benchmark("squad", tmp_path)
    with pytest.raises(InputError, match="not found"):
        load_benchmark("hotpotqa", tmp_path / "missing.json")
    (tmp_path / "broken.jsonl").write_text('{"qa_id": 1}\nnot json\n')
    with pytest.raises(InputError, match="line 2"):
        load_benchmark("dlvqa", tmp_path / "broken.jsonl")


def test_without_long_documents_keeps_questions_about_short_ones(mmlb):
    short = mmlb.without_long_documents(108)
    assert 0 < len(short) < len(mmlb) and short.page_counts == mmlb.page_counts
    assert all(mmlb.page_counts[d] <= 108 for i in short.items for d in i.doc_ids)
    assert mmlb.without_long_documents(None) is mmlb


def test_financebench_is_read_in_its_repositorys_layout(data, tmp_path):
    root = data / "financebench"
    if not (root / "pdfs").is_dir():
        pytest.skip("the FinanceBench development split is not in the shared data")
    for path in (root, root / "data", root / "data" / "financebench_open_source.jsonl"):
        bench = load_benchmark("financebench", path)
        assert len(bench.items) == 38 and len(bench.documents) == 19
        assert all(p.parent == root / "pdfs" and p.name == f"{d}.pdf" for d, p in bench.documents.items())
        assert {d for item in bench.items for d in item.doc_ids} == set(bench.documents)
    with pytest.raises(InputError, match="no financebench_open_source.jsonl"):
        load_benchmark("financebench", tmp_path)


def test_documents_elsewhere_are_found_by_id_and_other_pdfs_join(data, tmp_path):
    bench = load_financebench(FIXTURES / "financebench_sample.jsonl")
    assert bench.documents == {}  # no pdfs/ beside the fixture file
    (tmp_path / "3M_2018_10K.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "OTHER_2020_10K.pdf").write_bytes(b"%PDF-1.4")
    moved = bench.with_documents(tmp_path)
    assert moved.documents == {
        "3M_2018_10K": tmp_path / "3M_2018_10K.pdf",
        "OTHER_2020_10K": tmp_path / "OTHER_2020_10K.pdf",
    }
    with pytest.raises(InputError, match="none of the benchmark's documents"):
        bench.with_documents(tmp_path / "..")
    with pytest.raises(InputError, match="does not exist"):
        bench.with_documents(tmp_path / "missing")
