// Start-up: tabs (kept in the URL hash so a reload stays on the same view), then the views.
import { $, api, bus, toast } from "./api.js";
import { initAsk } from "./ask.js";
import { initGraph } from "./graph.js";
import { initViewer } from "./viewer.js";
import { initWorkspace } from "./workspace.js";

const TABS = ["workspace", "ask", "graph"];

function switchTab(name) {
  if (!TABS.includes(name)) name = "workspace";
  for (const tab of TABS) {
    $(`view-${tab}`).hidden = tab !== name;
    $(`tab-${tab}`).classList.toggle("active", tab === name);
    $(`tab-${tab}`).setAttribute("aria-selected", String(tab === name));
  }
  if (window.location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
  bus.emit("tab", name);
}

async function start() {
  for (const tab of TABS) $(`tab-${tab}`).addEventListener("click", () => switchTab(tab));
  window.addEventListener("hashchange", () => switchTab(window.location.hash.slice(1)));
  let methods = [];
  try {
    methods = await api("/api/methods");
  } catch (error) {
    toast(`Cannot reach the server: ${error.message}`, "error");
    return;
  }
  await initWorkspace(methods).catch((error) => toast(error.message, "error"));
  initAsk(methods);
  initGraph(switchTab, methods);
  initViewer();
  const initial = window.location.hash.slice(1) || "workspace";
  switchTab(initial);
  document.body.dataset.ready = "1";
}

start();
