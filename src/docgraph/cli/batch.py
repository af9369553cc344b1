"""``docgraph ask --questions FILE --out OUT``: many questions in one process, resumable.

Questions come from a ``.txt`` file (one per line; blank lines and ``#`` comments skipped;
a question's id is its line number) or a ``.jsonl`` file (``{"question": …}`` with an
optional ``"id"``, ``"method"`` and ``"mode"`` per line). Each answer is written to OUT as
one ``results.BatchLine`` the moment it is ready, flushed and synced, so an interrupted run
loses at most the question it was answering. Run the same command again and the questions
already answered in OUT are skipped; a last line cut short by the interruption is removed
first. A question that fails gets a line with its ``error`` and the run goes on; a rerun
asks it again. An unbuilt method stops the run before anything is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DocgraphError, InputError, NotBuiltError
from ..progress import Progress
from ..results import BatchLine, ask_result


@dataclass(frozen=True)
class BatchQuestion:
    id: str
    question: str
    options: dict[str, Any]


def read_questions(path: Path) -> list[BatchQuestion]:
    """The questions of a ``.txt`` or ``.jsonl`` file; a clear error names the bad line."""
    if not path.is_file():
        raise InputError(f"no questions file {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    questions: list[BatchQuestion] = []
    is_jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    for number, line in enumerate(lines, 1):
        if not line.strip() or (not is_jsonl and line.lstrip().startswith("#")):
            continue
        if not is_jsonl:
            questions.append(BatchQuestion(str(number), line.strip(), {}))
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}, line {number}: not JSON ({exc.msg}); each line must be an object "
                'like {"id": "q1", "question": "…"}'
            ) from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise InputError(f'{path}, line {number}: needs a "question" string')
        options = {key: row[key] for key in ("method", "mode") if row.get(key)}
        questions.append(BatchQuestion(str(row.get("id", number)), row["question"].strip(), options))
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise InputError(f"{path}: the id {q.id!r} is used twice; ids must be unique to resume a run")
        seen.add(q.id)
    return questions


def answered_lines(out: Path) -> tuple[list[BatchLine], bool]:
    """The answered lines of ``out`` up to the first unreadable one, and whether that is all
    of it (False when a torn line or a failed question's line follows or sits between)."""
    if not out.exists():
        return [], True
    data = out.read_bytes()
    answered: list[BatchLine] = []
    whole = data.endswith(b"\n") or not data
    for raw in data.splitlines():
        try:
            line = BatchLine.model_validate_json(raw)
        except ValueError:
            return answered, False  # a line that does not parse ends what can be trusted
        if line.result is None:
            whole = False
        else:
            answered.append(line)
    return answered, whole


def finished_ids(out: Path) -> set[str]:
    """Ids already answered in ``out``. Before a resumed run, ``out`` is rewritten to hold
    only those: a torn last line (no newline, or unreadable) and the lines of questions that
    failed are dropped, so failed questions are asked again and no id appears twice."""
    answered, whole = answered_lines(out)
    if not whole:
        partial = out.with_name(out.name + ".partial")
        partial.write_text("".join(line.model_dump_json() + "\n" for line in answered), encoding="utf-8")
        os.replace(partial, out)
    return {line.id for line in answered}


def answer_all(
    questions: list[BatchQuestion], out: Path, ask: Callable[[BatchQuestion], Any], progress: Progress
) -> Iterator[BatchLine]:
    """Ask every question not yet in ``out`` and append its line; yields each line written."""
    done = finished_ids(out)
    todo = [q for q in questions if q.id not in done]
    progress.start(len(todo), f"answering ({len(done)} already in {out.name})" if done else "answering")
    handle = None
    try:
        for question in todo:
            try:
                line = BatchLine(id=question.id, question=question.question, result=ask_result(ask(question)))
            except NotBuiltError:
                raise  # the whole run needs a build first; nothing is written for it
            except DocgraphError as exc:
                line = BatchLine(id=question.id, question=question.question, error=str(exc))
            if handle is None:  # opened at the first answer: a run that cannot start leaves no file
                out.parent.mkdir(parents=True, exist_ok=True)
                handle = out.open("a", encoding="utf-8")
            handle.write(line.model_dump_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
            progress.advance(1)
            yield line
    finally:
        if handle is not None:
            handle.close()
        progress.close()
