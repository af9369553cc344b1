// The graph view: the entity graph of a method that has one (KG4VD, HVM-GraphRAG: /api/methods
// flags them with `graph`) around chosen entities (or an answer's evidence), drawn with Cytoscape.js (vendored under /static/vendor/). Colour = entity type,
// shape = modality (text: circle, visual: rounded square), thick border = the entities asked
// for, dashed edge = a cross-page relation. Clicking a node lists the pages that mention it;
// clicking a page opens it in the viewer with the mentioning components outlined.
import { $, api, bus, colourFor, docs, el, fill, toast } from "./api.js";

let cy = null;
let loadedOnce = false;
let searchTimer = null;
let latest = 0;  // the newest graph request; older answers arriving later are dropped

/** The method whose graph is shown (the "Graph of" choice); "" when no method has one. */
export function graphMethod() { return $("graph-method").value; }

function withMethod(path) {
  return `${path}${path.includes("?") ? "&" : "?"}method=${encodeURIComponent(graphMethod())}`;
}

export function initGraph(switchTab, methods) {
  const graphs = methods.filter((m) => m.graph);
  $("graph-method").replaceChildren(...graphs.map((m) => el("option", { value: m.name }, m.label)));
  $("graph-method").addEventListener("change", () => {
    loadedOnce = false;
    bus.emit("graph-method", graphMethod());
    showHubs();
  });
  bus.on("show-entity", (ids) => { loadedOnce = true; switchTab("graph"); showNeighbourhood(ids); });
  bus.on("show-evidence", (evidence) => { loadedOnce = true; switchTab("graph"); showEvidence(evidence); });
  bus.on("tab", (name) => {
    if (name !== "graph" || loadedOnce) return;
    if (graphs.length) showHubs(); else note("No installed method has an entity graph to show.");
  });
  bus.on("workspace-changed", () => { loadedOnce = false; });
  $("graph-search-form").addEventListener("submit", (e) => { e.preventDefault(); search(); });
  $("graph-search").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(search, 250); });
  window.docgraph = { graph: () => cy };  // for tests and the browser console
}

function note(text) { $("graph-note").textContent = text || ""; }

async function search() {
  const q = $("graph-search").value.trim();
  try {
    const data = await api(withMethod(`/api/entities?q=${encodeURIComponent(q)}&limit=12`));
    renderResults(data.entities, q ? `${data.entities.length} match(es)` : "");
  } catch (error) {
    renderResults([], error.message);
  }
}

function renderResults(entities, message) {
  $("graph-results").replaceChildren(...entities.map((e) => el("li", {},
    el("button", { class: "chip-main", dataset: { test: "graph-result", entity: e.id },
      onclick: () => showNeighbourhood([e.id]) },
    el("span", { class: "dot", style: { background: colourFor(e.type) } }), e.name,
    el("span", { class: "sub" }, ` ${e.type} · ${e.degree} link(s)`)))));
  if (message) note(message);
}

/** First visit: the best-connected entities and the graph around them. */
async function showHubs() {
  loadedOnce = true;
  const request = latest;
  try {
    const data = await api(withMethod("/api/entities?limit=8"));
    if (request !== latest) return;  // something else was asked for meanwhile
    renderResults(data.entities, "");
    if (data.entities.length) await showNeighbourhood(data.entities.slice(0, 4).map((e) => e.id), 1);
  } catch (error) {
    note(error.message);
    if (cy) { cy.destroy(); cy = null; }
  }
}

export async function showNeighbourhood(ids, hops) {
  loadedOnce = true;
  const request = ++latest;
  const h = hops ?? Number($("graph-hops").value);
  const query = ids.map((id) => `entity=${encodeURIComponent(id)}`).join("&");
  try {
    const data = await api(withMethod(`/api/graph?${query}&hops=${h}&limit=120`));
    if (request !== latest) return true;
    draw(data.nodes, data.edges);
    note(`${data.nodes.length} entities, ${data.edges.length} relations within ${data.hops} hop(s)`
      + (data.truncated ? " (cut at 120 entities)" : "") + (data.missing.length ? ` · not found: ${data.missing.join(", ")}` : ""));
  } catch (error) {
    note(error.message);
    return false;
  }
  return true;
}

/** An answer's evidence: its neighbourhood in the answering method's graph (when it has one),
 *  else the evidence entities and relations themselves. */
async function showEvidence(evidence) {
  const ids = (evidence.entities || []).map((e) => e.entity.id);
  const select = $("graph-method");
  if ([...select.options].some((o) => o.value === evidence.method) && ids.length) {
    if (select.value !== evidence.method) { select.value = evidence.method; bus.emit("graph-method", evidence.method); }
    if (await showNeighbourhood(ids, 1)) return;
  }
  ++latest;
  const nodes = (evidence.entities || []).map(({ entity }) => ({ ...entity, seed: true, degree: 0,
    pages: (entity.mentions || []).map((m) => ({ doc_id: m.doc_id, page: m.page, component_ids: m.component_ids })) }));
  const known = new Set(nodes.map((n) => n.id));
  const edges = (evidence.relations || []).map((r) => r.relation).filter((r) => known.has(r.source) && known.has(r.target));
  draw(nodes, edges);
  note(`evidence of the last answer (${evidence.method}): ${nodes.length} entities, ${edges.length} relations`);
}

const STYLE = [
  { selector: "node", style: {
    "background-color": "data(colour)", label: "data(label)", "font-size": 11, color: "#1d2330",
    "text-outline-color": "#fcfcfd", "text-outline-width": 2,
    "text-valign": "bottom", "text-margin-y": 3, "text-wrap": "ellipsis", "text-max-width": 120,
    width: "mapData(degree, 0, 20, 16, 38)", height: "mapData(degree, 0, 20, 16, 38)",
    "border-width": 1, "border-color": "#fff" } },
  { selector: "node[modality = 'visual']", style: { shape: "round-rectangle" } },
  { selector: "node[?seed]", style: { "border-width": 3, "border-color": "#1d2330" } },
  { selector: "node:selected", style: { "border-width": 4, "border-color": "#f5a623" } },
  { selector: "edge", style: {
    width: 1.4, "line-color": "#b9c1cf", "target-arrow-color": "#b9c1cf", "target-arrow-shape": "triangle",
    "arrow-scale": 0.8, "curve-style": "bezier", label: "data(label)", "font-size": 8, color: "#5b6475",
    "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8,
    "text-background-padding": 1, "min-zoomed-font-size": 9 } },
  { selector: "edge.near", style: { "min-zoomed-font-size": 0, "line-color": "#7d889c", "target-arrow-color": "#7d889c" } },
  { selector: "edge[?cross_page]", style: { "line-style": "dashed" } },
  { selector: "edge:selected", style: { "line-color": "#f5a623", "target-arrow-color": "#f5a623" } },
];

const READABLE_ZOOM = 0.75;
// force-directed, spread out enough for labels; deterministic for the same graph
const LAYOUT = { name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true,
  nodeRepulsion: () => 20000, idealEdgeLength: () => 60, edgeElasticity: () => 60, nodeOverlap: 20,
  gravity: 1.5, componentSpacing: 30, numIter: 1500, padding: 30 };

function draw(nodes, edges) {
  if (!window.cytoscape) { note("The graph library did not load (static/vendor/cytoscape.min.js)."); return; }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const elements = [
    ...nodes.map((n) => ({ group: "nodes", data: { id: n.id, label: n.name, type: n.type, modality: n.modality,
      colour: colourFor(n.type), degree: n.degree || 0, seed: Boolean(n.seed) } })),
    ...edges.map((e) => ({ group: "edges", data: { id: `rel:${e.id}`, source: e.source, target: e.target,
      label: e.label, cross_page: Boolean(e.cross_page) } })),
  ];
  if (cy) cy.destroy();
  cy = window.cytoscape({ container: $("graph-canvas"), elements, style: STYLE, minZoom: 0.2, maxZoom: 4,
    layout: nodes.length > 1 ? LAYOUT : { name: "grid", padding: 30 } });
  cy.on("tap", "node", (event) => {
    cy.edges().removeClass("near");
    event.target.connectedEdges().addClass("near");  // show the labels of its relations
    showNode(byId.get(event.target.id()));
  });
  cy.on("dbltap", "node", (event) => showNeighbourhood([event.target.id()]));
  if (cy.zoom() < READABLE_ZOOM) {  // a large or long graph: keep labels readable, centred on the seeds
    cy.zoom(READABLE_ZOOM);
    const seeds = cy.nodes("[?seed]");
    cy.center(seeds.length ? seeds : cy.nodes());
  }
  $("graph-canvas").dataset.nodes = String(nodes.length);
  renderLegend(nodes);
  $("graph-node").hidden = true;
}

function renderLegend(nodes) {
  const types = [...new Set(nodes.map((n) => n.type))].sort();
  $("graph-legend").replaceChildren(...types.map((t) => el("span", { class: "legend-item" },
    el("span", { class: "dot", style: { background: colourFor(t) } }), t)),
  el("span", { class: "legend-item sub" }, "● text  ■ visual  ┄ cross-page"));
}

/** Details of a node with click-through to the pages that mention it. */
function showNode(node) {
  if (!node) return;
  const panel = $("graph-node");
  panel.hidden = false;
  panel.dataset.entity = node.id;
  fill(panel,
    el("div", { class: "node-head" }, el("span", { class: "dot", style: { background: colourFor(node.type) } }),
      el("strong", {}, node.name), el("span", { class: "sub" }, ` ${node.type} · ${node.modality}`),
      el("button", { class: "ghost-btn", dataset: { test: "graph-expand" }, onclick: () => showNeighbourhood([node.id]) },
        "Expand around it")),
    node.description ? el("p", {}, node.description) : null,
    (node.aliases || []).length ? el("p", { class: "sub" }, `also: ${node.aliases.join(", ")}`) : null,
    el("div", { class: "sub" }, "Mentioned on:"),
    el("ul", { class: "mentions" }, (node.pages || []).map((p) => el("li", {},
      el("a", { href: "#", dataset: { test: "graph-node-page", docId: p.doc_id, page: p.page },
        onclick: (e) => { e.preventDefault();
          bus.emit("open-page", p.doc_id, p.page, { components: p.component_ids, label: node.name }); } },
      `${docs.title(p.doc_id)} · p. ${p.page}`), el("span", { class: "sub" }, ` ${p.component_ids.join(", ")}`)))));
  if (!(node.pages || []).length) toast("This entity is not grounded on a page.");
}
