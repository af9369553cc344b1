"""Routing a library by content (``methods.retrieval.document_nodes``): a question that names no
document leans towards the documents whose whole text holds its words, between documents only;
names come first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docgraph.methods.retrieval.document_nodes import DocumentNodes
from docgraph.text import tokenize

# three documents, two pages each: the survey report holds "partisans", "leaners" and
# "independents" over its two pages; one page of the handbook shares a single word
PAGES = {
    ("survey", 1): "Independents who lean toward a party: leaners make up most independents.",
    ("survey", 2): "Partisans and leaners differ in turnout; independents without a lean vote least.",
    ("handbook", 1): "Students register with the registry office before the semester starts.",
    ("handbook", 2): "Independents study abroad on their own terms.",
    ("manual", 1): "Press and hold the power key for three seconds.",
    ("manual", 2): "The battery charges fully in two hours.",
}
QUESTION = tokenize("How many partisans, leaners and independents are there?")


def nodes_of(pages: dict[tuple[str, int], str], parts: dict[str, list[int]] | None = None) -> DocumentNodes:
    keys = sorted(pages)
    return DocumentNodes.build(keys, [tokenize(pages[k]) for k in keys], parts)


def test_the_document_holding_the_words_together_matches_best():
    nodes = nodes_of(PAGES)
    match = nodes.match(QUESTION)
    assert match is not None
    by_doc = {doc: m for (doc, _), m in zip(nodes.nodes, match)}
    assert by_doc["survey"] == 1.0
    assert 0.0 < by_doc["handbook"] < 0.5  # one shared word
    assert by_doc["manual"] == 0.0


def test_page_weights_keep_the_floor_so_every_document_still_ranks():
    nodes = nodes_of(PAGES)
    weights = nodes.page_weights(QUESTION, 0.5)
    assert weights is not None
    by_page = dict(zip(sorted(PAGES), weights))
    assert by_page[("survey", 1)] == by_page[("survey", 2)] == 1.0
    assert by_page[("manual", 1)] == by_page[("manual", 2)] == 0.5
    assert 0.5 < by_page[("handbook", 1)] == by_page[("handbook", 2)] < 0.75
    assert nodes.page_weights(QUESTION, 1.0) is None  # route_floor 1: routing off


def test_content_routing_abstains_without_evidence_that_tells_documents_apart():
    nodes = nodes_of(PAGES)
    assert nodes.match([]) is None
    assert nodes.match(tokenize("quantum chromodynamics")) is None  # no word occurs anywhere
    assert nodes_of({k: v for k, v in PAGES.items() if k[0] == "survey"}).match(QUESTION) is None  # one document
    assert nodes_of({("a", 1): "turnout", ("b", 1): "turnout"}).match(tokenize("turnout")) is None  # all alike


def test_the_parts_of_one_file_are_nodes_of_their_own():
    # the manual, then the survey, packed into one file "binder": the survey from its page 3 on
    texts = [text for (doc, _), text in sorted(PAGES.items()) if doc != "handbook"]
    packed = {("binder", n): text for n, text in enumerate(texts, 1)}
    assert nodes_of(packed).match(QUESTION) is None  # one node: nothing to choose between
    nodes = nodes_of(packed, {"binder": [1, 3]})
    assert nodes.nodes == [("binder", 1), ("binder", 3)]
    weights = nodes.page_weights(QUESTION, 0.5)
    assert weights is not None
    assert list(weights) == [0.5, 0.5, 1.0, 1.0]


def test_with_named_documents_the_words_choose_only_between_each_documents_parts():
    # the survey as a file of two parts, the handbook and the manual of one part each
    nodes = nodes_of(PAGES, {"survey": [1, 2]})
    assert nodes.nodes == [("handbook", 1), ("manual", 1), ("survey", 1), ("survey", 2)]
    terms = tokenize("Which partisans vote least?")  # the survey's second page holds both words
    across = nodes.match(terms)
    within = nodes.match(terms, within_documents=True)
    assert across is not None and within is not None
    assert list(within) == [1.0, 1.0, pytest.approx(across[2] / across[3]), 1.0]
    assert within[2] < 1.0  # the survey's first part, against its second
    assert nodes_of(PAGES).match(terms, within_documents=True) is None  # no document of two parts


# A small shelf of real documents: eight pages of a JSTOR white paper on open access to a
# Mexican press's books, eight of a parish's social audit, the five-page OpenStax excerpt.
EXCERPTS = {
    "jstor_open_access_latin_america_report.pdf": range(1, 9),
    "st_mary_witney_social_audit.pdf": range(5, 13),
    "openstax_world_history_v1_excerpt.pdf": range(1, 6),
}
UNNAMED = "How did open access widen access to the press's books for readers and students?"
NAMED = "What does the St Mary Witney social audit say about the housing of young families?"


@pytest.fixture(scope="module")
def shelf(tmp_path_factory, shared_data: Path) -> Path:
    """The three excerpts as three documents of one workspace, kg4vd and hvm built offline."""
    from docgraph.testing.files import built_library

    source = shared_data / "documents"
    return built_library({source / name: pages for name, pages in EXCERPTS.items()}, tmp_path_factory.mktemp("shelf"))


def ranked(root: Path, question: str, method: str, by_content: bool) -> list[tuple[str, int]]:
    from docgraph import Workspace

    with Workspace(root, overrides={"retrieval": {"route_by_content": by_content}}) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        return [(files[p.doc_id], p.page) for p in ws.retrieve(question, method=method).pages]


def test_a_report_laid_out_in_landscape_is_no_slide_deck(shelf: Path):
    from docgraph import Workspace

    with Workspace(shelf) as ws:
        files = {d.id: Path(d.path).name for d in ws.documents()}
        kinds = {files[doc]: meta.kind for doc, meta in ws.metadata().items()}
    # the audit's landscape pages hold paragraphs (a median of about 300 words), a slide's a few dozen
    assert kinds["st_mary_witney_social_audit.pdf"] != "slides"


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_question_naming_no_document_is_read_in_the_document_that_holds_its_words(shelf: Path, method: str):
    routed = ranked(shelf, UNNAMED, method, by_content=True)
    unrouted = ranked(shelf, UNNAMED, method, by_content=False)
    paper = "jstor_open_access_latin_america_report.pdf"
    # the OpenStax preface's "educational access" takes a top-5 slot from the pages alone …
    assert any(doc != paper for doc, _ in unrouted[:5])
    # … the white paper, which holds the question's words over its pages, keeps all five
    assert all(doc == paper for doc, _ in routed[:5])
    assert routed[:4] == unrouted[:4]  # its best pages, in the same order
    assert {doc for doc, _ in routed} > {paper}  # softly: the other documents still rank


@pytest.mark.parametrize("method", ["kg4vd", "hvm"])
def test_a_question_that_names_its_document_is_routed_by_the_name_alone(shelf: Path, method: str):
    assert ranked(shelf, NAMED, method, by_content=True) == ranked(shelf, NAMED, method, by_content=False)


def test_content_routing_weighs_whole_documents_and_never_reorders_a_document_s_pages(shelf: Path):
    from docgraph import Workspace
    from docgraph.methods.kg4vd.retrieval.anchors import load_layer, query_vector
    from docgraph.methods.kg4vd.storage import VEC_PAGE
    from docgraph.methods.retrieval.evidence_layer import retrieval_settings
    from docgraph.methods.retrieval.vector_index import load_index

    with Workspace(shelf) as ws:
        ctx = ws.context()
        layer = load_layer(ctx, load_index(ctx.store, VEC_PAGE))
        qvec = query_vector(ctx, UNNAMED, [])
        settings = retrieval_settings(ctx)
        on = layer.flat(UNNAMED, qvec, settings)
        off = layer.flat(UNNAMED, qvec, settings.model_copy(update={"route_by_content": False}))
    assert on.routing is not None and off.routing is None
    codes = layer.page_documents.codes
    for doc in range(len(layer.page_documents.doc_ids)):
        before, after = off.flat[codes == doc], on.flat[codes == doc]
        scored = before > 0
        assert np.allclose(after[scored] / before[scored], on.routing[codes == doc][0])  # one factor per document
        assert list(np.argsort(-after, kind="stable")) == list(np.argsort(-before, kind="stable"))
    assert len(set(np.round(on.routing, 9))) == 3  # the three documents weigh differently


def test_a_kind_alone_names_its_documents_and_their_content_chooses_between_them(shelf: Path, tmp_path: Path):
    import shutil

    from docgraph import Workspace
    from docgraph.methods.kg4vd.retrieval.anchors import load_layer, query_vector
    from docgraph.methods.kg4vd.storage import VEC_PAGE
    from docgraph.methods.retrieval.evidence_layer import retrieval_settings
    from docgraph.methods.retrieval.routing import document_router
    from docgraph.methods.retrieval.vector_index import load_index

    root = tmp_path / "shelf"
    shutil.copytree(shelf, root)
    question = "In the paper, how did open access widen access to the press's books for readers and students?"
    with Workspace(root) as ws:
        files = {Path(d.path).name: d.id for d in ws.documents()}
        for name in ("jstor_open_access_latin_america_report.pdf", "openstax_world_history_v1_excerpt.pdf"):
            ws.set_metadata(files[name], kind="paper")
        ws.set_metadata(files["st_mary_witney_social_audit.pdf"], kind="annual report")
        ctx = ws.context()
        layer = load_layer(ctx, load_index(ctx.store, VEC_PAGE))
        settings = retrieval_settings(ctx)
        qvec = query_vector(ctx, question, [])
        by_kind = layer.flat(question, qvec, settings, documents=document_router(ctx.store))
        by_content = layer.flat(question, qvec, settings)
    docs, codes = layer.page_documents.doc_ids, layer.page_documents.codes
    weight = {d: by_kind.routing[codes == i][0] for i, d in enumerate(docs)}
    content = {d: by_content.routing[codes == i][0] for i, d in enumerate(docs)}
    paper, excerpt, audit = (files[n] for n in sorted(files))
    assert {r.doc_id: r.named_by for r in by_kind.routed} == {paper: ["kind paper"], excerpt: ["kind paper"]}
    # the two papers keep their content weights; the audit, of another kind, keeps half of its own
    assert weight[paper] == pytest.approx(content[paper]) and weight[excerpt] == pytest.approx(content[excerpt])
    assert weight[audit] == pytest.approx(0.5 * content[audit])
    assert weight[paper] > weight[excerpt]  # the white paper holds the question's words
