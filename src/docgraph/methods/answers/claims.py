"""The claim check: every sentence of an answer held against what it cites, without a model.

A sentence is checked when it states something checkable (a number, a date, a proper
name: ``figures``, ``names``) or carries citation markers. What it may rest on is the
``Support`` of each citation it carries: amounts and percentages must be in the cited
regions' text or the cited page's table rows — and when the sentence names rows of those
tables (``named_rows``), in those rows or in the cited prose; years, dates and names may
also come from anywhere on the cited page, the document's title or the question (a
heading or a title often carries them). A citation of a whole page lets the whole page
count as cited.

Status per sentence (``types.ClaimCheck``):

- ``supported``: everything it states is found (or it states nothing checkable);
- ``partly``: its numbers and dates are found, but a year or a name is not;
- ``unsupported``: a number or a date is not found, or nothing it states is;
- ``uncited``: it states something checkable and cites nothing the answer lists.

``apply_check(answer, pages, mode)`` records the result on the answer; in ``drop`` mode it
also removes the unsupported sentences and says so in the answer's warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...types import Answer, Citation, ClaimCheck, ComponentKind, Page
from .answer_sentences import Span, answer_sentences, markers
from .figures import EvidenceFigures, claim_figures
from .named_rows import Row, named_rows, table_rows
from .names import claim_names, evidence_key, name_found

VERIFY_MODES = ("mark", "drop", "off")
PageLookup = Callable[[str, int], "Page | None"]


@dataclass(frozen=True)
class Support:
    """What one citation lets a sentence claim: ``cited`` (the cited regions' text and the
    page's table rows), ``context`` (all of the page's text and the document's title), and
    of ``cited``: ``prose`` (what is not a table) and ``rows`` (tables' (label, row) pairs)."""

    cited: str
    context: str = ""
    prose: str | None = None
    rows: tuple[Row, ...] = ()

    def prose_text(self) -> str:
        return self.cited if self.prose is None else self.prose


def _component_text(component) -> str:
    return "\n".join(t for t in dict.fromkeys((component.text, component.markdown or "")) if t)


def support_of(citation: Citation, page: Page | None) -> Support:
    """The ``Support`` of ``citation`` read from its stored ``page`` (None: nothing)."""
    title = citation.document_title or citation.doc_id
    if page is None:
        return Support("", title)
    wanted = set(citation.component_ids)
    cited = [c for c in page.components if not wanted or c.id in wanted]
    tables = [c for c in page.components if c.kind is ComponentKind.TABLE and c not in cited]
    everything = "\n".join(_component_text(c) for c in page.components)
    with_rows = [(c, table_rows(c.markdown or "")) for c in cited + tables]
    prose = "\n".join(_component_text(c) for c, rows in with_rows if not rows)
    return Support(
        "\n".join(_component_text(c) for c in cited + tables),
        f"{everything}\n{title}",
        prose,
        tuple(row for _, rows in with_rows for row in rows),
    )


def _status(found: int, missing_hard: bool, missing_soft: bool) -> str:
    if not (missing_hard or missing_soft):
        return "supported"
    if missing_hard or not found:
        return "unsupported"
    return "partly"


def check_sentence(span: Span, supports: Mapping[int, Support], question: str = "") -> ClaimCheck | None:
    """The check of one sentence (module docstring); None when it states nothing checkable
    and cites nothing."""
    figures, dates = claim_figures(span.text)
    names = claim_names(span.text)
    numbers = markers(span.text)
    checked = [f.text for f in figures] + [d.text for d in dates] + names
    if not checked and not numbers:
        return None
    cited = [supports[n] for n in numbers if n in supports]
    base = dict(sentence=span.text, start=span.start, end=span.end, citations=numbers, checked=checked)
    if not cited:
        return ClaimCheck(status="uncited", missing=checked, **base)
    strict = EvidenceFigures("\n".join(s.cited for s in cited))
    rows = named_rows(span.text, [row for s in cited for row in s.rows])
    in_rows = (
        EvidenceFigures("\n".join([text for _, text in rows] + [s.prose_text() for s in cited])) if rows else strict
    )
    wide_text = "\n".join(s.cited + "\n" + s.context for s in cited)
    wide = EvidenceFigures(wide_text + "\n" + question)
    names_key = evidence_key(wide_text + "\n" + question)
    missing_hard: list[str] = []
    missing_soft: list[str] = []
    for figure in figures:
        if figure.kind == "year":
            if not wide.has_figure(figure):
                missing_soft.append(figure.text)
        elif not (strict.has_figure(figure) and in_rows.has_figure(figure)):
            missing_hard.append(figure.text)
    missing_hard += [d.text for d in dates if not wide.has_date(d)]
    missing_soft += [n for n in names if not name_found(n, names_key)]
    found = len(checked) - len(missing_hard) - len(missing_soft)
    return ClaimCheck(
        status=_status(found, bool(missing_hard), bool(missing_soft)), missing=missing_hard + missing_soft, **base
    )


def check_text(text: str, supports: Mapping[int, Support], question: str = "") -> list[ClaimCheck]:
    """The checks of every checkable sentence of ``text`` against ``supports`` (by citation number)."""
    return [c for span in answer_sentences(text) if (c := check_sentence(span, supports, question)) is not None]


def answer_supports(answer: Answer, page_of: PageLookup) -> dict[int, Support]:
    """The ``Support`` of each of the answer's citations, by citation number."""
    pages: dict[tuple[str, int], Page | None] = {}
    out: dict[int, Support] = {}
    for citation in answer.citations:
        key = (citation.doc_id, citation.page)
        if key not in pages:
            pages[key] = page_of(*key)
        out[citation.number] = support_of(citation, pages[key])
    return out


def _without(text: str, claims: list[ClaimCheck]) -> str:
    """``text`` with the spans of ``claims`` cut out, and the blank lines it leaves."""
    out, last = [], 0
    for claim in sorted(claims, key=lambda c: c.start):
        out.append(text[last : claim.start])
        last = claim.end
    out.append(text[last:])
    lines = [line.rstrip() for line in "".join(out).splitlines()]
    kept = [line for line in lines if line.strip(" -*•") or not line]
    return "\n".join(kept).strip()


def dropped_warning(claims: list[ClaimCheck]) -> str:
    """The warning of ``drop`` mode: how many sentences went and what their evidence lacked."""
    lacking = list(dict.fromkeys(item for c in claims for item in c.missing))
    shown = ", ".join(lacking[:8]) + (" …" if len(lacking) > 8 else "")
    return (
        f"the claim check removed {len(claims)} unsupported sentence(s): the evidence they cite does not "
        f"hold {shown or 'what they state'} (answers.verify = drop)"
    )


def apply_check(answer: Answer, page_of: PageLookup, mode: str = "mark") -> Answer:
    """``answer`` with its claim check (``mode`` is ``answers.verify``; see the module docstring)."""
    if mode not in VERIFY_MODES:
        raise ValueError(f"answers.verify must be one of {', '.join(VERIFY_MODES)}, not {mode!r}")
    if mode == "off":
        return answer.model_copy(update={"claims": [], "verify": "off"})
    supports = answer_supports(answer, page_of)
    claims = check_text(answer.text, supports, answer.question)
    update: dict = {"claims": claims, "verify": mode}
    if mode == "drop":
        gone = [c for c in claims if c.status == "unsupported"]
        if gone:
            text = _without(answer.text, gone) or "(the claim check removed every sentence of the answer)"
            update.update(
                text=text,
                claims=check_text(text, supports, answer.question),
                warnings=[*answer.warnings, dropped_warning(gone)],
            )
    return answer.model_copy(update=update)
