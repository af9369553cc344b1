"""Prompt rendering is one pass (issue 16): text put into a prompt is never templated again."""

from __future__ import annotations

from docgraph.prompts import fill_placeholders


def test_a_value_containing_a_placeholder_is_not_substituted():
    template = 'Page:\n{{page}}\nGraph so far:\n{{graph}}\nJSON: {"a": 1}'
    out = fill_placeholders(template, {"page": "a page that mentions {{graph}} literally", "graph": "G"})
    assert out == 'Page:\na page that mentions {{graph}} literally\nGraph so far:\nG\nJSON: {"a": 1}'
    assert fill_placeholders("{{missing}} {{page}}", {"page": "p"}) == "{{missing}} p"


def test_kg4vd_extract_prompt_keeps_a_page_that_quotes_a_placeholder():
    from docgraph.prompts import render_prompt

    page = "P1: the template syntax {{graph}} is shown on this slide"
    out = render_prompt(
        "docgraph.methods.kg4vd",
        "extract.md",
        manifest=page,
        graph="(empty graph)",
        page="1",
        round="1",
        max_rounds="5",
        schema="S",
        feedback="none",
    )
    assert page in out and out.count("(empty graph)") == 1
