"""The corpus of ``benchmarks/scale.py`` (issue 14): whole shared documents, then rendered
passage sets, then re-titled copies, until a page target is reached (``assemble``; the
rules are in scale.py's module doc)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SOURCES = ("documents", "kg4vd_test", "mmlongbench_doc/documents")
PASSAGE_SETS = (("hotpotqa", "hotpotqa_train_corpus.json"), ("musique", "musique_train_corpus.json"))


def page_count(path: Path) -> int:
    import pymupdf

    with pymupdf.open(path) as doc:
        return doc.page_count


def sources(data: Path, work: Path) -> Iterator[tuple[str, Path]]:
    """(corpus file name, source file) of every distinct document, in corpus order; a
    passage set is rendered only when the iteration reaches it."""
    for folder in SOURCES:
        for pdf in sorted((data / folder).glob("*.pdf")):
            yield f"{folder.split('/')[0]}__{pdf.name}", pdf
    from docgraph.eval.corpus import passage_spec
    from docgraph.eval.loaders.passages import load_corpus

    for name, file in PASSAGE_SETS:
        if (data / "multihop" / file).exists():
            print(f"the {name} passages as a PDF, one passage per page (rendered once) …", flush=True)
            spec = passage_spec(work / "passages", name, load_corpus(data / "multihop" / file, name).passages, [])
            yield f"{name}__{spec.files[0].name}", spec.files[0]


def link(src: Path, dest: Path) -> None:
    if not dest.exists():
        try:
            os.link(src, dest)
        except OSError:  # another file system
            shutil.copyfile(src, dest)


def distinct_copy(src: Path, dest: Path, copy: int) -> None:
    """``src`` saved again with another title: other bytes, so another document id."""
    import pymupdf

    if dest.exists():
        return
    with pymupdf.open(src) as doc:
        doc.set_metadata({"title": f"{doc.metadata.get('title') or src.stem} (copy {copy})"})
        doc.save(dest.with_suffix(".tmp"), garbage=1, deflate=True)
    dest.with_suffix(".tmp").replace(dest)


def assemble(data: Path, work: Path, target: int) -> dict[str, Any]:
    """Fill ``<work>/corpus`` with whole documents until ``target`` pages (module doc)."""
    from docgraph.documents.formats import sha256_file

    out = work / "corpus"
    out.mkdir(parents=True, exist_ok=True)
    taken: list[tuple[str, Path, int]] = []
    total, seen, todo = 0, set(), sources(data, work)
    while total < target and (source := next(todo, None)):  # a passage set is rendered only when needed
        name, path = source
        if (digest := sha256_file(path)) in seen:
            continue  # the same bytes as an earlier source: ingest would add it once
        seen.add(digest)
        taken.append((name, path, page_count(path)))
        link(path, out / name)
        total += taken[-1][2]
    files = [name for name, _, _ in taken]
    copy = 2
    while taken and total < target:
        for name, path, pages in taken:
            if total >= target:
                break
            files.append(f"{Path(name).stem}-copy{copy}.pdf")
            distinct_copy(path, out / files[-1], copy)
            total += pages
        copy += 1
    return {"target": target, "pages": total, "files": files, "distinct": len(taken)}
