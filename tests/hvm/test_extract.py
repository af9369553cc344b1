"""Per-modality extraction: offline concepts and facts, table rows, pictures, and the model fallback."""

from __future__ import annotations

from docgraph.errors import ModelOutputError
from docgraph.methods.building.markdown_tables import parse_table, rows_as_sentences
from docgraph.methods.hvm.extract_base import ChunkFailed, ChunkInput
from docgraph.methods.hvm.extract_image import ModelImageStrategy, OfflineImageStrategy, picture_concept
from docgraph.methods.hvm.extract_table import OfflineTableStrategy
from docgraph.methods.hvm.extract_text import OfflineTextStrategy
from docgraph.models.base import NamedEntity, TextAnalysis, Triple
from docgraph.types import Chunk

TABLE = """|**Country**|**Operator (name)**|**Sales (M€)**|**Note**|
|---|---|---|---|
|Spain|Iberdrola|2,673|-0.7|
|Chile|Endesa Chile<br>SA|12||
|**Total**||2,685||"""


class FakeNLP:
    """Returns a fixed analysis for every text (the extractor's mapping is what is tested)."""

    def __init__(self, analysis: TextAnalysis):
        self.analysis = analysis
        self.texts: list[str] = []

    def analyze(self, texts):
        self.texts.extend(texts)
        return [self.analysis for _ in texts]

    def map_label(self, label, schema):
        return label


def item(text: str, modality: str = "text", description: str = "") -> ChunkInput:
    chunk = Chunk(id="d:1:X1", doc_id="d", page=1, component_ids=["X1"], modality=modality, text=text)
    return ChunkInput(chunk=chunk, context="Report > Taxes", description=description)


ANALYSIS = TextAnalysis(
    entities=[
        NamedEntity("ACCIONA", "ORG", 0, 7),
        NamedEntity("Spain", "GPE", 20, 25),
        NamedEntity("€ 848,000", "MONEY", 30, 39),
    ],
    noun_phrases=["capital grants", "the company", "Texas", "2020", "it"],
    triples=[
        Triple("ACCIONA", "receive", "capital grants", ""),
        Triple("capital grants", "amount_to", "€ 848,000", ""),
    ],
    sentences=["ACCIONA operates in Spain.", "The capital grants amounted to € 848,000."],
)


def test_offline_text_concepts_from_ner_labels_and_phrase_heads():
    result = OfflineTextStrategy(FakeNLP(ANALYSIS)).extract([item("...")])[0]
    concepts = {e.name: e.concept for e in result.entities}
    # NER labels give readable concepts, noun phrases their head; a proper-noun head says only "name";
    # money and bare numbers are values, not entities; "it" is too short to name a concept
    assert concepts == {
        "ACCIONA": "organization",
        "Spain": "place",
        "capital grants": "grants",
        "the company": "company",
        "Texas": "name",
    }
    assert result.entities[0].description == "ACCIONA operates in Spain."
    facts = [(f.head, f.relation, f.tail, f.tail_concept) for f in result.facts]
    assert facts == [
        ("ACCIONA", "receive", "capital grants", "grants"),
        ("capital grants", "amount_to", "€ 848,000", "amount"),
    ]


def test_markdown_tables_parse_and_render_row_by_row():
    headers, rows = parse_table(TABLE)
    assert headers == ["Country", "Operator (name)", "Sales (M€)", "Note"]
    assert rows[1] == ["Chile", "Endesa Chile SA", "12", ""]
    text = rows_as_sentences(TABLE)
    assert text.split("\n\n")[0] == "Spain — Operator (name): Iberdrola; Sales (M€): 2,673; Note: -0.7."
    assert rows_as_sentences("plain text") == "plain text"


def test_offline_table_rows_give_categorical_entities_and_row_facts():
    result = OfflineTableStrategy(OfflineTextStrategy(FakeNLP(ANALYSIS))).extract([item(TABLE, "table")])[0]
    entities = {e.name: e.concept for e in result.entities}
    assert entities == {
        "Spain": "country",
        "Iberdrola": "operator",
        "Chile": "country",
        "Endesa Chile SA": "operator",
        "Total": "country",
    }
    facts = {(f.head, f.relation, f.tail) for f in result.facts}
    assert ("Spain", "sales", "2,673") in facts and ("Spain", "note", "-0.7") in facts
    assert ("Spain", "operator", "Iberdrola") in facts and ("Chile", "note", "") not in facts
    assert all(f.tail_concept for f in result.facts)


def test_text_that_is_not_a_table_is_extracted_as_text():
    nlp = FakeNLP(ANALYSIS)
    result = OfflineTableStrategy(OfflineTextStrategy(nlp)).extract([item("Sales rose in Spain.", "table")])[0]
    assert nlp.texts == ["Sales rose in Spain."] and result.notes == ["table without Markdown rows: extracted as text"]


def test_offline_picture_is_an_entity_named_by_its_caption():
    strategy = OfflineImageStrategy(OfflineTextStrategy(FakeNLP(ANALYSIS)))
    with_caption, bare = strategy.extract(
        [item("", "image", "Figure 2: Grants by country. Source: ACCIONA"), item("", "image")]
    )
    picture = with_caption.entities[0]
    assert (picture.name, picture.concept) == ("Figure 2: Grants by country", "figure")
    assert ("Figure 2: Grants by country", "related_to", "ACCIONA") in {
        (f.head, f.relation, f.tail) for f in with_caption.facts
    }
    assert bare.entities[0].name == "image X1 on page 1" and bare.notes
    assert picture_concept("Map of the region") == "map" and picture_concept("A cat") == "image"


class BrokenChat:
    model = "broken"

    def complete(self, messages, *, stage, schema=None, **params):
        raise ModelOutputError("not JSON", raw="<html>")


def test_an_invalid_model_reply_falls_back_to_offline_with_a_note():
    offline = OfflineImageStrategy(OfflineTextStrategy(FakeNLP(ANALYSIS)))
    result = ModelImageStrategy(BrokenChat(), offline).extract([item("", "image", "Figure 1: Plant")])[0]
    assert result.strategy == "offline-fallback" and result.entities[0].name == "Figure 1: Plant"
    assert any("offline extraction used instead" in n for n in result.notes)


def test_without_an_offline_fallback_an_invalid_reply_fails_the_chunk():
    """``hvm.on_model_error = "retry-later"``: no offline strategy to fall back to."""
    result = ModelImageStrategy(BrokenChat(), None).extract([item("", "image", "Figure 1: Plant")])[0]
    assert isinstance(result, ChunkFailed) and "unusable" in result.error and "not JSON" in result.error
