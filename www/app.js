// The mirrorpid playground. All logic runs in the WASM package (../src via
// wasm-pack --target web): the page edits a scenario, calls simulate(), and
// draws what comes back. This file holds the scenario and wires the parts:
// js/dom.js (helpers), js/url.js (the shareable address), js/events.js (the
// event kinds), js/editor.js, js/topology.js, js/results.js, js/decoders.js.
import init, { simulate, simulatorLimits, fVersion } from "./pkg/mirrorpid.js";
import { $, h, clearError, showError, status } from "./js/dom.js";
import { decodePidForm, decodeRecordForm } from "./js/decoders.js";
import { createEditor } from "./js/editor.js";
import { renderResults } from "./js/results.js";
import { drawTopology } from "./js/topology.js";
import { readUrl, writeUrl } from "./js/url.js";

let scenario = null;
let report = null;
let renderEditor = () => {};

function run() {
  try {
    report = simulate(scenario);
    clearError();
  } catch (e) {
    report = null;
    showError(String(e.message || e));
  }
}

/** Whether the scenario is small enough to draw and list (the simulator's own limits). */
function drawable() {
  const limits = simulatorLimits();
  const size = (key) => (Array.isArray(scenario[key]) ? scenario[key].length : 0);
  return ["clusters", "links", "producers", "events"].every((key) => size(key) <= limits[key]);
}

function render({ keepJson = false } = {}) {
  $("#description").textContent = scenario.description || "";
  if (drawable()) {
    drawTopology($("#topology"), scenario);
    renderEditor();
  } else {
    // Too large to run, so too large to draw: the error says which limit.
    $("#topology").replaceChildren();
  }
  if (!keepJson && drawable()) $("#json").value = JSON.stringify(scenario, null, 2);
  renderResults(report);
}

function setScenario(next, { fromJsonEditor = false } = {}) {
  scenario = next;
  run();
  render({ keepJson: fromJsonEditor });
  // A scenario too large to run is too large to share: writing megabytes
  // into the address costs more than the simulator's refusal.
  if (drawable()) writeUrl(scenario);
}

/** Changes a copy of the scenario with `mutate`, then runs and shows it. */
function edit(mutate) {
  const next = structuredClone(scenario);
  next.links ??= [];
  next.producers ??= [];
  next.events ??= [];
  mutate(next);
  setScenario(next);
}

async function loadPreset(name) {
  const response = await fetch(`presets/${encodeURIComponent(name)}.json`);
  if (!response.ok) throw new Error(`preset ${name} not found`);
  $("#preset").value = name;
  setScenario(await response.json());
  status(`Loaded preset: ${scenario.name}`);
}

function wireJson() {
  $("#apply-json").addEventListener("click", () => {
    let parsed;
    try {
      parsed = JSON.parse($("#json").value);
    } catch (e) {
      return showError(`Invalid JSON: ${e.message}`);
    }
    if (typeof parsed !== "object" || parsed === null || !Array.isArray(parsed.clusters)) {
      return showError('Invalid scenario: it must be an object with a "clusters" array.');
    }
    setScenario(parsed, { fromJsonEditor: true });
    if (report) status("Applied the JSON.");
  });
  $("#export").addEventListener("click", () => {
    const blob = new Blob([JSON.stringify(scenario, null, 2)], { type: "application/json" });
    const name = `${(scenario.name || "scenario").replace(/[^\w.-]+/g, "-")}.json`;
    const a = h("a", { href: URL.createObjectURL(blob), download: name });
    a.click();
    URL.revokeObjectURL(a.href);
  });
  $("#import").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    $("#json").value = await file.text();
    $("#apply-json").click();
    e.target.value = "";
  });
  $("#share").addEventListener("click", async () => {
    writeUrl(scenario);
    try {
      await navigator.clipboard.writeText(location.href);
      status("Link copied: it carries the whole scenario.");
    } catch {
      status("This page's address carries the whole scenario: copy it from the address bar.");
    }
  });
}

async function main() {
  await init();
  $("#fversion").textContent = `v${fVersion()}`;
  const presets = await (await fetch("presets/index.json")).json();
  const titles = await Promise.all(presets.map(async (p) => (await (await fetch(`presets/${p}.json`)).json()).name));
  $("#preset").replaceChildren(
    h("option", { value: "", disabled: true }, "choose a preset…"),
    ...presets.map((p, i) => h("option", { value: p }, titles[i])),
  );
  $("#preset").addEventListener("change", (e) => loadPreset(e.target.value).catch((err) => showError(err.message)));
  renderEditor = createEditor({ scenario: () => scenario, edit });
  wireJson();
  $("#decode-pid").addEventListener("submit", decodePidForm);
  $("#decode-record").addEventListener("submit", decodeRecordForm);
  const fromUrl = readUrl();
  if (fromUrl.scenario) {
    $("#preset").value = "";
    setScenario(fromUrl.scenario);
    status("Loaded the scenario from the link.");
  } else {
    await loadPreset(presets.includes(fromUrl.preset) ? fromUrl.preset : presets[0]);
    if (fromUrl.error) showError(fromUrl.error);
  }
  document.body.dataset.ready = "true";
}

main().catch((e) => {
  showError(`The playground could not start: ${e.message || e}. Build it with scripts/serve.sh.`);
});
