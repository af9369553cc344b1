"""Qasper: the official format (``{paper_id: {title, abstract, full_text, qas}}``) and the
flat "navin164" subset (``papers.jsonl``, ``paragraphs.jsonl``, ``qasper_eval_qas.jsonl``).

Passages are paper paragraphs, id ``"<paper_id>::<section_idx>::<paragraph_idx>"`` (the
subset's own scheme; empty paragraphs are skipped). Gold passages are the annotated
evidence paragraphs found in the paper; evidence that points at a figure or table
("FLOAT SELECTED: …") has no passage and goes to ``extra['float_evidence']``, other
evidence not found to ``extra['unmatched_evidence']``. The answer is the list of the
annotators' answers (alternatives): extractive spans joined with ", ", else the free-form
answer, else "Yes"/"No", else "Unanswerable".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from .base import Benchmark, Corpus, Passage, QAItem, read_json, read_jsonl, require

FLOAT_PREFIX = "FLOAT SELECTED"
SUBSET_FILES = ("papers.jsonl", "paragraphs.jsonl", "qasper_eval_qas.jsonl")


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def _annotation_answer(answer: Mapping[str, Any]) -> tuple[str, str]:
    """(answer text, answer format) of one official annotation."""
    if answer.get("unanswerable"):
        return "Unanswerable", "none"
    spans = [str(s) for s in answer.get("extractive_spans") or [] if str(s).strip()]
    if spans:
        return ", ".join(spans), "extractive"
    free = str(answer.get("free_form_answer") or "").strip()
    if free:
        return free, "abstractive"
    if answer.get("yes_no") is not None:
        return ("Yes" if answer["yes_no"] else "No"), "boolean"
    return "Unanswerable", "none"


def _gold_from_evidence(evidence: Iterable[str], lookup: Mapping[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(passage ids, float evidence, unmatched evidence) for evidence strings."""
    gold: list[str] = []
    floats: list[str] = []
    unmatched: list[str] = []
    for text in evidence:
        text = str(text)
        found = lookup.get(_norm(text))
        if found is not None:
            if found not in gold:
                gold.append(found)
        elif text.startswith(FLOAT_PREFIX):
            floats.append(text)
        elif text.strip():
            unmatched.append(text)
    return gold, floats, unmatched


def _unique_id(base: str, used: set[str]) -> str:
    qid, k = base, 1
    while qid in used:
        k += 1
        qid = f"{base}#{k}"
    used.add(qid)
    return qid


def load_qasper_official(path: Path | str, prefix: str = "") -> Benchmark:
    """Papers in the official JSON format. ``prefix`` is put before doc and passage ids
    (used when several sources are loaded together). Question ids are
    ``"<paper_id>/<question_id>"``, with ``#k`` added to repeats."""
    path = Path(path)
    data = read_json(require(path, "Qasper JSON file"))
    if not isinstance(data, Mapping):
        raise InputError("expected the official Qasper format: an object of papers by id", path=str(path))
    passages: list[Passage] = []
    items: list[QAItem] = []
    used: set[str] = set()
    for paper_id, paper in data.items():
        doc_id = f"{prefix}{paper_id}"
        lookup: dict[str, str] = {}
        for s_idx, section in enumerate(paper.get("full_text") or []):
            name = str(section.get("section_name") or "")
            for p_idx, text in enumerate(section.get("paragraphs") or []):
                if not str(text).strip():
                    continue
                pid = f"{doc_id}::{s_idx}::{p_idx}"
                passages.append(Passage(id=pid, title=name, text=str(text), doc_id=doc_id))
                lookup.setdefault(_norm(text), pid)
        for qa in paper.get("qas") or []:
            answers: list[str] = []
            formats: list[str] = []
            evidence: list[str] = []
            for annotation in qa.get("answers") or []:
                text, fmt = _annotation_answer(annotation.get("answer") or {})
                answers.append(text)
                formats.append(fmt)
                evidence.extend((annotation.get("answer") or {}).get("evidence") or [])
            gold, floats, unmatched = _gold_from_evidence(dict.fromkeys(evidence), lookup)
            extra: dict[str, Any] = {
                "float_evidence": floats,
                "unmatched_evidence": unmatched,
                "question_id": qa.get("question_id", ""),
                "title": paper.get("title", ""),
            }
            items.append(
                QAItem(
                    id=_unique_id(f"{doc_id}/{qa.get('question_id', len(items))}", used),
                    question=str(qa["question"]),
                    answer=list(dict.fromkeys(answers)) or ["Unanswerable"],
                    answer_format=formats[0] if formats else "",
                    doc_ids=[doc_id],
                    gold_passages=gold,
                    unanswerable=bool(answers) and all(f == "none" for f in formats),
                    extra=extra,
                )
            )
    return Benchmark(name="qasper", items=items, corpus=Corpus(name="qasper", passages=passages))


def load_qasper_subset(folder: Path | str, prefix: str = "") -> Benchmark:
    """The flat subset: ``papers.jsonl`` (paper_id, title, abstract), ``paragraphs.jsonl``
    (paragraph_id, paper_id, section_name, text …) and ``qasper_eval_qas.jsonl`` (paper_id,
    question_id, question, answers: [str], evidence: [str])."""
    folder = Path(folder)
    papers = {str(p["paper_id"]): p for p in read_jsonl(require(folder / SUBSET_FILES[0], "papers.jsonl"))}
    passages: list[Passage] = []
    lookups: dict[str, dict[str, str]] = {}
    for row in read_jsonl(require(folder / SUBSET_FILES[1], "paragraphs.jsonl")):
        if not str(row.get("text", "")).strip():
            continue
        paper = str(row["paper_id"])
        pid = f"{prefix}{row['paragraph_id']}"
        passages.append(
            Passage(id=pid, title=str(row.get("section_name", "")), text=str(row["text"]), doc_id=f"{prefix}{paper}")
        )
        lookups.setdefault(paper, {}).setdefault(_norm(row["text"]), pid)
    items: list[QAItem] = []
    used: set[str] = set()
    for qa in read_jsonl(require(folder / SUBSET_FILES[2], "qasper_eval_qas.jsonl")):
        paper = str(qa["paper_id"])
        gold, floats, unmatched = _gold_from_evidence(qa.get("evidence") or [], lookups.get(paper, {}))
        answers = [str(a) for a in qa.get("answers") or []]
        items.append(
            QAItem(
                id=_unique_id(f"{prefix}{paper}/{qa.get('question_id', len(items))}", used),
                question=str(qa["question"]),
                answer=answers or ["Unanswerable"],
                doc_ids=[f"{prefix}{paper}"],
                gold_passages=gold,
                unanswerable=not answers or all(a.strip().lower() == "unanswerable" for a in answers),
                extra={
                    "float_evidence": floats,
                    "unmatched_evidence": unmatched,
                    "question_id": qa.get("question_id", ""),
                    "title": papers.get(paper, {}).get("title", ""),
                },
            )
        )
    return Benchmark(name="qasper", items=items, corpus=Corpus(name="qasper", passages=passages))


def load_qasper(path: Path | str) -> Benchmark:
    """Qasper from an official-format ``.json`` file, a subset folder, or a folder holding
    either or both (every ``*.json`` file and every sub-folder with the subset's files).
    With more than one source, doc and passage ids get a ``"<source>/"`` prefix, since the
    sources may hold the same paper in different versions."""
    path = Path(path)
    require(path, "Qasper data")
    if path.is_file():
        return load_qasper_official(path)
    if all((path / name).exists() for name in SUBSET_FILES):
        return load_qasper_subset(path)
    sources: list[tuple[str, Path, bool]] = [(p.stem, p, True) for p in sorted(path.glob("*.json"))]
    sources += [
        (d.name, d, False)
        for d in sorted(path.iterdir())
        if d.is_dir() and all((d / name).exists() for name in SUBSET_FILES)
    ]
    if not sources:
        raise InputError("no Qasper JSON file or subset folder (papers.jsonl …) here", path=str(path))
    prefixed = len(sources) > 1
    parts = [
        (load_qasper_official if official else load_qasper_subset)(src, f"{name}/" if prefixed else "")
        for name, src, official in sources
    ]
    return Benchmark(
        name="qasper",
        items=[i for b in parts for i in b.items],
        corpus=Corpus(name="qasper", passages=[p for b in parts if b.corpus is not None for p in b.corpus.passages]),
    )
