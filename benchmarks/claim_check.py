"""How well the claim check (``docgraph.methods.answers.claims``) flags what a citation does not hold.

Scripted answers are built from the gold evidence pages of the development sets — the
FinanceBench filings' evidence pages and MMLongBench-Doc's gold pages of text and table
questions — ingested as real pages (only those pages, cut out of the PDFs), so the check
reads the same components it reads behind ``Workspace.ask``. For each gold page, sentences
of its components that state an amount or a percentage become answer sentences citing the
component they come from:

- ``quote``: the sentence as the page says it (must check as supported);
- ``restated``: the same sentence with its numbers written another way — "1,076" as "1076",
  "$1,076 million" as "$1.076 billion", "12.5%" as "12.5 percent" (must check as supported);
- ``changed``: one digit of one amount or percentage changed (must be flagged);
- ``wrong citation``: the quote citing another gold page (of another document when there
  is one; must be flagged).

"Flagged" is any status other than ``supported``. Prints the table docs/reliability.md
quotes; ``--json`` writes the counts too.

    .venv/bin/python benchmarks/claim_check.py [--per-page 6] [--mmlb-pages 80] [--examples 5]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.methods.answers.claims import check_text, support_of
from docgraph.methods.answers.figures import claim_figures
from docgraph.methods.answers.named_rows import table_rows
from docgraph.testing.data import shared_data_dir
from docgraph.text import sentences
from docgraph.types import Citation, ComponentKind, Page

KINDS = ("quote", "restated", "changed", "wrong citation")
MUST_FLAG = ("changed", "wrong citation")
WORST = ["supported", "partly", "uncited", "unsupported"]


@dataclass(frozen=True)
class GoldPage:
    source: str  # "financebench" or "mmlongbench"
    pdf: Path
    page: int  # 1-based page of the source PDF


def financebench_pages(data: Path) -> list[GoldPage]:
    rows = [
        json.loads(line)
        for line in (data / "financebench" / "data" / "financebench_open_source.jsonl").read_text().splitlines()
        if line.strip()
    ]
    out = []
    for row in rows:
        for ev in row.get("evidence") or []:
            pdf = data / "financebench" / "pdfs" / f"{ev['doc_name']}.pdf"
            if pdf.is_file():
                out.append(GoldPage("financebench", pdf, int(ev["evidence_page_num"]) + 1))
    return list(dict.fromkeys(out))


def mmlongbench_pages(data: Path, limit: int) -> list[GoldPage]:
    samples = json.loads((data / "mmlongbench_doc" / "samples.json").read_text())
    out = []
    for row in samples:
        sources = ast.literal_eval(row["evidence_sources"] or "[]")
        if not {"Pure-text (Plain-text)", "Table"} & set(sources):
            continue
        pdf = data / "mmlongbench_doc" / "documents" / row["doc_id"]
        if pdf.is_file():
            out += [GoldPage("mmlongbench", pdf, int(p)) for p in ast.literal_eval(row["evidence_pages"] or "[]")]
        if len({(g.pdf, g.page) for g in out}) >= limit:
            break
    return list(dict.fromkeys(out))


def cut_pages(gold: list[GoldPage], folder: Path) -> dict[Path, list[GoldPage]]:
    """One PDF per source file holding only its gold pages, in order (pages past the end skipped)."""
    import pymupdf

    by_pdf: dict[Path, list[GoldPage]] = defaultdict(list)
    for g in gold:
        by_pdf[g.pdf].append(g)
    out: dict[Path, list[GoldPage]] = {}
    for n, (pdf, pages) in enumerate(sorted(by_pdf.items())):
        with pymupdf.open(pdf) as src:
            kept = sorted({g.page for g in pages if 1 <= g.page <= src.page_count})
            if not kept:
                continue
            doc = pymupdf.open()
            for number in kept:
                doc.insert_pdf(src, from_page=number - 1, to_page=number - 1)
            path = folder / f"{n:02d}-{pdf.stem[:40]}.pdf"
            doc.save(path)
            out[path] = [GoldPage(pages[0].source, pdf, number) for number in kept]
    return out


def claim_sentences(page: Page, limit: int, rng: random.Random) -> list[tuple[str, str]]:
    """(component id, sentence) pairs of the page that state an amount or a percentage."""
    found = []
    for comp in page.components:
        if comp.furniture or not comp.content.strip():
            continue
        rows = table_rows(comp.markdown or "") if comp.kind is ComponentKind.TABLE else []
        # a table row is stated as its cells ("Net income: $ 1,503; $ 1,848; $ 273"), as an answer
        # would state a row; header cells broken across lines are the page's, not a claim
        lines = [f"{label}: " + "; ".join(c for c in row.split(" | ")[1:] if c.strip()) for label, row in rows]
        for sentence in lines or sentences(comp.content):
            sentence = sentence.strip()
            figures, _ = claim_figures(sentence)
            if 20 <= len(sentence) <= 400 and any(f.kind != "year" for f in figures):
                found.append((comp.id, sentence))
    rng.shuffle(found)
    return found[:limit]


_AMOUNT = re.compile(r"(?<![\w.,])(\$?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s?(?:million|billion)\b|%)?(?![\w,]*\d)")


def restate(sentence: str) -> str | None:
    """The sentence with its numbers written another way (None when none can be)."""

    def one(m: re.Match) -> str:
        cur, whole, frac, tail = m.group(1), m.group(2), m.group(3) or "", (m.group(4) or "")
        if tail.strip() == "million" and "," in whole + frac or tail.strip() == "million" and len(whole) >= 4:
            value = float((whole + frac).replace(",", "")) / 1000
            return f"{cur}{value:g} billion"
        if tail == "%":
            return f"{whole}{frac} percent"
        if "," in whole:
            return f"{cur}{whole.replace(',', '')}{frac}{tail}"
        return m.group(0)

    out = _AMOUNT.sub(one, sentence)
    return out if out != sentence else None


def change_number(sentence: str, rng: random.Random) -> str | None:
    """The sentence with one digit of one amount or percentage changed (years left alone)."""
    figures, _ = claim_figures(sentence)
    targets = [f for f in figures if f.kind != "year" and sentence[f.start : f.start + len(f.text)] == f.text]
    if not targets:
        return None
    figure = rng.choice(targets)
    text, start = figure.text, figure.start
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    leading = [i for i in digits if not (i == digits[0] and text[i] == "0")]
    pos = rng.choice(leading or digits)
    new = str((int(text[pos]) + rng.randint(1, 8)) % 10)
    if pos == digits[0] and new == "0" and len(digits) > 1:
        new = "9"
    changed = text[:pos] + new + text[pos + 1 :]
    return sentence[:start] + changed + sentence[start + len(text) :]


def run(per_page: int, mmlb_limit: int, seed: int) -> dict:
    data = shared_data_dir()
    rng = random.Random(seed)
    gold = financebench_pages(data) + mmlongbench_pages(data, mmlb_limit)
    started = time.perf_counter()
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="claim-check-") as tmp:
        folder = Path(tmp)
        cut = cut_pages(gold, folder)
        settings = load_settings(None, environ={}, overrides={"ingest": {"ocr_min_chars": 0}})
        with Workspace(folder / "ws", settings=settings) as ws:
            docs = ws.add(sorted(cut))
            ingest_s = time.perf_counter() - started
            pages: list[tuple[str, Page, str]] = []
            for doc, path in zip(docs, sorted(cut)):
                source = cut[path][0].source
                pages += [(source, ws.store.get_page(doc.id, n), doc.id) for n in range(1, doc.page_count + 1)]
            pages = [(s, p, d) for s, p, d in pages if p is not None]
            for source, page, doc_id in pages:
                others = [p for s, p, d in pages if d != doc_id] or [p for s, p, d in pages if p is not page]
                for comp_id, sentence in claim_sentences(page, per_page, rng):
                    citation = Citation(number=1, doc_id=doc_id, page=page.number, component_ids=[comp_id], bboxes=[])
                    support = {1: support_of(citation, page)}
                    cases = [
                        ("quote", sentence, support),
                        ("restated", restate(sentence), support),
                        ("changed", change_number(sentence, rng), support),
                    ]
                    if others:
                        other = rng.choice(others)
                        wrong = Citation(number=1, doc_id=other.doc_id, page=other.number, component_ids=[], bboxes=[])
                        cases.append(("wrong citation", sentence, {1: support_of(wrong, other)}))
                    for kind, text, sup in cases:
                        if text is None:
                            continue
                        checks = check_text(f"{text} [1]", sup)
                        # the check may cut a page's sentence in two: the worst piece counts
                        status = max((c.status for c in checks), key=WORST.index, default="supported")
                        results.append(
                            {
                                "source": source,
                                "kind": kind,
                                "status": status,
                                "sentence": text,
                                "missing": [m for c in checks for m in c.missing],
                            }
                        )
    return {
        "results": results,
        "pages": dict(Counter(s for s, _, _ in pages)),
        "ingest_seconds": ingest_s,
        "seconds": time.perf_counter() - started,
    }


def table(results: list[dict]) -> list[str]:
    lines = [
        "| source | case | sentences | flagged | flagged % | supported | partly | unsupported |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for source in ("financebench", "mmlongbench", "all"):
        for kind in KINDS:
            rows = [r for r in results if r["kind"] == kind and source in (r["source"], "all")]
            if not rows:
                continue
            counts = Counter(r["status"] for r in rows)
            flagged = sum(1 for r in rows if r["status"] != "supported")
            lines.append(
                f"| {source} | {kind} | {len(rows)} | {flagged} | {100 * flagged / len(rows):.1f} | "
                f"{counts['supported']} | {counts['partly']} | {counts['unsupported']} |"
            )
    return lines


def scores(results: list[dict]) -> dict[str, float]:
    """Recall on each must-flag case, false-flag rate on correct ones, precision of a flag."""
    flagged = [r for r in results if r["status"] != "supported"]
    bad = [r for r in results if r["kind"] in MUST_FLAG]
    out = {
        f"recall {k}": sum(r["status"] != "supported" for r in results if r["kind"] == k)
        / max(1, sum(r["kind"] == k for r in results))
        for k in MUST_FLAG
    }
    good = [r for r in results if r["kind"] not in MUST_FLAG]
    out["false flags on correct"] = sum(r["status"] != "supported" for r in good) / max(1, len(good))
    out["precision of a flag"] = sum(r["kind"] in MUST_FLAG for r in flagged) / max(1, len(flagged))
    out["recall (both)"] = sum(r["status"] != "supported" for r in bad) / max(1, len(bad))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-page", type=int, default=6, help="sentences taken from each gold page")
    parser.add_argument("--mmlb-pages", type=int, default=80, help="MMLongBench-Doc gold pages to ingest (at least)")
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--json", metavar="FILE", help="write the counts and every checked sentence here")
    parser.add_argument("--examples", type=int, default=0, help="print this many mistakes of each kind")
    args = parser.parse_args(argv)
    out = run(args.per_page, args.mmlb_pages, args.seed)
    results = out["results"]
    pages = ", ".join(f"{n} {source}" for source, n in out["pages"].items())
    print(
        f"gold pages ({pages}) ingested in {out['ingest_seconds']:.0f} s; {len(results)} sentences checked "
        f"in {out['seconds'] - out['ingest_seconds']:.1f} s"
    )
    print("\n".join(table(results)))
    print()
    for name, value in scores(results).items():
        print(f"{name}: {100 * value:.1f} %")
    if args.examples:
        for kind in KINDS:
            wrong = [r for r in results if (r["status"] != "supported") != (kind in MUST_FLAG) and r["kind"] == kind]
            for r in wrong[: args.examples]:
                print(f"\n[{kind} -> {r['status']}] {r['sentence'][:300]}\n  missing: {r['missing']}")
    if args.json:
        Path(args.json).write_text(json.dumps({**out, "scores": scores(results)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
