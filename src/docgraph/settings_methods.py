"""The method and retrieval sections of the settings object: ``[kg4vd]``, ``[hvm]``,
``[retrieval]`` and ``[baselines]`` of docgraph.toml (``settings_sections`` holds the others).

A field's default is the default docgraph runs with (METHODS.md's tables for the methods)
and its description says what it does.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .errors import ConfigError
from .settings_sections import Section


class PPRModeSettings(Section):
    """KG4VD Table 8/9: query-adaptive PPR and budgets for one mode."""

    alpha: float = Field(ge=0.0, le=1.0)
    beta: float = Field(ge=0.0, le=1.0)
    h_max: int = Field(ge=0)
    n_max: int = Field(ge=1)
    k_entities: int = Field(ge=0)
    k_relations: int = Field(ge=0)
    k_pages: int = Field(10, ge=0)


class KG4VDSettings(Section):
    schema_preset: Literal["general", "picture_book", "world_history", "env_reports", "dlcv_slides"] = "general"
    max_rounds: int = Field(5, ge=1, description="R: extract/check/reflect rounds per page")
    reflector: bool = Field(True, description="False with max_rounds=1 is the single-pass ablation")
    cross_page: bool = Field(True, description="False = 'no cross-page connection' ablation")
    cross_page_top_k: int = 10
    offline_page_rerank_weight: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="rerank weight of pages when the offline fusion reranker scores them "
        "(their best chunk, already in the prior): lower favours the graph's "
        "order (long pages), higher the reranker's (one-passage pages); "
        "0.25 chosen on all shared sets together (docs/eval.md)",
    )
    connect_batch_pages: int = Field(
        1000,
        ge=1,
        description="pages (of whole documents) connected and written "
        "per transaction: bounds a large build's memory; a "
        "later batch joins the graph as an added document",
    )
    cross_page_min_similarity: float = Field(
        0.25,
        ge=0.0,
        lt=1.0,
        description="model judge: a top-k candidate whose cosine, calibrated so the median "
        "entity pair is 0 and identity 1, is under this is not sent to the "
        "judge unless it shares a name with the entity (0 = every top-k "
        "candidate, the paper; the offline judge has no floor)",
    )
    same_threshold: float = Field(0.92, description="offline judge: cosine for 'same'")
    related_threshold: float = Field(0.85, description="offline judge: cosine for 'related'")
    vector_descriptions: Literal["auto", "always", "never"] = Field(
        "auto",
        description="whether entity/relation vectors embed descriptions besides names: 'auto' = only "
        "descriptions a build model wrote (an offline description is the source sentence, "
        "already in the chunk vectors)",
    )
    on_model_error: Literal["retry-later", "offline"] = Field(
        "retry-later",
        description="a page whose model reply stays unusable after the repair and re-asks: "
        "'retry-later' = named as failed and extracted again by the next build; "
        "'offline' = built with the offline strategy, its page graph marked "
        "strategy 'offline-fallback' (endpoint failures are always retried later)",
    )
    page_anchors: int = Field(10, description="top pages from the page index")
    page_anchoring: bool = Field(True, description="False = seeds from direct entity retrieval (ablation)")
    fixed_mode: Literal["local", "multi_hop", "document"] | None = Field(
        None, description="'document' = fixed document-mode PPR ablation"
    )
    ppr_tol: float = 1e-8
    ppr_max_iter: int = 100
    local: PPRModeSettings = Field(
        default_factory=lambda: PPRModeSettings(
            alpha=0.80, beta=0.0, h_max=1, n_max=30, k_entities=12, k_relations=12, k_pages=10
        )
    )
    multi_hop: PPRModeSettings = Field(
        default_factory=lambda: PPRModeSettings(
            alpha=0.45, beta=0.3, h_max=2, n_max=100, k_entities=30, k_relations=40, k_pages=10
        )
    )
    document: PPRModeSettings = Field(
        default_factory=lambda: PPRModeSettings(
            alpha=0.20, beta=0.6, h_max=5, n_max=200, k_entities=60, k_relations=80, k_pages=10
        )
    )

    def mode(self, name: str) -> PPRModeSettings:
        if name not in ("local", "multi_hop", "document"):
            raise ConfigError(f"unknown KG4VD mode {name!r}; use local, multi_hop or document")
        return getattr(self, name)


HVM_PROFILES: dict[str, dict[str, float | int]] = {
    "long_reports": dict(k_c=10, theta=0.25, k_r=10, K=10, k_b=2, k_text=5, k_table=3, k_image=2),
    "short_pages": dict(k_c=10, theta=0.50, k_r=15, K=10, k_b=4, k_text=5, k_table=3, k_image=2),
    "papers": dict(k_c=15, theta=0.25, k_r=10, K=10, k_b=5, k_text=5, k_table=3, k_image=2),
}


class HVMSettings(Section):
    """HVM-GraphRAG retrieval (METHODS.md profiles; 'long_reports' is the default)."""

    profile: Literal["long_reports", "short_pages", "papers"] | None = None
    k_c: int = 10
    theta: float = 0.25
    k_r: int = 10
    K: int = 10
    k_b: int = 2
    k_text: int = 5
    k_table: int = 3
    k_image: int = 2
    top_pages: int = Field(10, ge=1, description="pages ranked in Evidence.pages (structural layer + hybrid)")
    page_rerank_weight: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="the reranker's share of a page's score among the 2 x top_pages "
        "best, by its best chunk (methods.retrieval.page_rerank; 0 = off)",
    )
    max_group_size: int = Field(
        8,
        ge=0,
        description="facts per conflict group sent to the model, the most "
        "related first (0 = whole groups; cuts are counted)",
    )
    support_per_group: int = Field(
        4,
        ge=0,
        description="chunks of a confirmed group's B_g shown to the resolver, "
        "its own sources first (0 = all; cuts are counted)",
    )
    support_chars: int = Field(
        1200,
        ge=0,
        description="characters of each B_g chunk shown to the resolver, twice "
        "that of the current chunk (0 = whole chunks)",
    )
    concept_graph: bool = Field(True, description="False = retrieve entities directly (ablation)")
    conflict_resolution: bool = True
    modality_aware: bool = True
    on_model_error: Literal["retry-later", "offline"] = Field(
        "offline",
        description="a chunk whose model reply stays unusable after the repair and re-asks (extraction "
        "or conflict check): 'offline' = extracted by the offline strategy, marked strategy "
        "'offline-fallback' (conflicts: the offline rules); 'retry-later' = its document "
        "stops before the chunk and the next build resumes there (endpoint failures are "
        "always retried later)",
    )

    def with_profile(self) -> HVMSettings:
        """These settings with the named profile's values for every field not set explicitly.

        ``load_settings`` already applies the profile, so on loaded settings this is a no-op."""
        if not self.profile:
            return self
        return self.model_copy(
            update={k: v for k, v in HVM_PROFILES[self.profile].items() if k not in self.model_fields_set}
        )


class EdgeWeights(Section):
    """Weights of the structural evidence layer's edge types (``graph.structure``); 0 = off."""

    contains: float = Field(1.0, ge=0.0, description="page - chunk on it")
    next_chunk: float = Field(0.5, ge=0.0, description="consecutive chunks in reading order")
    next_page: float = Field(0.5, ge=0.0, description="consecutive pages")
    section: float = Field(0.5, ge=0.0, description="section heading chunk - chunks under it, across pages")
    caption: float = Field(1.0, ge=0.0, description="caption chunk - the table/figure chunk beside it")
    similar: float = Field(0.5, ge=0.0, description="chunk - its most similar chunks on other pages")
    refers: float = Field(0.5, ge=0.0, description="chunk mentioning a label - the chunk defining it on another page")
    entity: float = Field(1.0, ge=0.0, description="graph seeds (entities, concepts) - chunks they are grounded in")


class RetrievalSettings(Section):
    """Hybrid (sparse + dense) scoring, structural diffusion and page fusion shared by the
    ``hybrid`` baseline, KG4VD and HVM (``methods.retrieval.hybrid``, ``methods.retrieval.evidence_layer``)."""

    fusion: Literal["rrf", "score"] = Field("score", description="how BM25 and dense chunk scores are fused")
    rrf_k: int = Field(60, ge=1, description="reciprocal-rank fusion constant")
    sparse_weight: float = Field(0.3, ge=0.0, le=1.0, description="BM25's share of the fused score")
    confidence_k: int = Field(
        10,
        ge=0,
        description="per question, score fusion leans towards the signal (BM25 or "
        "dense) whose best units stand out more: (best - k-th) / "
        "(best - median) at this depth (methods.retrieval.hybrid; 0 = the fixed "
        "sparse_weight)",
    )
    page_sparse: float = Field(
        0.0,
        ge=0.0,
        description="weight of BM25 over whole pages in the flat page "
        "ranking (the best-chunk ranking weighs 1; 0 = off: it "
        "gains on long pages, loses where a page is one passage)",
    )
    references: bool = Field(
        True,
        description="explicit references in the question (figure 3, slide 14, "
        "page 2: the page printed 2, then the file's 2nd) rank the "
        "pages they point at",
    )
    measures: bool = Field(
        True,
        description='derived measures a question asks for ("inventory turnover", '
        '"cash ratio": methods/lexicons/finance.toml and the files in '
        "lexicons) add their input line items to its sparse terms, and the "
        'statements it names or they imply ("CONSOLIDATED BALANCE '
        'SHEETS") rank as explicit references do (methods.retrieval.lexicon)',
    )
    line_items: bool = Field(
        True,
        description='a line item the question names ("goodwill", "total current '
        "liabilities\": the items of methods/lexicons/finance.toml's statements) "
        "ranks the statement that prints it as if the question named it "
        "(after the statements it names or its measures imply; needs measures)",
    )
    front_matter: bool = Field(
        True,
        description='a question about the document itself ("the date of the '
        'document", "the presenter of this slide", "the '
        'defendant": methods/lexicons/documents.toml) ranks each '
        "document's first page as an explicit reference",
    )
    route_floor: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="in a library, the share of their scores that "
        "pages of documents a question does not name keep "
        "when it names others by organisation, title or "
        "file name, and period (methods.retrieval.routing; 1 = off)",
    )
    party_turns: bool = Field(
        True,
        description="when a question names several companies (parties: "
        "methods.retrieval.routing), give each one's pages turns in the first "
        "slots (methods.retrieval.turns); off: the scores alone order them",
    )
    route_by_content: bool = Field(
        True,
        description="weigh each page by how well its whole document (or the "
        "part of a file it is in: documents.parts) holds the question's "
        "words, at the same floor: between documents when the question "
        "names none, between a named document's parts when it does "
        "(methods.retrieval.document_nodes)",
    )
    lexicons: list[str] = Field(
        default_factory=list,
        description="more lexicon files (TOML, the format of "
        "methods/lexicons/*.toml): a domain's own "
        "statements, measures and front matter",
    )
    element_intent: float = Field(
        0.25,
        ge=0.0,
        description="weight of the page's best chunk of the element kind "
        "the question names (charts, photos, tables) in the "
        "flat page ranking (0 = off)",
    )
    seeds: Literal["hybrid", "dense"] = Field("hybrid", description="chunk/entity/concept scores that seed the graph")
    structure: bool = Field(True, description="False = structural layer off (ablation)")
    seed_chunks: int = Field(20, ge=1, description="top fused chunks seeding the diffusion")
    restart: float = Field(0.5, gt=0.0, le=1.0, description="restart probability of the structural diffusion")
    local_diffusion_edges: int = Field(
        300_000,
        ge=0,
        description="structural graphs with more edges than this "
        "diffuse by local forward push, whose cost follows "
        "the seeds' neighbourhood, instead of exact power "
        "iteration over every edge (graph.structure.diffuse; "
        "0 = always exact)",
    )
    graph_seed_share: float = Field(
        0.3, ge=0.0, le=1.0, description="share of the seed mass from the method's own graph"
    )
    flat_weight: float = Field(
        0.8, ge=0.0, le=1.0, description="final page score = w * flat hybrid + (1 - w) * diffused (1 = flat only)"
    )
    similar_top_k: int = Field(5, ge=0, description="similarity links per chunk (other pages)")
    similar_threshold: float = Field(0.85, ge=-1.0, le=1.0, description="least cosine of a similarity link")
    bridge_every: int = Field(
        3,
        ge=0,
        description="second hop through the method's entities: pages sharing "
        "the top page's rarer entities take slots n, 2n, ... "
        "(graph.bridges; 0 = off)",
    )
    bridge_seeds: int = Field(1, ge=1, description="top pages whose entities the second hop starts from")
    name_links: float = Field(
        1.0,
        ge=0.0,
        description="second hop: a bridged page whose heading the top page "
        "names scores (1 + this x name score) times its bridge "
        "score (graph.name_links; 0 = off)",
    )
    bridge_residual: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="second hop: share of a bridged page's "
        "relevance from BM25 over whole pages of the "
        "question's terms the top page lacks (what the "
        "first hop left open; 0 = the page's own score)",
    )
    edges: EdgeWeights = Field(default_factory=EdgeWeights)
    blas_threads: int = Field(
        1,
        ge=0,
        description="BLAS threads while a query is answered, every method (a "
        "query's matrix-vector products gain little from more and "
        "lose much when a build holds the cores; from ~10,000 pages "
        "two threads gain ~10 %: docgraph.threads); 0 = the "
        "libraries' own setting",
    )


class HippoRAGSettings(Section):
    """HippoRAG 2 baseline hyper-parameters (its paper's defaults where it gives them)."""

    synonym_threshold: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="phrase similarity for a synonym edge, on the cosine rescaled "
        "so the corpus's median phrase pair is 0 (hipporag_graph)",
    )
    synonym_top_k: int = Field(100, ge=1, description="most synonym neighbours considered per phrase")
    fact_top_k: int = Field(5, ge=1, description="query-matched facts whose phrases seed PPR")
    restart: float = Field(0.5, gt=0.0, le=1.0, description="PPR restart probability α (damping 0.5)")
    passage_node_weight: float = Field(
        0.05,
        ge=0.0,
        description="reset weight of passage nodes (× dense passage score) when "
        "the answer model filters the seed facts",
    )
    offline_passage_node_weight: float = Field(
        1.0,
        ge=0.0,
        description="the same weight when the offline lexical filter picks "
        "the seed facts (parser triples: weaker seeds, so the "
        "dense prior weighs more)",
    )
    dense_prior_top: int = Field(
        10,
        ge=0,
        description="passages with a dense reset weight: the best N by dense "
        "score, min-max over them (0 = every passage, as "
        "HippoRAG 2's code)",
    )
    local_walk_edges: int = Field(
        300_000,
        ge=0,
        description="graphs with more edges than this walk by local "
        "forward push, whose cost follows the seeds' "
        "neighbourhood, instead of power iteration over every "
        "edge (graph.ppr.walk_from; 0 = always exact)",
    )
    local_walk_eps: float = Field(
        1e-7, gt=0.0, description="forward push: unspread mass per out-edge a node must hold to pass it on"
    )
    max_phrase_words: int = Field(8, ge=1, description="longer subjects/objects are not phrase nodes (build)")
    bridge_every: int = Field(
        3,
        ge=0,
        description="second hop: pages sharing the best page's rarer phrases take "
        "slots n, 2n, ... of the page list (graph.bridges, as kg4vd "
        "and hvm; 0 = off: the ranking of the walk alone)",
    )
    bridge_seeds: int = Field(1, ge=1, description="top pages whose phrases the second hop starts from")
    name_links: float = Field(
        1.0,
        ge=0.0,
        description="second hop: a page whose heading the top page names "
        "scores (1 + this x name score) times its bridge score "
        "(graph.name_links; 0 = off)",
    )


class BaselineSettings(Section):
    """The baselines (bm25, dense, hybrid, pages, hipporag, nodocs): ``[baselines]`` and
    ``[baselines.hipporag]`` in docgraph.toml."""

    chunk_words: int = Field(160, ge=20, description="most words per text chunk (build)")
    top_k: int = Field(10, ge=1, description="chunks given to the answer model")
    top_pages: int = Field(10, ge=1, description="pages returned in Evidence.pages (and shown to `pages`)")
    hipporag: HippoRAGSettings = Field(default_factory=HippoRAGSettings)
