"""``docgraph eval``: several methods over one benchmark in one run, into one table.

``run_eval(options)``:
1. loads the benchmark (``loaders.load_benchmark``), keeps the first ``limit`` questions;
2. turns it into corpora (``corpus``): one workspace per document, one packed
   workspace, one library workspace holding every document, or one rendered passage
   corpus — each cached under the workspace root and reused by later runs (ingestion and
   builds are idempotent and incremental);
3. per corpus and method: builds the index (the cost of the build that made it is kept
   in the corpus workspace, so a reused index still reports what it cost), then
   retrieves (``retrieval_only``) or answers every question; each finished question is
   appended to ``<out>/<stem>-records.jsonl`` at once, and questions already there are
   skipped, so an interrupted run resumes;
4. with a model: extracts the short answer (HVM-GraphRAG B.3.1), asks each judge for a
   verdict, FineSurE-labels long answers that have gold facts (and the reference, the
   oracle), and optionally judges every method against one opponent pairwise; a question
   in one of MMLongBench-Doc's answer formats also gets that benchmark's short answer
   (by the answer model, or offline by rule: ``answer_format``) and score
   (``metrics_mmlongbench``), kept as ``mmlongbench_pred`` / ``mmlongbench_score``;
5. summarises the records (``report.summarize``) into ``<stem>.md`` and ``<stem>.json``.

``retrieval_only`` runs every corpus workspace with all chat roles switched off, so no
model is called; without it and without an answer model, answers are the methods'
offline extractive answers and the table says so.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import Workspace
from ..config import Settings
from ..errors import ConfigError, InputError
from ..methods.base import available_methods
from ..models.base import ChatModel
from ..progress import NullProgress, Progress
from ..store.sqlite import SQLiteStore
from ..types import Usage
from .answer_format import extract_in_format, response_body
from .corpora import corpus_settings, corpus_specs, eval_settings
from .corpus import CorpusSpec
from .judge import extract_answer, extract_formatted_answer, finesure_judgement, judged_verdicts, pairwise_judgement
from .loaders import Benchmark, QAItem, load_benchmark
from .metrics_mmlongbench import ANSWER_FORMATS, mmlongbench_score
from .normalize import strip_answer_prefix
from .records import RecordLog, build_key, evidence_keys, pairwise_key, question_key, ranked_pages, usage_dict
from .report import markdown, summarize, write_reports

BUILD_COST_NAMESPACE = "eval.build_cost"
DOCUMENT_SETTINGS = ("per-document", "packed", "library")  # how a document benchmark becomes corpora


@dataclass
class EvalOptions:
    benchmark: str
    path: Path | None
    methods: list[str]
    out: Path
    workspace_root: Path
    limit: int | None = None
    retrieval_only: bool = False
    packed: bool = False  # the same as setting="packed"
    setting: str = "per-document"  # one of DOCUMENT_SETTINGS (passage sets ignore it)
    judges: list[str] = field(default_factory=list)  # judge model names; [] = the judge role's model
    pairwise_against: str | None = None
    settings: Settings | None = None
    loaded: Benchmark | None = None  # a benchmark object instead of name + path (tests, custom sets)
    documents: Path | None = None  # the folder holding the benchmark's files, where they live elsewhere
    report_only: bool = False  # no builds, no questions: the table from the records already written
    progress: Callable[[], Progress] = NullProgress

    def __post_init__(self) -> None:
        if self.setting not in DOCUMENT_SETTINGS:
            raise ConfigError(f"unknown setting {self.setting!r}; use one of: {', '.join(DOCUMENT_SETTINGS)}")
        if self.packed and self.setting == "library":
            raise ConfigError("--packed and --setting library exclude each other; choose one")
        if self.packed:
            self.setting = "packed"
        self.packed = self.setting == "packed"


@dataclass
class EvalResult:
    summary: dict[str, Any]
    markdown: str
    table_path: Path
    json_path: Path
    records_path: Path
    questions_run: int
    questions_skipped: int


def output_stem(options: EvalOptions) -> str:
    setting = "" if options.setting == "per-document" else f"-{options.setting}"
    return options.benchmark + setting + ("-retrieval" if options.retrieval_only else "")


def judge_models(ws: Workspace, names: Sequence[str]) -> dict[str, ChatModel]:
    """Judges by model name (each the judge role's endpoint with that model), or the judge
    role's own model; {} when no judge is configured."""
    from ..models.hub import ModelHub

    if not names:
        chat = ws.models.chat("judge")
        return {chat.model: chat} if chat is not None else {}
    judges = {}
    for name in names:
        settings = ws.settings.models.model_copy(deep=True)
        settings.judge.model = name
        chat = ModelHub(settings, ws.store, ws.root).chat("judge")
        if chat is None:
            raise ConfigError(
                "judge models were named but models.judge.base_url is not set; configure the "
                "judge endpoint (DOCGRAPH_MODELS__JUDGE__BASE_URL)"
            )
        judges[name] = chat
    return judges


class Runner:
    """One eval run (see the module docstring); ``run()`` returns the ``EvalResult``."""

    def __init__(self, options: EvalOptions):
        self.options = options
        unknown = [m for m in options.methods if m not in available_methods()]
        if unknown:
            raise ConfigError(f"unknown method(s) {', '.join(unknown)}; available: {', '.join(available_methods())}")
        self.settings = eval_settings(options.settings, options.retrieval_only, options.workspace_root)
        self.run_kind = "retrieval" if options.retrieval_only else "answer"
        self.log = RecordLog(options.out / f"{output_stem(options)}-records.jsonl")
        self.ran = self.skipped = 0
        self.answer_model: str | None = None
        self.setting = ""

    # ------------------------------------------------------------------ main loop
    def run(self) -> EvalResult:
        opts = self.options
        if opts.loaded is not None:
            bench = opts.loaded
        elif opts.path is None:
            raise InputError(
                f"benchmark {opts.benchmark} needs its file or folder: docgraph eval {opts.benchmark} PATH"
            )
        else:
            bench = load_benchmark(opts.benchmark, opts.path)
        if opts.documents is not None:
            bench = bench.with_documents(opts.documents)
        items = bench.items[: opts.limit] if opts.limit else list(bench.items)
        specs = corpus_specs(bench, items, opts)
        passages = opts.setting == "per-document" and bench.corpus is not None and len(specs) == 1
        self.setting = "passages" if passages else opts.setting
        if opts.report_only:
            self.answer_model = self._recorded_answer_model(specs)
        for spec in specs if not opts.report_only else []:
            self.run_corpus(bench.name, spec)
        if opts.pairwise_against and not opts.retrieval_only and not opts.report_only:
            for spec in specs:
                self.run_pairwise(spec)
        corpora = {spec.name for spec in specs}
        questions = {(spec.name, item.id) for spec in specs for item in spec.items}
        summary = summarize([r for r in self.log.records() if self._belongs(r, corpora, questions)], opts.methods)
        summary["benchmark"] = bench.name
        summary["setting"] = self.setting
        summary["run"] = self.run_kind
        md_path, json_path = write_reports(summary, opts.out, output_stem(opts))
        return EvalResult(
            summary=summary,
            markdown=markdown(summary),
            table_path=md_path,
            json_path=json_path,
            records_path=self.log.path,
            questions_run=self.ran,
            questions_skipped=self.skipped,
        )

    def _belongs(self, record: dict[str, Any], corpora: set[str], questions: set[tuple[str, str]]) -> bool:
        """Whether a record is part of this run's table: its setting, methods, corpora and
        questions, and — for question records — this run's kind and answer model."""
        if record.get("setting") != self.setting or record.get("method") not in self.options.methods:
            return False
        if record.get("kind") == "build":
            return record.get("corpus") in corpora
        if (record.get("corpus"), record.get("qid")) not in questions:
            return False
        if record.get("kind") == "pairwise":
            return True
        return record.get("run") == self.run_kind and record.get("answer_model") == self.answer_model

    def _recorded_answer_model(self, specs: list[CorpusSpec]) -> str | None:
        """The answer model a report-only table is about: the one this run's settings would
        use, read from the first corpus workspace that exists (none is created)."""
        in_server = self.settings.store.backend != "sqlite"  # rows in a server: the folder holds the files
        for spec in specs:
            if (spec.folder / SQLiteStore.DB_NAME).is_file() or (in_server and spec.folder.is_dir()):
                with Workspace(spec.folder, settings=corpus_settings(self.settings, spec)) as ws:
                    return self._answer_model(ws)
        return None

    def _answer_model(self, ws: Workspace) -> str | None:
        if self.options.retrieval_only:
            return None
        chat = ws.models.chat("answer")
        return chat.model if chat is not None else None

    def run_corpus(self, benchmark: str, spec: CorpusSpec) -> None:
        progress = self.options.progress()
        with Workspace(spec.folder, settings=corpus_settings(self.settings, spec)) as ws:
            answer_model = self.answer_model = self._answer_model(ws)
            todo = {
                m: [i for i in spec.items if not self.log.done(self._qkey(spec, m, i, answer_model))]
                for m in self.options.methods
            }
            self.skipped += sum(len(spec.items) - len(v) for v in todo.values())
            built = all(
                self.log.done(build_key({"setting": self.setting, "corpus": spec.name, "method": m}))
                for m in self.options.methods
            )
            if built and not any(todo.values()):
                return
            ws.add(spec.files, progress=progress)
            doc_names = {
                d.id: spec.doc_names[Path(d.path).name] for d in ws.documents() if Path(d.path).name in spec.doc_names
            }
            judges = {} if self.options.retrieval_only else judge_models(ws, self.options.judges)
            for method in self.options.methods:
                if not self.build(ws, benchmark, spec, method, progress):
                    continue
                if not todo[method]:
                    continue
                progress.start(len(todo[method]), f"{spec.name[:30]} · {method}")
                for item in todo[method]:
                    record = self.run_question(ws, benchmark, spec, method, item, doc_names, answer_model, judges)
                    self.log.append(record)
                    self.ran += 1
                    progress.advance(1, errors=int(bool(record.get("error"))))
            progress.close()

    def _qkey(self, spec: CorpusSpec, method: str, item: QAItem, answer_model: str | None) -> tuple:
        return question_key(
            {
                "setting": self.setting,
                "corpus": spec.name,
                "method": method,
                "qid": item.id,
                "run": self.run_kind,
                "answer_model": answer_model,
            }
        )

    # ------------------------------------------------------------------ build
    def build(self, ws: Workspace, benchmark: str, spec: CorpusSpec, method: str, progress: Progress) -> bool:
        """Build ``method`` on the corpus and record its cost; False when the build failed.

        The cost kept in the corpus workspace is that of the build that made the index: a
        build that resumes an unfinished one adds to it, one from scratch replaces it, and
        one with nothing to do leaves it (so a reused index still reports what it cost). Pages
        built before any cost was kept (a build killed between its last page and its cost)
        count as the index's pages. A
        build with nothing to do appends no record when the run's log already has one (a
        resumed eval leaves one build record per corpus and method)."""
        record: dict[str, Any] = {
            "kind": "build",
            "benchmark": benchmark,
            "setting": self.setting,
            "corpus": spec.name,
            "method": method,
        }
        started = time.perf_counter()
        try:
            with ws.models.meter.track() as used:
                report = ws.build(method, progress=progress)
        except Exception as exc:  # noqa: BLE001 — recorded, the other methods still run
            record.update(error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - started)
            self.log.append(record)
            progress.note(f"build of {method} on {spec.name} failed: {exc}")
            return False
        seconds = time.perf_counter() - started
        stored = ws.store.get_record(BUILD_COST_NAMESPACE, method)
        # no cost kept for pages already built: a build stopped after its pages, before its cost
        # (a kill): the pages count, the time spent on them is lost
        cost = stored or {"seconds": 0.0, "usage": {}, "pages": report.pages_skipped}
        if report.pages_built and not report.pages_skipped:  # built from scratch: its own cost only
            cost = {"seconds": 0.0, "usage": {}, "pages": 0}
        if report.pages_built or not cost["pages"] or stored is None:
            cost["seconds"] += seconds
            cost["pages"] += report.pages_built
            for key, value in usage_dict(used).items():
                cost["usage"][key] = cost["usage"].get(key, 0) + value
            ws.store.put_record(BUILD_COST_NAMESPACE, method, cost)
        if not report.pages_built and self.log.done(build_key(record)):
            return True  # a rerun that found the index built: the record of the build that made it stands
        record.update(
            seconds=cost["seconds"],
            usage=cost["usage"],
            pages=cost["pages"],
            pages_built_now=report.pages_built,
            stats=report.stats,
        )
        self.log.append(record)
        return True

    # ------------------------------------------------------------------ one question
    def run_question(
        self,
        ws: Workspace,
        benchmark: str,
        spec: CorpusSpec,
        method: str,
        item: QAItem,
        doc_names: dict[str, str],
        answer_model: str | None,
        judges: dict[str, ChatModel],
    ) -> dict[str, Any]:
        gold = list(item.gold_passages) if spec.level == "passage" else [f"{d}|{p}" for d, p in item.gold_pages]
        record: dict[str, Any] = {
            "kind": "question",
            "benchmark": benchmark,
            "setting": self.setting,
            "corpus": spec.name,
            "method": method,
            "qid": item.id,
            "run": self.run_kind,
            "answer_model": answer_model,
            "question": item.question,
            "gold_answer": item.answer,
            "answer_format": item.answer_format,
            "unanswerable": item.unanswerable,
            "categories": item.categories(),
            "level": spec.level,
            "gold": gold,
            "retrieved": [],
            "error": None,
        }
        if spec.setting == "library":  # which document the question is about, for document recall
            record["gold_documents"] = list(dict.fromkeys([d for d, _ in item.gold_pages] or item.doc_ids))
        started = time.perf_counter()
        used: dict[str, Usage] = {}
        try:
            with ws.models.meter.track() as used:
                if self.options.retrieval_only:
                    evidence, answer = ws.retrieve(item.question, method=method), None
                else:
                    answer = ws.ask(item.question, method=method)
                    evidence = answer.evidence
        except Exception as exc:  # noqa: BLE001 — recorded and retried on the next run
            record.update(
                error=f"{type(exc).__name__}: {exc}",
                trace=traceback.format_exc(limit=5),
                seconds=time.perf_counter() - started,
            )
            return record
        record["seconds"] = time.perf_counter() - started
        record["usage"] = usage_dict(used)
        keys, scores = evidence_keys(ranked_pages(evidence), doc_names, spec.level, spec.page_passages)
        record.update(retrieved=keys, retrieved_scores=scores, mode=evidence.mode)
        if answer is not None:
            record.update(
                answer=answer.text,
                model_used=answer.model_used,
                citations=[f"{doc_names.get(c.doc_id, c.doc_id)}|{c.page}" for c in answer.citations],
            )
            if answer.warnings:  # the offline answer stood in (answer_fallback), or answers.verify = drop cut
                record["warnings"] = list(answer.warnings)
            if answer.verify not in (None, "off"):  # the claim check: checked sentences per status
                record["claims"] = answer.claim_counts()
            try:
                self.judge(ws, record, item, answer.text, answer.model_used, judges)
            except Exception as exc:  # noqa: BLE001
                record["error"] = f"judging failed: {type(exc).__name__}: {exc}"
        return record

    def judge(
        self,
        ws: Workspace,
        record: dict[str, Any],
        item: QAItem,
        text: str,
        model_used: bool,
        judges: dict[str, ChatModel],
    ) -> None:
        """Answer extraction, judge verdicts and FineSurE labels, into ``record``."""
        extractor = ws.models.chat("answer") if model_used else None
        with ws.models.meter.track() as used:
            record["extracted"] = (
                extract_answer(extractor, item.question, text, item.answer_format)
                if extractor is not None
                else strip_answer_prefix(response_body(text))
            )
            if item.answer_format in ANSWER_FORMATS:  # MMLongBench-Doc's own protocol
                pred = (
                    extract_formatted_answer(extractor, item.question, text, item.answer_format)
                    if extractor is not None
                    else extract_in_format(text, item.answer_format, item.question)
                )
                record["mmlongbench_pred"] = pred
                record["mmlongbench_score"] = mmlongbench_score(item.answers[0], pred, item.answer_format)
            if judges:
                record["judges"] = judged_verdicts(judges, item.question, item.answer, text)
                facts = [f["text"] for f in item.extra.get("gt_facts", []) if isinstance(f, dict) and f.get("text")]
                if facts:
                    reference = item.answers[0]
                    record["finesure"], record["finesure_oracle"] = {}, {}
                    for name, judge in judges.items():
                        for field_name, answer_text in (("finesure", text), ("finesure_oracle", reference)):
                            j = finesure_judgement(judge, item.question, answer_text, reference, facts)
                            record[field_name][name] = {
                                "faithful": list(j.sentence_faithful),
                                "aligned": list(j.sentence_aligned),
                                "covered": list(j.fact_covered),
                            }
        record["eval_usage"] = usage_dict(used)

    # ------------------------------------------------------------------ pairwise
    def run_pairwise(self, spec: CorpusSpec) -> None:
        opponent = self.options.pairwise_against
        if opponent is None:
            return
        answers: dict[tuple[str, str], str] = {}
        for r in self.log.records("question"):
            if r.get("corpus") == spec.name and r.get("run") == "answer" and r.get("answer") and not r.get("error"):
                answers[(r["method"], r["qid"])] = r["answer"]
        with Workspace(spec.folder, settings=corpus_settings(self.settings, spec)) as ws:
            judges = judge_models(ws, self.options.judges)
            if not judges:
                raise ConfigError("pairwise judging needs a judge model (models.judge.base_url)")
            for method in self.options.methods:
                if method == opponent:
                    continue
                for item in spec.items:
                    a, b = answers.get((method, item.id)), answers.get((opponent, item.id))
                    if a is None or b is None:
                        continue
                    for name, judge in judges.items():
                        base = {
                            "kind": "pairwise",
                            "benchmark": "",
                            "setting": self.setting,
                            "corpus": spec.name,
                            "method": method,
                            "opponent": opponent,
                            "qid": item.id,
                            "judge": name,
                        }
                        if self.log.done(pairwise_key(base)):
                            continue
                        pj = pairwise_judgement(judge, name, item.question, a, b)
                        self.log.append(
                            dict(base, first_order=dict(pj.first_order), second_order=dict(pj.second_order))
                        )


def run_eval(options: EvalOptions) -> EvalResult:
    """Run (or resume) an evaluation; see the module docstring."""
    return Runner(options).run()
