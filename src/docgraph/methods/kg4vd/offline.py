"""The model-free page strategy: extraction with the offline NLP blocks, coverage as reflection.

Extractor, round 0 (every component):
- text components: named entities (typed through ``OfflineNLP.map_label`` into the
  schema; bare numbers, whole headings typed as organisations or works, and names made
  only of document-structure words are skipped, single-word nationalities are concepts:
  ``entity_quality``), headings as structural entities when the schema has
  a heading type, and subject–verb–object triples as edges (their ends become concept
  entities when NER did not find them);
- visual components (images, tables, equations): one *visual* entity each, named from a
  nearby caption, else the component's own (OCR) text, else the nearest heading or
  paragraph; typed ``table_region`` / ``chart_element`` / ``diagram_component`` /
  ``figure_panel`` / ``layout_region`` from its kind and words; it cites the component
  (and the caption it was named from) and is linked to the named entities of that caption
  (``depicts``) and, for tables, of its cells (``listed_in``).
Later rounds follow the feedback: ``uncovered`` components get their main noun phrases
as concept entities; ``partially_covered`` ones get ``mentioned_with`` edges chaining
their entities in reading order (a lone visual entity is linked to the nearest text
entity, ``illustrates``). An entity already on the page that shows up in another
component is *replaced* with the extra citation rather than added twice.

Reflector: ``reflect.coverage_feedback``. The loop stops when a round adds nothing.
Deterministic: the same page gives the same graph.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from ...models.base import OfflineNLP, TextAnalysis
from ...text import STOPWORDS
from ...types import Component, ComponentKind, Page, Usage
from .loop import RoundInput
from .patch import EdgeOp, GraphPatch, NodeOp, PageGraph
from .reflect import Feedback, coverage_feedback, needs_extraction

NUMERIC_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
MAX_NAME_WORDS = 8
MAX_DESCRIPTION_WORDS = 24
NOUN_PHRASES_PER_COMPONENT = 3
TABLE_ENTITIES = 10
_PRONOUNS = frozenset(
    "i me you he she it we they him her us them this that these those who what which "
    "something anything everything nothing someone anyone everyone one".split()
)
_LEADING = re.compile(r"^(the|a|an|this|that|these|those|its|their|his|her|our|my|your)\s+", re.I)
_VISUAL_WORDS = (
    ("chart_element", re.compile(r"\b(chart|graph|plot|histogram|bar|pie|axis|trend)s?\b", re.I)),
    (
        "diagram_component",
        re.compile(r"\b(diagram|flow ?chart|schematic|architecture|pipeline|network|workflow)s?\b", re.I),
    ),
)


def clean_name(text: str) -> str:
    """An entity name from a text span: one line, no leading article/possessive, trimmed."""
    name = " ".join(text.split()).strip(" \t,.;:!?\"'()[]{}*•–-")
    name = re.sub(r"['’]s$", "", _LEADING.sub("", name)).strip()
    return name


def is_good_name(name: str) -> bool:
    """A usable entity name: has a letter, at most ``MAX_NAME_WORDS`` words, not a pronoun or stopword."""
    words = name.lower().split()
    return (
        bool(words)
        and len(words) <= MAX_NAME_WORDS
        and len(name) >= 2
        and any(ch.isalpha() for ch in name)
        and not all(w in STOPWORDS or w in _PRONOUNS for w in words)
    )


# Words that name parts of a document rather than things in it ("Reflection Questions",
# "Key Terms", "Figure 3"): a named entity made only of these (and stopwords) is dropped.
DOCUMENT_WORDS = frozenset(
    """
appendix chapter chapters conclusion conclusions contents exercise exercises figure figures glossary
introduction key lesson module note notes overview page part preface question questions reading readings
reference references reflection review section sections source sources summary table tables term terms
topic topics unit units
""".split()
)
# NER labels that fire on capitalised headings ("Reflection Questions" as an ORG).
HEADING_PRONE_LABELS = frozenset({"ORG", "WORK_OF_ART", "PRODUCT", "LAW", "EVENT", "FAC"})


def entity_quality(name: str, label: str, comp: Component) -> str:
    """``"drop"``, ``"concept"`` (keep, but as a plain concept) or ``"keep"`` for a spaCy
    entity found in ``comp``: a span that is the whole heading it sits in and carries a
    heading-prone label is the heading, not an organisation or a work (the heading
    itself becomes a structural entity where the schema has one); a name made only of
    document-structure words and stopwords says nothing; a single-word nationality or
    group ("Islamic", "American") is usually an adjective, so it is kept as a concept."""
    if only_document_words(name):
        return "drop"
    if (
        comp.kind is ComponentKind.TITLE
        and label in HEADING_PRONE_LABELS
        and clean_name(comp.text).lower() == clean_name(name).lower()
    ):
        return "drop"
    if label == "NORP" and len(name.split()) == 1:
        return "concept"
    return "keep"


def is_concept_name(name: str) -> bool:
    """A usable name for an entity NER did not find: a good name that is more than one
    common word (several words, a digit, or an acronym) — "Silk Road", "trade routes",
    "COVID-19", "ESG", not "ways", "students" or a capitalised sentence start like "Review"."""
    return (
        is_good_name(name)
        and not only_document_words(name)
        and (len(name.split()) >= 2 or any(ch.isdigit() for ch in name) or sum(ch.isupper() for ch in name) >= 2)
    )


def only_document_words(name: str) -> bool:
    """Whether ``name`` is made only of document-structure words, stopwords and numbers."""
    return all(
        w in STOPWORDS or w in DOCUMENT_WORDS or w.isdigit() for w in (w.strip(".,:;()").lower() for w in name.split())
    )


def short(text: str, words: int = MAX_DESCRIPTION_WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


class _PatchBuilder:
    """Accumulates add/replace operations for one round, de-duplicating entities by name."""

    def __init__(self, graph: PageGraph):
        self.ids: dict[str, str] = {_key(n.name): n.id for n in graph.nodes}
        self.cites: dict[str, list[str]] = {n.id: list(n.component_ids) for n in graph.nodes}
        self.existing = {n.id for n in graph.nodes}
        self.edges = {(e.source, e.target, e.label) for e in graph.edges}
        self.new_nodes: dict[str, NodeOp] = {}
        self.touched: set[str] = set()
        self.new_edges: list[EdgeOp] = []
        numbers = [int(m.group(1)) for n in graph.nodes if (m := re.fullmatch(r"e(\d+)", n.id))]
        self._next = max(numbers, default=0) + 1

    def node_id(self, name: str) -> str | None:
        return self.ids.get(_key(name))

    def entity(self, name: str, type_: str, modality: str, component_ids: Sequence[str], description: str) -> str:
        """The id of the entity called ``name`` on this page, adding it or its new citations."""
        node_id = self.ids.get(_key(name))
        if node_id is None:
            node_id = f"e{self._next}"
            self._next += 1
            self.ids[_key(name)] = node_id
            self.cites[node_id] = list(component_ids)
            self.new_nodes[node_id] = NodeOp(
                op="add",
                id=node_id,
                name=name,
                type=type_,
                modality=modality,
                description=short(description),
                component_ids=self.cites[node_id],
            )
            return node_id
        extra = [c for c in component_ids if c not in self.cites[node_id]]
        if extra:
            self.cites[node_id].extend(extra)
            if node_id in self.existing:
                self.touched.add(node_id)
        return node_id

    def relation(self, source: str, target: str, label: str, component_ids: Sequence[str], description: str) -> None:
        if source == target or (source, target, label) in self.edges:
            return
        self.edges.add((source, target, label))
        self.new_edges.append(
            EdgeOp(
                op="add",
                source=source,
                target=target,
                label=label,
                description=short(description),
                component_ids=list(component_ids),
            )
        )

    def patch(self) -> GraphPatch:
        replaces = [NodeOp(op="replace", id=i, component_ids=self.cites[i]) for i in sorted(self.touched)]
        return GraphPatch(nodes=list(self.new_nodes.values()) + replaces, edges=self.new_edges)


def _sentence_with(analysis: TextAnalysis, span: str, fallback: str) -> str:
    low = span.lower()
    return next((s for s in analysis.sentences if low in s.lower()), fallback)


def _neighbours(page: Page, comp: Component, window: int = 2) -> list[Component]:
    """Components within ``window`` reading-order steps of ``comp``, nearest first."""
    ordered = sorted(page.components, key=lambda c: c.order)
    index = next(i for i, c in enumerate(ordered) if c.id == comp.id)
    near = [c for c in ordered[max(0, index - window) : index + window + 1] if c.id != comp.id and not c.furniture]
    return sorted(near, key=lambda c: abs(c.order - comp.order))


def _visual_type(comp: Component, words: str) -> str:
    if comp.kind is ComponentKind.TABLE:
        return "table_region"
    if comp.kind is ComponentKind.EQUATION:
        return "layout_region"
    for type_, pattern in _VISUAL_WORDS:
        if pattern.search(words):
            return type_
    return "figure_panel"


class OfflineStrategy:
    """``PageStrategy`` without a model (see the module docstring)."""

    name = "offline"
    needs_image = False
    stop_when_idle = True

    def __init__(self, nlp: OfflineNLP, cache_size: int = 4096):
        self.nlp = nlp
        self._cache: OrderedDict[str, TextAnalysis] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ NLP with a small memo
    def analyses(self, texts: Sequence[str]) -> dict[str, TextAnalysis]:
        """The analysis of each text (memoised; the NLP runs once per distinct text)."""
        with self._lock:
            out = {t: self._cache[t] for t in texts if t in self._cache}
        missing = list(dict.fromkeys(t for t in texts if t not in out))
        if missing:
            fresh = dict(zip(missing, self.nlp.analyze(missing)))
            out.update(fresh)
            with self._lock:
                self._cache.update(fresh)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out

    # ------------------------------------------------------------------ PageStrategy
    def reflect(self, inp: RoundInput, graph: PageGraph) -> tuple[Feedback, Usage]:
        return coverage_feedback(inp.page, graph), Usage()

    def extract(self, inp: RoundInput) -> tuple[GraphPatch, Usage]:
        builder = _PatchBuilder(inp.graph)
        if inp.feedback is None:
            self._first_round(inp, builder)
        else:
            self._follow_feedback(inp, builder, inp.feedback)
        return builder.patch(), Usage()

    # ------------------------------------------------------------------ round 0
    def _first_round(self, inp: RoundInput, builder: _PatchBuilder) -> None:
        page, schema = inp.page, inp.schema
        comps = [c for c in sorted(page.components, key=lambda c: c.order) if needs_extraction(c)]
        analyses = self.analyses([c.content for c in comps if c.content.strip()])
        for comp in comps:
            analysis = analyses.get(comp.content)
            if comp.kind.is_visual:
                self._visual_entity(inp, builder, comp, analysis)
                continue
            if analysis is None:
                continue
            if comp.kind is ComponentKind.TITLE and schema.heading_type and is_good_name(clean_name(comp.text)):
                builder.entity(
                    clean_name(comp.text),
                    schema.heading_type,
                    "text",
                    [comp.id],
                    " > ".join(comp.section_path) or comp.text,
                )
            self._named_entities(inp, builder, comp, analysis)
            self._triples(inp, builder, comp, analysis)

    def _named_entities(
        self, inp: RoundInput, builder: _PatchBuilder, comp: Component, analysis: TextAnalysis, limit: int | None = None
    ) -> list[str]:
        ids: list[str] = []
        for ent in analysis.entities:
            name = clean_name(ent.text)
            if ent.label in NUMERIC_LABELS or not is_good_name(name):
                continue
            quality = entity_quality(name, ent.label, comp)
            if quality == "drop":
                continue
            type_ = (
                inp.schema.concept_type
                if quality == "concept"
                else self.nlp.map_label(ent.label, inp.schema.text_types)
            )
            ids.append(builder.entity(name, type_, "text", [comp.id], _sentence_with(analysis, ent.text, comp.content)))
            if limit is not None and len(set(ids)) >= limit:
                break
        return list(dict.fromkeys(ids))

    def _end(self, inp: RoundInput, builder: _PatchBuilder, comp: Component, phrase: str, sentence: str) -> str | None:
        name = clean_name(phrase)
        if builder.node_id(name) is None and not is_concept_name(name):
            return None
        return builder.entity(name, inp.schema.concept_type, "text", [comp.id], sentence)

    def _triples(self, inp: RoundInput, builder: _PatchBuilder, comp: Component, analysis: TextAnalysis) -> None:
        for triple in analysis.triples:
            source = self._end(inp, builder, comp, triple.subject, triple.sentence)
            target = self._end(inp, builder, comp, triple.object, triple.sentence)
            if source and target and triple.predicate:
                builder.relation(source, target, triple.predicate, [comp.id], triple.sentence)

    def _visual_entity(
        self, inp: RoundInput, builder: _PatchBuilder, comp: Component, analysis: TextAnalysis | None
    ) -> None:
        page = inp.page
        near = _neighbours(page, comp)
        caption = next((c for c in near if c.kind is ComponentKind.CAPTION and c.text.strip()), None)
        context = next(
            (c for c in near if c.kind in (ComponentKind.TITLE, ComponentKind.PARAGRAPH) and c.text.strip()), None
        )
        label = {ComponentKind.TABLE: "Table", ComponentKind.EQUATION: "Equation"}.get(comp.kind, "Figure")
        if caption is not None:
            base, cites = caption.text, [comp.id, caption.id]
        elif comp.kind is not ComponentKind.TABLE and comp.text.strip():
            base, cites = comp.text, [comp.id]
        elif context is not None:
            base, cites = f"{label}: {context.text}", [comp.id]
        else:
            base, cites = f"{label} {comp.id} on page {page.number}", [comp.id]
        name = clean_name(" ".join(base.split()[:MAX_NAME_WORDS]))
        if not is_good_name(name):
            name = f"{label} {comp.id} on page {page.number}"
        elif builder.node_id(name) is not None:  # e.g. one caption shared by two pictures
            name = f"{name} ({comp.id})"
        detail = [
            t
            for t in (caption.text if caption else "", comp.content, context.text if context and not caption else "")
            if t.strip()
        ]
        description = " ".join(detail) or name
        visual = builder.entity(name, _visual_type(comp, base + " " + comp.content), "visual", cites, description)
        if caption is not None:
            cap = self.analyses([caption.text])[caption.text]
            for ent in self._named_entities(inp, builder, caption, cap):
                builder.relation(visual, ent, "depicts", [comp.id, caption.id], caption.text)
        if comp.kind is ComponentKind.TABLE and analysis is not None:
            for ent in self._named_entities(inp, builder, comp, analysis, limit=TABLE_ENTITIES):
                builder.relation(ent, visual, "listed_in", [comp.id], name)

    # ------------------------------------------------------------------ later rounds
    def _follow_feedback(self, inp: RoundInput, builder: _PatchBuilder, feedback: Feedback) -> None:
        page = inp.page
        uncovered = [page.component(cid) for cid in feedback.with_status("uncovered")]
        texts = [c for c in uncovered if c is not None and not c.kind.is_visual and c.content.strip()]
        analyses = self.analyses([c.content for c in texts])
        for comp in texts:
            analysis = analyses[comp.content]
            lowered = comp.content.lower()
            phrases = sorted(
                dict.fromkeys(clean_name(p) for p in analysis.noun_phrases),
                key=lambda p: (-len(p.split()), lowered.find(p.lower())),
            )
            phrases = [p for p in phrases if is_concept_name(p)][:NOUN_PHRASES_PER_COMPONENT]
            if not phrases and is_concept_name(clean_name(comp.content)):
                phrases = [clean_name(comp.content)]
            for phrase in phrases:
                builder.entity(
                    phrase, inp.schema.concept_type, "text", [comp.id], _sentence_with(analysis, phrase, comp.content)
                )
        for cid in feedback.with_status("partially_covered"):
            partial = page.component(cid)
            if partial is not None:
                self._connect_component(inp, builder, partial)

    def _connect_component(self, inp: RoundInput, builder: _PatchBuilder, comp: Component) -> None:
        graph = inp.graph
        text = comp.content.lower()
        nodes = [n for n in graph.nodes if comp.id in n.component_ids]
        nodes.sort(key=lambda n: (text.find(n.name.lower()) % (len(text) + 1), n.id))
        visual = [n for n in nodes if n.modality == "visual"]
        if visual and len(nodes) == len(visual):
            for near in _neighbours(inp.page, comp, window=3):
                partner = next((n for n in graph.nodes if near.id in n.component_ids and n.modality == "text"), None)
                if partner is not None:
                    builder.relation(visual[0].id, partner.id, "illustrates", [comp.id, near.id], partner.name)
                    return
            return
        for left, right in zip(nodes, nodes[1:]):
            builder.relation(left.id, right.id, "mentioned_with", [comp.id], short(comp.content))
