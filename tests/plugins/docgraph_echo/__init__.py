"""A docgraph method that lives outside docgraph's source tree: the proof that a method is a
plug-in. Installed for the test run (a dist-info with a ``docgraph.methods`` entry point),
it is found, built, asked, configured and listed exactly as the built-in methods are.

``echo`` ranks pages by the share of the question's words they hold; ``loud`` mode shouts
the answer. Its ``[echo]`` section has ``top_pages`` and ``greeting``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from docgraph.config import Section
from docgraph.methods.answers.citations import CitationBook
from docgraph.methods.base import BuildReport, MethodContext, not_built
from docgraph.text import tokenize
from docgraph.types import Answer, Evidence, ScoredPage

NAMESPACE = "echo.page"


class EchoSettings(Section):
    top_pages: int = Field(3, ge=1, description="pages an answer reads")
    greeting: str = Field("echo", description="the first word of every answer")


class EchoMethod:
    name = "echo"
    label = "Echo (test plug-in)"
    order = 50
    modes = ("auto", "quiet", "loud")
    settings_section = "echo"
    settings_model = EchoSettings

    def build(self, ctx: MethodContext) -> BuildReport:
        have = set(ctx.store.record_keys(NAMESPACE))
        report = BuildReport(method=self.name)
        rows = []
        for doc in ctx.store.list_documents(with_pages=True):
            for page in doc.pages:
                key = f"{doc.id}:{page.number}"
                if key in have:
                    report.pages_skipped += 1
                    continue
                rows.append((key, " ".join(c.text for c in page.components), doc.id))
                report.pages_built += 1
        ctx.store.put_records(NAMESPACE, rows)
        return report

    def retrieve(self, ctx: MethodContext, query: str, **options: Any) -> Evidence:
        settings = ctx.settings.section(self.settings_section, EchoSettings)
        pages = dict(ctx.store.iter_records(NAMESPACE))
        if not pages:
            raise not_built(ctx, self.name)
        words = set(tokenize(query))
        scored = []
        for key, text in pages.items():
            doc_id, number = key.rsplit(":", 1)
            share = len(words & set(tokenize(text))) / max(1, len(words))
            scored.append(ScoredPage(doc_id=doc_id, page=int(number), score=share))
        scored.sort(key=lambda p: (-p.score, p.doc_id, p.page))
        top = options.get("top_pages") or settings.top_pages
        return Evidence(query=query, method=self.name, mode=options.get("mode", "auto"), pages=scored[:top])

    def answer(self, ctx: MethodContext, query: str, **options: Any) -> Answer:
        settings = ctx.settings.section(self.settings_section, EchoSettings)
        evidence = self.retrieve(ctx, query, **options)
        book = CitationBook(ctx.store)
        best = evidence.pages[0]
        page = ctx.store.get_page(best.doc_id, best.page)
        number = book.cite(best.doc_id, best.page, [page.components[0].id] if page and page.components else [])
        text = f"{settings.greeting}: page {best.page} holds the most of your words [{number}]."
        if evidence.mode == "loud":
            text = text.upper()
        return Answer(
            question=query, text=text, method=self.name, mode=evidence.mode, citations=book.citations, evidence=evidence
        )

    def remove_document(self, ctx: MethodContext, doc_id: str) -> None:
        ctx.store.delete_records(NAMESPACE, doc_id=doc_id)

    def status(self, ctx: MethodContext) -> dict[str, Any]:
        total = sum(d.page_count for d in ctx.store.list_documents() if d.status == "ready")
        return {"built_pages": ctx.store.count_records(NAMESPACE), "total_pages": total}

    def graph_stats(self, ctx: MethodContext) -> dict[str, Any]:
        return {"pages": ctx.store.count_records(NAMESPACE)}

    def format_stats(self, stats: dict[str, Any]) -> str:
        return f"echo: {stats['pages']} pages"


def install(site: Path) -> Path:
    """Install this package into ``site`` the way pip lays it out: the package and a
    ``*.dist-info`` whose entry point registers the method. Returns ``site``."""
    import shutil

    shutil.copytree(Path(__file__).parent, site / "docgraph_echo", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "docgraph_echo-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: docgraph-echo\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[docgraph.methods]\necho = docgraph_echo:EchoMethod\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return site
