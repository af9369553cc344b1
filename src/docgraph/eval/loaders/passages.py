"""Passage corpora of the multi-hop sets and matching gold paragraphs to corpus ids."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from .base import Corpus, Passage, read_json, require, unique_title_ids


def corpus_path_for(questions: Path) -> Path:
    """HippoRAG's naming: ``<name>.json`` has its passages in ``<name>_corpus.json``."""
    return questions.with_name(f"{questions.stem}_corpus.json")


def passage_text(value: Any) -> str:
    """A passage's text from a string or a list of sentences (HotpotQA keeps the leading
    spaces of its sentences, so they are joined as they are)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "".join(str(s) for s in value).strip()
    raise InputError(f"passage text must be a string or a list of sentences, got {type(value).__name__}")


def load_corpus(path: Path, name: str) -> Corpus:
    """A corpus file: a list of ``{title, text}`` records (MuSiQue, HippoRAG) or a
    ``{title: [sentences]}`` map (HotpotQA). Ids: the title, ``"<title>#k"`` for repeats."""
    data = read_json(path)
    if isinstance(data, Mapping):
        pairs = [(str(title), passage_text(text)) for title, text in data.items()]
    elif isinstance(data, list):
        pairs = []
        for number, record in enumerate(data):
            if not isinstance(record, Mapping) or "text" not in record:
                raise InputError(f"corpus record {number} has no 'text'", path=str(path))
            pairs.append((str(record.get("title", "")), passage_text(record["text"])))
    else:
        raise InputError("a corpus is a JSON list of {title, text} or a {title: sentences} object", path=str(path))
    ids = unique_title_ids(title for title, _ in pairs)
    return Corpus(name=name, passages=[Passage(id=i, title=t, text=x) for i, (t, x) in zip(ids, pairs)])


class PassageMatcher:
    """Finds the corpus id of a paragraph: by exact (title, text), else by a title that
    names exactly one passage."""

    def __init__(self, corpus: Corpus) -> None:
        self._exact: dict[tuple[str, str], str] = {}
        self._by_title: dict[str, list[str]] = {}
        for passage in corpus.passages:
            self._exact.setdefault((passage.title, " ".join(passage.text.split())), passage.id)
            self._by_title.setdefault(passage.title, []).append(passage.id)

    def match(self, title: str, text: str | None = None) -> str | None:
        if text is not None:
            found = self._exact.get((title, " ".join(text.split())))
            if found is not None:
                return found
        candidates = self._by_title.get(title, [])
        return candidates[0] if len(candidates) == 1 else None

    def match_all(self, paragraphs: Iterable[tuple[str, str | None]]) -> tuple[list[str], list[str]]:
        """``(ids, unmatched_titles)`` for (title, text) pairs; ids de-duplicated, order kept."""
        ids: list[str] = []
        unmatched: list[str] = []
        for title, text in paragraphs:
            found = self.match(title, text)
            if found is None:
                unmatched.append(title)
            elif found not in ids:
                ids.append(found)
        return ids, unmatched


def question_and_corpus_paths(path: Path | str, default_file: str, corpus_path: Path | str | None) -> tuple[Path, Path]:
    """The questions file (``path``, or ``default_file`` inside the folder ``path``) and its corpus."""
    path = Path(path)
    questions = path / default_file if path.is_dir() else path
    require(questions, "questions file")
    corpus = Path(corpus_path) if corpus_path is not None else corpus_path_for(questions)
    return questions, require(corpus, "passage corpus (<questions>_corpus.json)")


def question_records(path: Path) -> list[dict[str, Any]]:
    """The list of question objects in a JSON file."""
    data = read_json(path)
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError("expected a JSON list of question objects", path=str(path))
    return data


def supporting_paragraphs(paragraphs: list[dict[str, Any]], text_key: str) -> list[tuple[str, str | None]]:
    """(title, text) of the paragraphs marked ``is_supporting``."""
    return [(str(p.get("title", "")), p.get(text_key)) for p in paragraphs if p.get("is_supporting")]
