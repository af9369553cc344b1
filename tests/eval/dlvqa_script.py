"""Scripted model replies for the DLVQA builder on the OpenStax excerpt (5 pages), served by
the OpenAI-compatible stub: page summaries, a document summary, grounded facts per page
(some with components the page lacks, one visual fact with no figure to point at) and
question drafts built from the facts the prompt lists. Clustering is real: the facts are
embedded by the configured embedder and grouped by HDBSCAN."""

from __future__ import annotations

import re

from docgraph.testing.openai_stub import OpenAIStub

PAGE_SUMMARIES = {
    1: "The table of contents of Unit 4, A Global Middle Ages, lists chapters 14 to 17 and the appendices.",
    2: "The preface introduces OpenStax, a Rice University nonprofit, and the book's CC BY licence.",
    3: "The preface explains the book's global approach, primary sources and chapter features.",
    4: "The preface describes section summaries, key terms and assessments, and shows the four senior authors.",
    5: "Biographies of the senior contributing authors Ryan J. Lynch, Brooke Nelson and Julie Tatlock.",
}
DOC_SUMMARY = (
    "An excerpt of OpenStax World History, Volume 1: the table of contents of Unit 4 (chapters 14-17) "
    "and the preface, which presents OpenStax, the book's licence, its global approach, its chapter "
    "features and assessments, and its senior contributing authors."
)

# page → (type, text, components); "Z9" is no component of any page and is dropped
FACTS = {
    1: [
        ("text", "Unit 4 of World History Volume 1 is titled 'A Global Middle Ages, 1200–1500 CE'.", ["TI1"]),
        ("text", "Chapter 14, 'Pax Mongolica: The Steppe Empire of the Mongols', begins on page 579.", ["P1"]),
        ("text", "Chapter 15 covers States and Societies in Sub-Saharan Africa and begins on page 621.", ["P1"]),
        (
            "text",
            "Chapter 16 covers Climate Change and Plague in the Fourteenth Century, including the Black Death.",
            ["P2"],
        ),
        ("text", "Chapter 17 covers the Ottomans, the Mamluks, and the Ming.", ["P2", "Z9"]),
        ("text", "Every chapter of the book ends with Key Terms, a Section Summary and Assessments.", ["P1"]),
    ],
    2: [
        ("text", "OpenStax is part of Rice University, a 501(c)(3) nonprofit charitable corporation.", ["P1"]),
        ("text", "OpenStax's mission is to improve educational access and learning for everyone.", ["P1"]),
        (
            "text",
            "World History is licensed under a Creative Commons Attribution 4.0 International (CC BY) license.",
            ["P2"],
        ),
        (
            "text",
            "Instructors may remix the book by assigning its chapters and sections in any order they prefer.",
            ["P3"],
        ),
        (
            "text",
            "Instructors can create a customized version of the OpenStax book in low-cost print or digital form.",
            ["P4"],
        ),
        ("visual", "A logo shows the OpenStax name in blue letters.", []),
    ],  # no figure on page 2: dropped
    3: [
        (
            "text",
            "The book aims to include perspectives traditionally underrepresented in the world history canon.",
            ["P1"],
        ),
        ("text", "Primary source material represents the cultures discussed from a firsthand perspective.", ["P2"]),
        ("text", "World History takes a global approach that juxtaposes people's experiences of history.", ["P2"]),
        ("text", "Each chapter opens with learning objectives that guide students through its sections.", ["L1"]),
    ],
    4: [
        ("text", "Section summaries distill the information in each section down to key, concise points.", ["P1"]),
        (
            "text",
            "Key terms are bold and followed by a definition in context, and are listed in the end-of-chapter "
            "Glossary.",
            ["P2"],
        ),
        ("text", "Review Questions in the assessments test conceptual apprehension of key concepts.", ["L1"]),
        ("text", "Answers to the end-of-chapter questions are provided in the Instructor Answer Guide.", ["P4"]),
        (
            "visual",
            "A photo shows the senior contributing authors from left to right: Ann Kordas, Ryan J. Lynch, "
            "Brooke Nelson and Julie Tatlock.",
            ["C1"],
        ),  # tied to IM1, the page's only figure
        ("text", "Ann Kordas, a senior contributing author, is from Johnson & Wales University.", ["P5"]),
    ],
    5: [
        ("text", "Senior contributing author Brooke Nelson is Director of Curriculum at Marco Learning.", ["P2"]),
        (
            "text",
            "Author Brooke Nelson's research focuses on the late Roman world, religious conflicts and gender studies.",
            ["P2"],
        ),
        (
            "text",
            "Author Julie Tatlock chairs the Department of Justice, Sociology and History at Mount Mary University.",
            ["P4"],
        ),
        (
            "text",
            "Author Ryan J. Lynch wrote the award-winning book Arab Conquests and Early Islamic Historiography.",
            ["P1"],
        ),
    ],
}
SETTINGS_TOML = """
[dlvqa]
min_page_span = 3
min_cluster_size = 3
"""
_PAGE = re.compile(r"Page (\d+) of \d+")
_FACT = re.compile(r"^\d+\. \[page (\d+), (text|visual)\] (.+)$", re.MULTILINE)


def _page(prompt: str) -> int:
    return int(_PAGE.search(prompt).group(1))


def question(prompt: str) -> dict:
    """A draft from the facts listed in the prompt: its reference summary restates them."""
    facts = _FACT.findall(prompt)
    pages = sorted({int(p) for p, _, _ in facts})
    topic = (
        "the authors"
        if any("Author" in t for _, _, t in facts)
        else "the book's chapters"
        if any("Chapter" in t for _, _, t in facts)
        else "the book's design"
    )
    body = " ".join(t for _, _, t in facts)
    return {
        "title": f"About {topic}",
        "question": f"Walk me through what the excerpt says about {topic}, from page {pages[0]} to page {pages[-1]}.",
        "reference_summary": f"## Overview\n{body}\n\n## Scope\nThe facts come from pages "
        f"{', '.join(map(str, pages))}.",
        "topics": [topic, "preface"],
    }


def script(stub: OpenAIStub) -> OpenAIStub:
    """Answer the builder's four model stages on ``stub``."""
    stub.reply(lambda r: {"summary": PAGE_SUMMARIES[_page(r.prompt)]}, stage="dlvqa.page_summary")
    stub.reply({"summary": DOC_SUMMARY}, stage="dlvqa.doc_summary")
    stub.reply(
        lambda r: {"facts": [{"type": k, "text": t, "components": c} for k, t, c in FACTS[_page(r.prompt)]]},
        stage="dlvqa.facts",
    )
    stub.reply(lambda r: question(r.prompt), stage="dlvqa.question")
    return stub


def model_toml(url: str) -> str:
    """docgraph.toml pointing the build, answer and judge roles at the stub (fast retries)."""
    roles = "".join(
        f"""
[models.{role}]
base_url = "{url}"
model = "stub-model"
timeout_s = 10.0
max_retries = 1
backoff_base_s = 0.01
max_concurrency = 4
"""
        for role in ("build", "answer", "judge")
    )
    return roles + SETTINGS_TOML
