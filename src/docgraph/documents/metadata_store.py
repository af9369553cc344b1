"""Shelf labels kept beside their documents: ``read_metadata`` / ``ensure_metadata`` /
``update_metadata`` keep what ``documents.metadata`` guesses in the store (records namespace
``document.meta``, deleted with the document), so a workspace ingested before labels existed
gets them on first use, and a label guessed by older rules (``metadata.GUESSER``) is guessed
again with the user's fields kept.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..store.base import Store
from ..types import Document, Page
from . import metadata
from .metadata import FIELDS, DocumentMeta, file_stem, guess_metadata
from .running_lines import sample_numbers

NAMESPACE = "document.meta"
VERSION_META = "document.meta:index_version"  # a new uuid whenever a label is set by hand (a cache stamp)
HINTS_KEPT = 8  # the first GUESSER that keeps the file's hints with the label


def read_metadata(store: Store, doc_ids: Iterable[str] | None = None) -> dict[str, DocumentMeta]:
    """The stored labels by document id (all documents', or ``doc_ids``'); missing ones left out."""
    if doc_ids is None:
        return {key: DocumentMeta.model_validate(value) for key, value in store.iter_records(NAMESPACE)}
    return {key: DocumentMeta.model_validate(value) for key, value in store.get_records(NAMESPACE, doc_ids).items()}


def store_guess(
    store: Store,
    doc: Document,
    metadata_title: str | None = None,
    display: str | None = None,
    pages: Sequence[Page] | None = None,
) -> DocumentMeta:
    """Guess ``doc``'s label from its first two stored pages and a sample of the rest
    (``running_lines.sample_numbers``) and keep it; fields the user set
    stay as they are. What the file gave (``metadata_title``, ``display``) is kept with the
    label, so a later guess has it without the file; a label guessed before it was kept reads
    the display line from the file when it is still there. ``pages``: all of the document's
    pages when the caller holds them (ingest), so none is read back from the store."""
    held = {p.number: p for p in pages or ()}
    numbers = sorted({1, 2} | set(sample_numbers(held or store.page_numbers(doc.id))))
    chosen = [p for n in numbers if (p := held.get(n) if held else store.get_page(doc.id, n)) is not None]
    old = read_metadata(store, [doc.id]).get(doc.id)
    if metadata_title is None and display is None:
        hints = old.hints if old is not None and old.guesser >= HINTS_KEPT else {"display": _file_display(doc) or ""}
        metadata_title, display = hints.get("metadata_title"), hints.get("display")
    guess = guess_metadata(doc, chosen, metadata_title, display)
    if old is not None:
        for name in FIELDS:
            if old.sources.get(name) == "user":
                setattr(guess, name, getattr(old, name))
                guess.sources[name] = "user"
    store.put_record(NAMESPACE, doc.id, guess.model_dump(), doc_id=doc.id)
    return guess


def _file_display(doc: Document) -> str | None:
    """The display line of ``doc``'s own file, if it is a PDF still where it was added."""
    from .cover_text import display_line  # reads the PDF: only for a label guessed before hints were kept

    path = Path(doc.path)
    return display_line(path) if doc.kind == "pdf" and path.is_file() else None


def labels_version(store: Store) -> str | None:
    """A stamp that changes whenever a label is set by hand (``update_metadata``). A guessed
    label follows from its document's pages, so a table derived from the labels is cached by
    this stamp together with the list of ready documents it covers (a guess is written as a
    document becomes ready, and a failed or removed ingest leaves the store as it was)."""
    return store.get_meta(VERSION_META)


def ensure_metadata(store: Store, documents: Iterable[Document]) -> dict[str, DocumentMeta]:
    """Every ready document's label, guessing (and keeping) those not guessed yet — a
    workspace ingested before labels existed — or guessed by older rules (the user's fields
    kept)."""
    docs = [d for d in documents if d.status == "ready"]
    known = read_metadata(store, [d.id for d in docs])
    for doc in docs:
        if doc.id not in known or known[doc.id].guesser < metadata.GUESSER:
            known[doc.id] = store_guess(store, doc)
    return known


def update_metadata(store: Store, doc: Document, values: Mapping[str, str]) -> DocumentMeta:
    """Set fields by hand (``values``: field → text; "" clears one); they are the user's from
    now on. The document's title row follows a new title, so lists and citations show it."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown metadata field(s) {', '.join(unknown)}; use {', '.join(FIELDS)}")
    meta = ensure_metadata(store, [doc]).get(doc.id) or DocumentMeta(file_name=file_stem(doc))
    for name, value in values.items():
        setattr(meta, name, " ".join(value.split()))
        meta.sources[name] = "user"
    with store.transaction():
        store.put_record(NAMESPACE, doc.id, meta.model_dump(), doc_id=doc.id)
        store.set_meta(VERSION_META, uuid.uuid4().hex)
        if values.get("title"):
            store.put_document(doc.model_copy(update={"title": meta.title}))
    return meta
