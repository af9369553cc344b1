"""KG4VD's online retrieval: page anchors → seeds → bounded subgraph + PPR → rerank → budgets.

One module per stage: ``anchors`` (1), ``seeds`` (2), ``subgraph`` (3), ``diffusion`` (4),
``rerank`` (5), ``second_hop`` (6); ``pipeline.retrieve_graph`` calls them in order and
``trace.RetrievalTrace`` holds what each computed.

METHODS.md "KG4VD — Query", steps 2–5 (paper Section 3.3 and Appendix B.3):

1. **Page anchors**: the top ``page_anchors`` pages by their *flat hybrid* score — a page
   scores as its best chunk, chunks scored by BM25 and dense cosine fused
   (``methods.retrieval.evidence_layer``, ``methods.retrieval.hybrid``); with a real image embedder the page
   vectors' cosine is rank-fused in (offline they are chunk means, adding nothing).
2. **Seeds**: the entities grounded on the anchor pages, weighted by their hybrid score
   (BM25 over "name, type, description" fused with the entity-index cosine, the fusion
   normalised over those entities; the paper's cosine alone with ``retrieval.seeds =
   "dense"``), normalised to a distribution s. Cosines are computed only for the entities
   a step reads (``graph.subgraph.NodeScores``), never for the whole graph.
   Ablation ``page_anchoring = false``: the mode's ``k_entities`` best entities.
3. **Bounded subgraph + PPR** (``graph.ppr_on_subgraph``): up to H_max hops and N_max
   nodes around the seeds (inside a hop ring, nodes most similar to the query are
   admitted first), then Eq. 1–2 with the mode's α and β, t(q) ∝ max(0, cos).
4. **Structural diffusion and candidates**: the subgraph's PPR mass moves onto the chunks
   its entities are grounded in (entity ↔ component edges) and joins the best hybrid
   chunks as seeds of a second PPR over the structural layer (pages, chunks, reading
   order, sections, captions, similarity links); a page's prior is
   ``flat_weight`` · flat + (1 − ``flat_weight``) · diffused mass. Candidates: the anchor
   pages plus the ``k_pages`` best pages by that prior; the subgraph's entities (≤ N_max);
   the relations with both endpoints in it (prior = mean PPR of its endpoints), at most
   ``RELATION_POOL`` × k_relations of them by prior.
5. **Rerank** every candidate text against the query with the Reranker (a page's best
   chunk; ``storage.entity_text`` "name, type, description"; ``storage.relation_text``
   "source label target: description" — the very texts the build embedded, so offline
   the fusion reranker takes their stored vectors and embeds nothing) and keep the mode's
   budgets k_entities / k_relations / k_pages. Final score of every candidate:

       score = λ · mm(rerank) + (1 − λ) · mm(graph prior),   λ = ``rerank_weight`` (0.5)

   where mm is min–max normalisation over the candidates of that kind (``models.rerank.minmax``:
   a constant column scales to 1 if positive, else 0).
   The reranker judges what the text says about the query; PPR (or the page index)
   says how central the item is to the anchored neighbourhood. Min–max keeps PPR's skew:
   in local mode (α = 0.8) the seeds hold most of the mass, so a non-seed entity needs
   a clearly better rerank score to displace one, as the narrow mode intends.
   Offline (text-fallback page vectors and the fusion reranker) pages use
   ``kg4vd.offline_page_rerank_weight`` (default 0.25, half the paper's λ): a page's rerank
   text is then its best chunk, whose fused BM25 + cosine score the prior already holds as
   its flat part, so λ = ½ counts it twice. Lower weights keep more of the graph's order;
   with the second hop in place 0.25 gains on MMLongBench-Doc per document and packed and
   keeps HotpotQA's and MuSiQue's recall (docs/results, 2026-12-03 "half the paper's λ").
6. **Second hop** (docgraph's addition, ``graph.bridges``): pages that share the rarer
   entities of the graph grounded on the best page — minus the question's own; preferred:
   the pages whose headings the best page names (``graph.name_links``) — take every
   ``retrieval.bridge_every``-th slot of the page list (slots 3, 6, … by default).
"""

from .anchors import flat_pages, load_layer, page_dense_scores, query_vector
from .diffusion import chunk_seeds, page_candidates
from .pipeline import retrieve_graph
from .rerank import page_text, relation_vector
from .second_hop import load_bridges
from .seeds import seed_entities, seed_signal
from .subgraph import expansion_priority
from .trace import DEFAULT_RERANK_WEIGHT, RELATION_POOL, RetrievalTrace

__all__ = [
    "DEFAULT_RERANK_WEIGHT",
    "RELATION_POOL",
    "RetrievalTrace",
    "chunk_seeds",
    "expansion_priority",
    "flat_pages",
    "load_bridges",
    "load_layer",
    "page_candidates",
    "page_dense_scores",
    "page_text",
    "query_vector",
    "relation_vector",
    "retrieve_graph",
    "seed_entities",
    "seed_signal",
]
