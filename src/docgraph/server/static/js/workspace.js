// The workspace view: documents with page counts and build status per method, upload,
// and builds with live progress. The job state lives on the server, so after a reload
// this view finds the running job again and keeps following it.
import { $, api, bus, count, docs, duration, el, matchesFilter, toast } from "./api.js";

let methods = [];          // [{name, label, modes}]
let methodStatus = {};     // name -> status (+ job)
let pollTimer = null;
let wasBusy = false;
const POLL_MS = 1000;

export async function initWorkspace(methodList) {
  methods = methodList;
  $("upload-input").addEventListener("change", () => {
    const files = [...$("upload-input").files];
    $("upload-label").textContent = files.length ? files.map((f) => f.name).join(", ") : "Choose files…";
  });
  $("upload-form").addEventListener("submit", (event) => { event.preventDefault(); upload(); });
  $("documents-filter").addEventListener("input", applyFilter);
  await refresh();
}

/** Reload documents, build status and jobs; keeps polling while a job is queued or running. */
export async function refresh() {
  const [documents, build, jobs] = await Promise.all([api("/api/documents"), api("/api/build"), api("/api/jobs")]);
  docs.set(documents.documents);
  methodStatus = build.methods;
  renderDocuments(documents.documents);
  renderJobs(jobs);
  const busy = jobs.some((j) => j.state === "queued" || j.state === "running");
  $("busy").hidden = !busy;
  $("busy").textContent = busy ? runningLabel(jobs) : "";
  clearTimeout(pollTimer);
  if (busy) pollTimer = setTimeout(() => refresh().catch(() => schedule()), POLL_MS);
  if (wasBusy && !busy) bus.emit("workspace-changed");
  wasBusy = busy;
  return busy;
}

function schedule() {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(() => refresh().catch(() => schedule()), POLL_MS * 3);
}

function runningLabel(jobs) {
  const job = jobs.find((j) => j.state === "running") || jobs.find((j) => j.state === "queued");
  if (!job) return "";
  const p = job.progress;
  return `${job.label}${p.total ? ` · ${p.done}/${p.total}` : ""}`;
}

/** "3/5" for a method on one document when the method reports per-document status. */
function perDocument(info, docId) {
  const entry = info && info.documents && info.documents[docId];
  if (!entry) return null;
  return { built: entry.built_pages ?? 0, total: entry.total_pages ?? 0 };
}

function statusBadge(built, total) {
  const state = total && built >= total ? "ok" : built ? "partial" : "none";
  const text = total && built >= total ? "built" : `${count(built)}/${count(total)}`;
  return el("span", { class: `badge ${state}`, title: `${built} of ${total} pages built` }, text);
}

function renderDocuments(list) {
  const shown = methods.filter((m) => m.name !== "nodocs");
  const perDoc = shown.filter((m) => list.some((d) => perDocument(methodStatus[m.name], d.id)));
  $("documents-head").replaceChildren(
    el("th", {}, "Document"), el("th", { class: "num" }, "Pages"), el("th", {}, "Status"),
    ...perDoc.map((m) => el("th", {}, m.label)), el("th", {}, ""));
  $("documents-empty").hidden = list.length > 0;
  $("documents-body").replaceChildren(...list.map((d) => el("tr", { dataset: { test: "document-row", docId: d.id } },
    el("td", {}, el("a", { href: "#", class: "doc-link", dataset: { test: "document-open" },
      onclick: (e) => { e.preventDefault(); bus.emit("open-page", d.id, 1); } }, d.title),
      el("div", { class: "sub", dataset: { test: "document-label" } },
        [d.metadata?.organisation, d.metadata?.period, d.metadata?.kind].filter(Boolean).join(" · ")),
      el("div", { class: "sub" }, `${d.file} · ${d.id}`)),
    el("td", { class: "num", dataset: { test: "document-pages" } }, count(d.page_count)),
    el("td", { dataset: { test: "document-status" } },
      d.status === "ready" && d.pages_stored >= d.page_count ? el("span", { class: "badge ok" }, "ready")
        : el("span", { class: "badge partial" }, `${d.status} ${d.pages_stored}/${d.page_count}`)),
    ...perDoc.map((m) => {
      const s = perDocument(methodStatus[m.name], d.id);
      return el("td", {}, s ? statusBadge(s.built, s.total) : "—");
    }),
    el("td", { class: "actions" }, el("button", { class: "ghost-btn danger", title: "remove this document",
      dataset: { test: "document-remove" }, onclick: () => removeDocument(d) }, "Remove")))));
  applyFilter();
}

/** Rows whose document holds every word typed in the filter; the others hidden. */
function applyFilter() {
  const filter = $("documents-filter").value;
  const rows = [...$("documents-body").children];
  let shown = 0;
  for (const row of rows) {
    row.hidden = !matchesFilter(docs.byId.get(row.dataset.docId) || {}, filter);
    shown += row.hidden ? 0 : 1;
  }
  $("documents-shown").textContent = filter.trim() ? `${shown} of ${rows.length} shown` : "";
}

function renderJobs(jobs) {
  const byMethod = {};
  for (const job of jobs) if (job.kind === "build" && !byMethod[job.method]) byMethod[job.method] = job;
  const rows = methods.map((m) => {
    const info = methodStatus[m.name] || {};
    const job = byMethod[m.name];
    const active = job && (job.state === "queued" || job.state === "running");
    return el("div", { class: "method-row", dataset: { test: "method-row", method: m.name } },
      el("div", { class: "method-name" }, m.label,
        el("div", { class: "sub", dataset: { test: "method-built" } }, info.error ? `status failed: ${info.error}`
          : `${count(info.built_pages ?? 0)}/${count(info.total_pages ?? 0)} pages built`)),
      el("div", { class: "method-state" }, info.error ? el("span", { class: "badge err" }, "error")
        : statusBadge(info.built_pages ?? 0, info.total_pages ?? 0)),
      el("button", { class: "ghost-btn", disabled: active, dataset: { test: "method-build" },
        onclick: () => startBuild(m.name) }, active ? "Building…" : "Build"),
      job ? jobCard(job) : null);
  });
  const ingests = jobs.filter((j) => j.kind === "ingest").slice(0, 3).map(jobCard);
  $("jobs").replaceChildren(...rows, ...(ingests.length ? [el("h3", {}, "Uploads"), ...ingests] : []));
}

/** One job: state, progress bar, pages done/total, rounds, calls, tokens, elapsed and ETA. */
function jobCard(job) {
  const p = job.progress || {};
  const pct = p.total ? Math.min(100, Math.round((100 * p.done) / p.total)) : job.state === "done" ? 100 : 0;
  const stats = Object.entries(p.stats || {}).map(([k, v]) => `${k} ${typeof v === "number" ? count(v) : v}`);
  const u = job.usage;
  if (u && (u.calls || u.input_tokens || u.output_tokens)) {
    stats.push(`model calls ${count(u.calls)}`, `tokens ${count(u.input_tokens + u.output_tokens)}`);
  }
  const result = job.result || {};
  let outcome = "";
  if (job.state === "done" && job.kind === "build") {
    outcome = `built ${count(result.pages_built)} page(s), ${count(result.pages_skipped)} already done in ${duration(result.seconds)}`;
  } else if (job.state === "done" && job.kind === "ingest") {
    outcome = `added ${result.added.length}, already present ${result.skipped.length}`
      + (result.failures.length ? `, failed ${result.failures.length}: ${result.failures.join("; ")}` : "");
  }
  return el("div", { class: `job ${job.state}`, dataset: { test: "job", jobId: job.id, state: job.state, kind: job.kind } },
    el("div", { class: "job-head" },
      el("span", { class: `badge ${job.state}` }, job.state), " ",
      el("strong", {}, job.label),
      el("span", { class: "sub" }, p.description ? ` · ${p.description}` : "")),
    el("div", { class: "bar" }, el("div", { class: "fill", style: { width: `${pct}%` } })),
    el("div", { class: "job-stats", dataset: { test: "job-stats" } },
      el("span", { dataset: { test: "job-pages" } }, `${count(p.done ?? 0)}/${count(p.total ?? 0)}`),
      ...stats.map((s) => el("span", {}, s)),
      job.state === "running" ? el("span", {}, `elapsed ${duration(p.elapsed_s)}`) : null,
      job.state === "running" ? el("span", { dataset: { test: "job-eta" } }, `ETA ${duration(p.eta_s)}`) : null),
    outcome ? el("div", { class: "job-outcome" }, outcome) : null,
    job.error ? el("div", { class: "job-error" }, job.error) : null,
    (p.notes || []).length ? el("details", {}, el("summary", {}, `${p.notes.length} note(s)`),
      el("ul", {}, p.notes.slice(-10).map((n) => el("li", {}, n)))) : null);
}

async function upload() {
  const files = [...$("upload-input").files];
  if (!files.length) { toast("Choose one or more files first.", "error"); return; }
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  $("upload-button").disabled = true;
  try {
    const job = await api("/api/upload", { method: "POST", body: form });
    toast(`Uploaded ${job.files.join(", ")}; adding to the workspace…`);
    $("upload-input").value = "";
    $("upload-label").textContent = "Choose files…";
    await refresh();
  } catch (error) {
    toast(`Upload failed: ${error.message}`, "error");
  } finally {
    $("upload-button").disabled = false;
  }
}

async function startBuild(method) {
  try {
    await api("/api/build", { json: { method } });
    await refresh();
  } catch (error) {
    toast(`Build failed to start: ${error.message}`, "error");
  }
}

async function removeDocument(doc) {
  if (!window.confirm(`Remove "${doc.title}" and everything built from it?`)) return;
  try {
    await api(`/api/documents/${encodeURIComponent(doc.id)}`, { method: "DELETE" });
    toast(`Removed ${doc.title}.`);
    await refresh();
    bus.emit("workspace-changed");
  } catch (error) {
    toast(`Could not remove: ${error.message}`, "error");
  }
}
