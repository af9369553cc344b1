"""Joining text lines into paragraph text (shared by the text-layer and OCR paths)."""

from __future__ import annotations


def lines_to_text(lines: list[str]) -> str:
    """Join lines with spaces, undoing end-of-line hyphenation ("exam-" + "ple" → "example")."""
    text = ""
    for line in (ln.strip() for ln in lines):
        if not line:
            continue
        if text.endswith("-") and len(text) > 1 and text[-2].isalpha() and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text
