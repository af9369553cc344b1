// The ask view: question, method and KG4VD mode; the answer with numbered citations that
// open the cited page with its regions outlined; the evidence used, with scores.
import { $, api, bus, colourFor, docs, duration, el, fill, matchesFilter, score, toast } from "./api.js";

let methods = [];
let lastAnswer = null;
const chosen = new Set();  // ids of the documents to answer from; empty: all
const STORAGE_KEY = "docgraph.answer";

export function initAsk(methodList) {
  methods = methodList;
  const preferred = ["kg4vd", "hvm"].find((n) => methods.some((m) => m.name === n)) || (methods[0] || {}).name;
  $("ask-method").replaceChildren(...methods.map((m) => el("option", { value: m.name, selected: m.name === preferred }, m.label)));
  $("ask-method").addEventListener("change", syncMethodOptions);
  $("ask-docs").addEventListener("toggle", () => $("ask-docs").open && renderChoices());
  $("ask-docs-filter").addEventListener("input", filterChoices);
  $("ask-docs-clear").addEventListener("click", () => { chosen.clear(); renderChoices(); });
  bus.on("workspace-changed", () => { syncMethodOptions(); renderChoices(); });
  syncMethodOptions();
  $("ask-form").addEventListener("submit", (event) => { event.preventDefault(); ask(); });
  $("ask-question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); ask(); }
  });
  $("evidence-graph").addEventListener("click", () => lastAnswer && bus.emit("show-evidence", lastAnswer.evidence));
  const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || "null");
  if (saved) renderAnswer(saved);
}

/** The options the chosen method takes: its modes, and the document chooser when it
 * answers from chosen documents in a library. */
function syncMethodOptions() {
  const method = methods.find((m) => m.name === $("ask-method").value);
  const modes = (method && method.modes) || [];
  $("ask-mode-label").hidden = modes.length === 0;
  // choosing documents: with a method that restricts retrieval to them, in a library
  $("ask-docs").hidden = !(method && method.scoped) || docs.list().length < 2;
}

/** The chooser's checkboxes, one per document by title, those chosen ticked. */
function renderChoices() {
  for (const id of [...chosen]) if (!docs.byId.has(id)) chosen.delete(id);
  const byTitle = docs.list().sort((a, b) => a.title.localeCompare(b.title));
  $("ask-docs-list").replaceChildren(...byTitle.map((d) => {
    const box = el("input", { type: "checkbox", value: d.id, checked: chosen.has(d.id), dataset: { test: "ask-doc-choice" },
      onchange: (e) => { if (e.target.checked) chosen.add(d.id); else chosen.delete(d.id); summarise(); } });
    const label = [d.metadata?.organisation, d.metadata?.period, d.metadata?.kind].filter(Boolean).join(" · ");
    return el("label", { class: "doc-choice", dataset: { docId: d.id } }, box, el("span", {}, d.title),
      label ? el("span", { class: "sub" }, label) : "");
  }));
  filterChoices();
  summarise();
}

function filterChoices() {
  const filter = $("ask-docs-filter").value;
  for (const row of $("ask-docs-list").children) row.hidden = !matchesFilter(docs.byId.get(row.dataset.docId) || {}, filter);
}

function summarise() {
  const names = [...chosen].map((id) => docs.title(id));
  $("ask-docs-summary").textContent = names.length === 0 ? "Answer from all documents"
    : names.length === 1 ? `Answer from ${names[0]}` : `Answer from ${names.length} chosen documents`;
}

async function ask() {
  const question = $("ask-question").value.trim();
  if (!question) return;
  const method = $("ask-method").value;
  const body = { question, method };
  if (!$("ask-mode-label").hidden) body.mode = $("ask-mode").value;
  if (!$("ask-docs").hidden && chosen.size) body.documents = [...chosen];
  $("ask-submit").disabled = true;
  $("ask-submit").textContent = "Asking…";
  try {
    const answer = await api("/api/ask", { json: body });
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(answer));
    renderAnswer(answer);
  } catch (error) {
    toast(error.status === 409 ? `${error.message} (Workspace → Build)` : `Ask failed: ${error.message}`, "error");
  } finally {
    $("ask-submit").disabled = false;
    $("ask-submit").textContent = "Ask";
  }
}

/** A piece of the answer text with its [n] markers turned into citation buttons. */
function withCitations(answer, text, numbers) {
  const parts = [];
  const pattern = /\[(\d+)\]/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const n = Number(match[1]);
    if (!numbers.has(n)) continue;
    parts.push(text.slice(last, match.index));
    parts.push(el("button", { class: "cite-inline", dataset: { test: "citation-inline", number: n },
      onclick: () => openCitation(answer, n) }, `[${n}]`));
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}

const CLAIM_TITLES = {
  supported: () => "Supported: what this sentence states is in the evidence it cites",
  partly: (c) => `Partly supported: not in the cited evidence: ${c.missing.join(", ")}`,
  unsupported: (c) => `Unsupported: not in the cited evidence: ${c.missing.join(", ") || "what it states"}`,
  uncited: (c) => `Cites nothing${c.missing.length ? `: ${c.missing.join(", ")} cannot be checked` : ""}`,
};

/** The answer text: citation buttons, and each sentence the claim check looked at wrapped
 * in a span marked by its status, whose title says what the cited evidence lacks. Claim
 * offsets count code points (Python's), so the text is cut as an array of code points. */
function answerText(answer) {
  const numbers = new Set(answer.citations.map((c) => c.number));
  const chars = Array.from(answer.text);
  const claims = (answer.claims || []).slice().sort((a, b) => a.start - b.start);
  const parts = [];
  let last = 0;
  for (const claim of claims) {
    if (claim.start < last || claim.end > chars.length) continue;
    parts.push(...withCitations(answer, chars.slice(last, claim.start).join(""), numbers));
    parts.push(el("span", { class: `claim claim-${claim.status}`, title: CLAIM_TITLES[claim.status](claim),
      dataset: { test: "claim", status: claim.status } },
    ...withCitations(answer, chars.slice(claim.start, claim.end).join(""), numbers)));
    last = claim.end;
  }
  parts.push(...withCitations(answer, chars.slice(last).join(""), numbers));
  return parts;
}

/** "claims 3/4 supported · 1 unsupported", or null when the answer was not checked. */
function claimSummary(answer) {
  if (!answer.verify || answer.verify === "off") return null;
  const claims = answer.claims || [];
  const count = (s) => claims.filter((c) => c.status === s).length;
  const rest = ["partly", "unsupported", "uncited"].filter((s) => count(s)).map((s) => `${count(s)} ${s}`);
  const text = claims.length ? [`claims ${count("supported")}/${claims.length} supported`, ...rest].join(" · ")
    : "claims: nothing to check";
  return el("span", { class: rest.length ? "claim-summary answer-warning" : "claim-summary",
    dataset: { test: "claim-summary" } }, text);
}

/** "named: 3M COMPANY Form 10-K FY2022 (+1)": in a library, the documents the question named and
 * whose pages routing weighed first; its title lists each with its weight and what named it. A
 * question comparing companies shows "compares: A · B", each party's first document. */
function routedNote(evidence) {
  const routed = (evidence && evidence.routed) || [];
  if (!routed.length) return null;
  const name = (r) => r.title || docs.title(r.doc_id);
  const parties = [...new Set(routed.map((r) => r.party).filter((p) => p !== null && p !== undefined))].sort();
  const text = parties.length > 1
    ? `compares: ${parties.map((p) => name(routed.find((r) => r.party === p))).join(" \u00b7 ")}`
    : `named: ${name(routed[0])}${routed.length > 1 ? ` (+${routed.length - 1})` : ""}`;
  return el("span", { dataset: { test: "answer-routed" },
    title: routed.map((r) => `${name(r)}: weight ${r.weight.toFixed(2)}, named by ${r.named_by.join(", ")}`).join("\n") },
  text);
}

export function renderAnswer(answer) {
  lastAnswer = answer;
  if ($("ask-question").value.trim() === "") $("ask-question").value = answer.question;
  $("answer").hidden = false;
  $("answer-text").replaceChildren(...answerText(answer));
  $("citations").replaceChildren(...answer.citations.map((c) => el("li", {},
    el("button", { class: "citation", dataset: { test: "citation", number: c.number, docId: c.doc_id, page: c.page },
      onclick: () => openCitation(answer, c.number) },
    el("span", { class: "cite-num" }, `[${c.number}]`),
    el("span", { class: "cite-where" }, `${c.document_title || docs.title(c.doc_id)} · p. ${c.page}`),
    el("span", { class: "sub" }, c.component_ids.length ? ` · ${c.component_ids.join(", ")}` : "")),
    c.quote ? el("blockquote", { class: "quote" }, c.quote) : null)));
  if (!answer.citations.length) $("citations").replaceChildren(el("li", { class: "sub" }, "No citations."));
  const total = Object.values(answer.timings || {}).reduce((a, b) => a + b, 0);
  fill($("answer-meta"),
    el("span", {}, methods.find((m) => m.name === answer.method)?.label || answer.method),
    answer.mode ? el("span", { dataset: { test: "answer-mode" } }, `mode ${answer.mode}`) : null,
    claimSummary(answer),
    routedNote(answer.evidence),
    el("span", {}, answer.model_used ? "model answer" : (answer.warnings || []).length
      ? "extractive fallback (the answer model failed)" : "extractive answer (no answer model configured)"),
    total ? el("span", {}, duration(total) === "0s" ? `${total.toFixed(2)}s` : duration(total)) : null,
    ...(answer.warnings || []).map((w) => el("span", { class: "answer-warning", dataset: { test: "answer-warning" } },
      `warning: ${w}`)));
  renderEvidence(answer.evidence);
}

/** Open the cited page with this citation's regions outlined (and the page's other citations). */
export function openCitation(answer, number) {
  const citation = answer.citations.find((c) => c.number === number);
  if (!citation) return;
  const samePage = answer.citations.filter((c) => c.doc_id === citation.doc_id && c.page === citation.page);
  const highlights = samePage.map((c) => ({ citation: c.number, label: `[${c.number}]`, bboxes: c.bboxes,
    active: c.number === number }));
  document.querySelectorAll(".citation.active").forEach((b) => b.classList.remove("active"));
  document.querySelectorAll(`.citation[data-number="${number}"]`).forEach((b) => b.classList.add("active"));
  bus.emit("open-page", citation.doc_id, citation.page, { highlights });
}

function renderEvidence(evidence) {
  $("evidence").hidden = false;
  const pages = evidence.pages || [];
  const entities = evidence.entities || [];
  const relations = evidence.relations || [];
  const chunks = evidence.chunks || [];
  $("evidence-graph").hidden = entities.length === 0;
  const none = (what) => el("li", { class: "sub" }, `no ${what}`);
  $("evidence-pages").replaceChildren(...(pages.length ? pages.map((p) => el("li", { dataset: { test: "evidence-page" } },
    el("a", { href: "#", onclick: (e) => { e.preventDefault(); bus.emit("open-page", p.doc_id, p.page); } },
      `${docs.title(p.doc_id)} · p. ${p.page}`), el("span", { class: "score" }, score(p.score)))) : [none("pages")]));
  $("evidence-entities").replaceChildren(...(entities.length ? entities.map(({ entity, score: s }) =>
    el("li", { dataset: { test: "evidence-entity", entity: entity.id } },
      el("span", { class: "dot", style: { background: colourFor(entity.type) } }),
      el("a", { href: "#", title: entity.description || "", onclick: (e) => { e.preventDefault(); openMention(entity); } },
        entity.name, el("span", { class: "sub" }, ` ${entity.type}`)),
      el("button", { class: "chip-graph", title: "show in the graph", onclick: () => bus.emit("show-entity", [entity.id]) }, "graph"),
      el("span", { class: "score" }, score(s)))) : [none("entities")]));
  $("evidence-relations").replaceChildren(...(relations.length ? relations.map((r) =>
    el("li", { dataset: { test: "evidence-relation" } },
      el("a", { href: "#", title: r.relation.description || "", onclick: (e) => { e.preventDefault(); openMention(r.relation); } },
        `${r.source_name || r.relation.source} `, el("em", {}, r.relation.label), ` ${r.target_name || r.relation.target}`),
      el("span", { class: "score" }, score(r.score)))) : [none("relations")]));
  $("evidence-chunks").replaceChildren(...(chunks.length ? chunks.map(({ chunk, score: s }) =>
    el("li", { class: "wrap", dataset: { test: "evidence-chunk" } },
      el("a", { href: "#", onclick: (e) => { e.preventDefault();
        bus.emit("open-page", chunk.doc_id, chunk.page, { components: chunk.component_ids, label: chunk.id }); } },
      `${docs.title(chunk.doc_id)} · p. ${chunk.page}`),
      el("span", { class: "score" }, score(s)),
      el("div", { class: "snippet" }, chunk.text.length > 240 ? `${chunk.text.slice(0, 240)}…` : chunk.text))) : [none("chunks")]));
}

/** Open the first page an entity or relation is grounded on, its components outlined. */
function openMention(item) {
  const mention = (item.mentions || [])[0];
  if (!mention) { toast("Not grounded on a page."); return; }
  bus.emit("open-page", mention.doc_id, mention.page, { components: mention.component_ids, label: item.name || item.label });
}
