// Small shared helpers: calling the JSON API, building DOM nodes, formatting numbers,
// a shared store of document titles, and a one-line message area.

/** Call the API; returns parsed JSON. Throws Error(detail) on a non-2xx answer;
 *  a 401 (token missing or changed) sends the browser to the sign-in form. */
export async function api(path, options = {}) {
  const opts = { credentials: "same-origin", ...options };
  if (opts.json !== undefined) {
    opts.method = opts.method || "POST";
    opts.headers = { "Content-Type": "application/json", ...(opts.headers || {}) };
    opts.body = JSON.stringify(opts.json);
    delete opts.json;
  }
  const response = await fetch(path, opts);
  if (response.status === 401) {
    window.location.href = "/login";
    throw new Error("sign-in needed");
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = { detail: text }; }
  if (!response.ok) {
    let detail = data && data.detail;
    if (Array.isArray(detail)) detail = detail.map((d) => d.msg).join("; ");
    const error = new Error(detail || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

/** el("div", {class: "x", dataset: {test: "y"}, onclick: fn}, "text", child…) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style" && typeof value === "object") Object.assign(node.style, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const $ = (id) => document.getElementById(id);

/** Replace a node's children, skipping null/undefined/false (replaceChildren would print them). */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

export function score(value) {
  return typeof value === "number" ? value.toFixed(3) : "";
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export function count(n) {
  return typeof n === "number" ? n.toLocaleString("en") : String(n ?? "");
}

/** Document titles by id, kept fresh by the workspace view. */
export const docs = {
  byId: new Map(),
  set(list) { this.byId = new Map(list.map((d) => [d.id, d])); },
  list() { return [...this.byId.values()]; },
  title(id) { const d = this.byId.get(id); return d ? d.title : id; },
  pages(id) { const d = this.byId.get(id); return d ? d.page_count : null; },
};

/** Whether every word typed in `filter` occurs in what a document is known by: its title,
 * shelf label (organisation, period, kind, trading symbol) and file name. */
export function matchesFilter(doc, filter) {
  const m = doc.metadata || {};
  const known = [doc.title, m.organisation, m.period, m.kind, m.ticker, doc.file].filter(Boolean).join(" ").toLowerCase();
  return filter.toLowerCase().split(/\s+/).filter(Boolean).every((word) => known.includes(word));
}

let toastTimer = null;
/** A short message at the top of the page (errors stay until clicked). */
export function toast(message, kind = "info") {
  const box = $("toast");
  box.textContent = message;
  box.className = `toast ${kind}`;
  box.hidden = false;
  clearTimeout(toastTimer);
  box.onclick = () => { box.hidden = true; };
  if (kind !== "error") toastTimer = setTimeout(() => { box.hidden = true; }, 4000);
}

/** A tiny event bus so the views can ask each other for things without importing cycles. */
const handlers = {};
export const bus = {
  on(name, fn) { (handlers[name] = handlers[name] || []).push(fn); },
  emit(name, ...args) { (handlers[name] || []).forEach((fn) => fn(...args)); },
};

/** A stable colour for a label (entity types, methods). */
export function colourFor(label) {
  const palette = ["#3b6fd8", "#d9822b", "#2e9e6b", "#b84dbf", "#c9463d", "#1f9aa8", "#8a6d3b",
                   "#5c6bc0", "#7cb342", "#e06c9f", "#6d4c41", "#00897b"];
  let h = 0;
  for (const ch of String(label || "")) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return palette[h % palette.length];
}
