"""``--review DIR``: the intermediate artifacts as editable JSONL that a rerun picks up.

One file per stage in DIR — ``page_summaries.jsonl``, ``doc_summaries.jsonl``,
``facts.jsonl``, ``clusters.jsonl`` — one row per artifact, each naming its document by
file name (``doc_id``, as in the dataset). A run rewrites a document's rows after each
stage. On the next run, a document's rows that a person changed (edited, deleted or added
rows) are that stage's output for the document, and later stages are recomputed from them
(model calls whose prompts did not change are answered by the response cache); rows left
as written are recomputed like any other output, so they follow edits upstream. Deleting
all of a document's rows in a file asks for that stage afresh.

"Changed" means the editable fields (``EDITABLE``) differ from the stage's last model
output, which the workspace keeps (namespace ``dlvqa.review``); other fields (pages,
status) are written for the reader and ignored when read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ...errors import InputError
from ...store.base import Store

NAMESPACE = "dlvqa.review"
EDITABLE: dict[str, tuple[str, ...]] = {
    "page_summaries": ("page", "summary"),
    "doc_summaries": ("summary",),
    "facts": ("id", "page", "type", "text", "components"),
    "clusters": ("cluster", "fact_ids", "keep"),
}
DEFAULTS: dict[str, dict[str, Any]] = {"clusters": {"keep": True}, "facts": {"type": "text", "components": []}}
M = TypeVar("M", bound=BaseModel)


def _canonical(stage: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    fields, defaults = EDITABLE[stage], DEFAULTS.get(stage, {})
    return sorted(
        json.dumps({f: row.get(f, defaults.get(f)) for f in fields}, sort_keys=True, ensure_ascii=False) for row in rows
    )


class Review:
    """The review folder (``None``: no review; nothing is read or written)."""

    def __init__(self, folder: Path | str | None, store: Store):
        self.folder = Path(folder) if folder is not None else None
        self.store = store
        self._rows: dict[str, list[dict[str, Any]]] = {}
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, stage: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{stage}.jsonl"

    def _all(self, stage: str) -> list[dict[str, Any]]:
        if stage not in self._rows:
            self._rows[stage] = _read(self.path(stage))
        return self._rows[stage]

    def edited(self, stage: str, doc: str) -> list[dict[str, Any]] | None:
        """The document's rows of ``stage`` when a person changed them (see the module doc), else None."""
        if self.folder is None:
            return None
        rows = [r for r in self._all(stage) if r.get("doc_id") == doc]
        if not rows:
            return None
        written = self.store.get_record(NAMESPACE, f"{stage}:{doc}")
        return rows if written is None or _canonical(stage, rows) != written else None

    def write(
        self, stage: str, doc: str, rows: Sequence[dict[str, Any]], *, computed: bool, doc_key: str | None = None
    ) -> None:
        """Replace the document's rows of ``stage``; ``computed``: they are the model's output."""
        if self.folder is None:
            return
        rows = [{"doc_id": doc, **{k: v for k, v in r.items() if k != "doc_id"}} for r in rows]
        old = self._all(stage)
        first = next((i for i, r in enumerate(old) if r.get("doc_id") == doc), len(old))
        others = [r for r in old if r.get("doc_id") != doc]
        at = sum(1 for r in old[:first] if r.get("doc_id") != doc)
        self._rows[stage] = others[:at] + rows + others[at:]
        _write(self.path(stage), self._rows[stage])
        if computed:
            self.store.put_record(NAMESPACE, f"{stage}:{doc}", _canonical(stage, rows), doc_id=doc_key)

    def parse(self, stage: str, rows: Sequence[dict[str, Any]], model: type[M]) -> list[M]:
        """``rows`` as ``model`` objects; an ``InputError`` names the file and the bad row."""
        out = []
        for row in rows:
            try:
                out.append(model.model_validate({k: v for k, v in row.items() if k in model.model_fields}))
            except ValidationError as exc:
                raise InputError(
                    f"a row of {stage}.jsonl is not valid ({exc.errors()[0]['msg']}): "
                    f"{json.dumps(row, ensure_ascii=False)[:200]}; fix or delete it",
                    path=str(self.path(stage)),
                ) from exc
        return out


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"line {number} is not valid JSON ({exc.msg}); fix or delete it", path=str(path)) from exc
        if not isinstance(row, dict) or "doc_id" not in row:
            raise InputError(f"line {number} is not a JSON object with a doc_id", path=str(path))
        rows.append(row)
    return rows


def _write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
