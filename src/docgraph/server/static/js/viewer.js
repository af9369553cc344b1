// The page viewer: the page image with regions outlined on top (citations, entities,
// components), a Set-of-Marks toggle, the page's components and the entities grounded on it.
//
// Boxes are absolutely positioned over the image: a box in PDF points (x0, y0, x1, y1) is
// drawn at x0·s, y0·s with s = rendered image width / page width in points.
import { $, api, bus, colourFor, docs, el, toast } from "./api.js";
import { graphMethod } from "./graph.js";

const current = { page: null, docId: null, number: 0, highlights: [], pinned: new Set(), hover: null };
const STORAGE_KEY = "docgraph.viewer";

export function initViewer() {
  $("page-prev").addEventListener("click", () => step(-1));
  $("page-next").addEventListener("click", () => step(1));
  $("marks-toggle").addEventListener("change", showImage);
  $("page-image").addEventListener("load", layout);
  new ResizeObserver(layout).observe($("page-stage"));
  bus.on("open-page", (docId, number, options) => openPage(docId, number, options));
  bus.on("workspace-changed", () => { if (current.docId && !docs.byId.has(current.docId)) clear(); });
  bus.on("graph-method", () => { if (current.page) renderEntities(); });  // the entities of the graph shown
  const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || "null");
  if (saved && docs.byId.has(saved.docId)) openPage(saved.docId, saved.number).catch(() => clear());
}

/**
 * Show a page. options.highlights: [{bboxes: [{x0,y0,x1,y1}], label, citation, active}]
 * drawn as outlined regions; options.components: component ids to outline (an entity's or
 * a chunk's regions, labelled options.label).
 */
export async function openPage(docId, number, options = {}) {
  let page;
  try {
    page = await api(`/api/documents/${encodeURIComponent(docId)}/pages/${number}`);
  } catch (error) {
    toast(`Cannot open page ${number}: ${error.message}`, "error");
    return;
  }
  Object.assign(current, { page, docId: page.doc_id, number: page.number, pinned: new Set(), hover: null });
  current.highlights = [...(options.highlights || [])];
  if (options.components && options.components.length) {
    const boxes = page.components.filter((c) => options.components.includes(c.id));
    current.highlights.push({ entity: true, label: options.label || "", bboxes: boxes.map((c) => c.bbox) });
  }
  delete $("page-overlay").dataset.scrolled;
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ docId: page.doc_id, number: page.number }));
  $("viewer-empty").hidden = true;
  $("page-stage").hidden = false;
  $("viewer-panels").hidden = false;
  const total = docs.pages(page.doc_id);
  $("viewer-title").textContent = docs.title(page.doc_id);
  $("page-label").textContent = `page ${page.number}${total ? ` of ${total}` : ""}`;
  $("page-prev").disabled = page.number <= 1;
  $("page-next").disabled = Boolean(total) && page.number >= total;
  $("page-stage").dataset.docId = page.doc_id;
  $("page-stage").dataset.page = String(page.number);
  $("page-stage").dataset.pageWidth = String(page.width);
  showImage();
  renderComponents();
  renderEntities();
  if (options.scroll !== false) $("viewer").scrollIntoView({ block: "nearest" });
}

function clear() {
  Object.assign(current, { page: null, docId: null, number: 0, highlights: [] });
  sessionStorage.removeItem(STORAGE_KEY);
  $("viewer-empty").hidden = false;
  $("page-stage").hidden = true;
  $("viewer-panels").hidden = true;
  $("viewer-title").textContent = "Page viewer";
  $("page-label").textContent = "";
}

function step(delta) {
  if (!current.page) return;
  const total = docs.pages(current.docId) || Infinity;
  const next = Math.min(Math.max(1, current.number + delta), total);
  if (next !== current.number) openPage(current.docId, next, { scroll: false });
}

function showImage() {
  const page = current.page;
  if (!page) return;
  const marks = $("marks-toggle").checked;
  const img = $("page-image");
  img.dataset.mode = marks ? "marks" : "page";
  img.alt = `${docs.title(page.doc_id)}, page ${page.number}${marks ? " (Set-of-Marks)" : ""}`;
  img.src = marks ? page.marks_url : page.image_url;
  if (img.complete) layout();
}

/** Position every box for the image's current rendered size. */
function layout() {
  const page = current.page;
  const img = $("page-image");
  const overlay = $("page-overlay");
  if (!page || !img.clientWidth) { overlay.replaceChildren(); return; }
  const scale = img.clientWidth / page.width;
  overlay.dataset.scale = String(scale);
  const boxes = [];
  const place = (bbox, cls, attrs = {}, label = "") => {
    const node = el("div", { class: `box ${cls}`, ...attrs,
      style: { left: `${bbox.x0 * scale}px`, top: `${bbox.y0 * scale}px`,
               width: `${(bbox.x1 - bbox.x0) * scale}px`, height: `${(bbox.y1 - bbox.y0) * scale}px` } },
      label ? el("span", { class: "box-label" }, label) : null);
    for (const k of ["x0", "y0", "x1", "y1"]) node.dataset[k] = String(bbox[k]);
    boxes.push(node);
  };
  for (const h of current.highlights) {
    const cls = `hl-box${h.entity ? " entity" : ""}${h.active ? " active" : ""}`;
    h.bboxes.forEach((b, i) => place(b, cls, { dataset: { test: "highlight-box", citation: h.citation ?? "" } },
      i === 0 ? h.label : ""));
  }
  for (const c of page.components) {
    if (current.pinned.has(c.id) || current.hover === c.id) {
      place(c.bbox, "comp-box", { dataset: { test: "component-box", component: c.id } }, c.id);
    }
  }
  overlay.replaceChildren(...boxes);
  updateDownload();
  const first = overlay.querySelector(".hl-box");
  if (first && !overlay.dataset.scrolled) {
    overlay.dataset.scrolled = "1";
    first.scrollIntoView({ block: "center", behavior: "instant" });
  }
}

/** The "PNG" link: the server draws the outlined regions (active citation first) into the page image. */
function updateDownload() {
  const link = $("page-download");
  const shown = current.highlights.filter((h) => h.active).concat(current.highlights.filter((h) => !h.active));
  const chosen = shown[0];
  link.hidden = !chosen || !chosen.bboxes.length;
  if (link.hidden) return;
  const params = new URLSearchParams({ n: String(chosen.citation || 1) });
  for (const b of chosen.bboxes) params.append("bbox", [b.x0, b.y0, b.x1, b.y1].map((v) => v.toFixed(2)).join(","));
  link.href = `${current.page.image_url.replace(/\/image$/, "/highlight")}?${params}`;
}

function renderComponents() {
  const comps = current.page.components;
  $("components-count").textContent = `(${comps.length})`;
  $("page-components").replaceChildren(...comps.map((c) => {
    const text = (c.markdown || c.text || "").replace(/\s+/g, " ").trim();
    const item = el("li", { class: "component", dataset: { test: "component", component: c.id } },
      el("span", { class: `kind k-${c.kind_name}` }, c.id),
      el("span", { class: "snippet" }, text ? (text.length > 140 ? `${text.slice(0, 140)}…` : text) : `(${c.kind_name})`),
      c.furniture ? el("span", { class: "sub" }, " furniture") : null);
    item.addEventListener("mouseenter", () => { current.hover = c.id; layout(); });
    item.addEventListener("mouseleave", () => { current.hover = null; layout(); });
    item.addEventListener("click", () => {
      if (current.pinned.has(c.id)) current.pinned.delete(c.id); else current.pinned.add(c.id);
      item.classList.toggle("pinned", current.pinned.has(c.id));
      layout();
    });
    return item;
  }));
}

async function renderEntities() {
  const { doc_id: docId, number } = current.page;
  const list = $("page-entities");
  list.replaceChildren(el("li", { class: "sub" }, "loading…"));
  let data;
  try {
    const method = graphMethod();
    if (!method) throw new Error("No installed method has an entity graph.");
    data = await api(`/api/documents/${encodeURIComponent(docId)}/pages/${number}/entities?method=${encodeURIComponent(method)}`);
  } catch (error) {
    list.replaceChildren(el("li", { class: "sub" }, error.message));
    return;
  }
  if (current.docId !== docId || current.number !== number) return;  // another page opened meanwhile
  $("entities-count").textContent = `(${data.entities.length})`;
  if (!data.entities.length) {
    list.replaceChildren(el("li", { class: "sub" }, data.note || "No entities grounded on this page."));
    return;
  }
  list.replaceChildren(...data.entities.map((e) => el("li", { class: "chip", dataset: { test: "page-entity", entity: e.id },
    style: { borderColor: colourFor(e.type) }, title: `${e.type} · ${e.modality}${e.description ? ` — ${e.description}` : ""}` },
  el("button", { class: "chip-main", onclick: () => {
    current.highlights = current.highlights.filter((h) => !h.entity);
    const boxes = current.page.components.filter((c) => e.component_ids.includes(c.id)).map((c) => c.bbox);
    current.highlights.push({ entity: true, label: e.name, bboxes: boxes });
    layout();
  } }, el("span", { class: "dot", style: { background: colourFor(e.type) } }), e.name,
  el("span", { class: "sub" }, ` ${e.type}`)),
  el("button", { class: "chip-graph", title: "show in the graph", dataset: { test: "page-entity-graph" },
    onclick: () => bus.emit("show-entity", [e.id]) }, "graph"))));
}
