// The mirrorpid playground. All logic runs in the WASM package (../src via
// wasm-pack --target web): the page edits a scenario, calls simulate(), and
// draws what comes back. This file holds the scenario and wires the parts:
// js/dom.js (helpers), js/url.js (the shareable address), js/events.js (the
// event kinds), js/editor.js, js/topology.js (the drawing), js/timeline.js,
// js/selection.js, js/results.js, js/decoders.js, js/planner.js.
import init, { simulate, simulatorLimits, fVersion } from "mirrorpid";
import { $, h, clearError, markScrollers, showError, status } from "./js/dom.js";
import { decodePidForm, decodeRecordForm } from "./js/decoders.js";
import { createEditor } from "./js/editor.js";
import { planForm } from "./js/planner.js";
import { renderResults } from "./js/results.js";
import { selectionPanel } from "./js/selection.js";
import { STRATEGIES } from "./js/strategies.js";
import { renderTimeline, wireTimeline } from "./js/timeline.js";
import { drawTopology } from "./js/topology.js";
import { readUrl, writeUrl } from "./js/url.js";

let scenario = null;
/** The complete run (null: the scenario cannot run). */
let full = null;
/** The run up to the chosen event: what the page shows. */
let report = null;
/** The chosen event (0: before the first; the last by default). */
let at = 0;
let strategy = "mirrorpid";
/** `{producer}`, `{cluster}` or null. */
let selection = null;
let renderEditor = () => {};
/** The frame at which the scrolling tables are marked. */
let marking = 0;
/** Whether the last selection should be scrolled into sight. */
let revealSelection = false;

/** Runs the scenario, or takes `ran`, its run already made. */
function run(ran) {
  try {
    full = ran ?? simulate(scenario);
    clearError();
  } catch (e) {
    full = null;
    showError(String(e.message || e));
  }
  at = full ? full.timeline.length : 0;
  report = full;
}

/** Moves the timeline to event `k` and shows the state after it. */
function step(k) {
  if (!full) return;
  k = Math.max(0, Math.min(full.timeline.length, k));
  at = k;
  // The state after event k is the run of the first k events.
  report = k === full.timeline.length ? full : simulate({ ...scenario, events: scenario.events.slice(0, k) });
  renderView();
}

/** The drawing, the counts, the timeline, the selection and the tables: the state at `at`. */
function renderView() {
  if (drawable()) {
    const byKey = new Map((report?.links ?? []).map((l) => [`${l.from}->${l.to}`, l]));
    const links = (full?.links ?? scenario.links ?? []).map(
      (l) => byKey.get(`${l.from}->${l.to}`) ?? { ...l, crossings: [] },
    );
    // Whether link `l` mirrors at the chosen time (every link, with no run yet).
    const active = (l) => !report || !!byKey.get(`${l.from}->${l.to}`)?.active;
    const drawn = drawTopology($("#topology"), {
      scenario,
      links,
      extent: new Map((full?.links ?? []).map((l) => [`${l.from}->${l.to}`, l])),
      active,
      strategy,
      selection,
      onSelect: select,
      width: $("#svg-wrap").clientWidth - 8,
    });
    // Fitted small enough to strain the eyes: offer the natural size, scrolled.
    const zoomed = $("#svg-wrap").classList.contains("zoomed");
    $("#zoom").hidden = drawn.scale >= 0.7 && !zoomed;
  } else {
    $("#topology").replaceChildren();
  }
  $("#now-counts").replaceChildren(
    ...(report
      ? [
          h(
            "span",
            { class: "muted" },
            at < (full?.timeline.length ?? 0)
              ? `silent corruptions after event ${at}, per strategy:`
              : "silent corruptions, per strategy:",
          ),
          ...STRATEGIES.map(([k, label]) => {
            const n = report.totals[k].total;
            return h(
              "span",
              { class: `chip ${n ? "bad" : "good"}${k === strategy ? " chosen" : ""}`, "data-testid": `now-${k}` },
              `${label} ${n}`,
            );
          }),
        ]
      : []),
  );
  renderTimeline(full, at, strategy, step);
  $("#selection").replaceChildren(...selectionPanel(selection, report, scenario, strategy));
  renderResults(report);
  // Measured at the next frame, when the browser lays the page out anyway:
  // measuring now would force a layout of everything (a pasted 3 MB JSON too).
  cancelAnimationFrame(marking);
  marking = requestAnimationFrame(() => markScrollers());
}

function select(next) {
  selection = next;
  revealSelection = !!next;
  const focused = document.activeElement?.closest?.("[data-producer], [data-cluster]");
  const key = focused && {
    producer: focused.dataset.producer,
    cluster: focused.dataset.cluster,
    pid: focused.dataset.pid,
  };
  renderView();
  // On a phone the panel is below a tall drawing: bring it into sight.
  const panel = $("#selection");
  const box = panel.getBoundingClientRect();
  if (revealSelection && (box.top > innerHeight || box.bottom < 0)) {
    panel.scrollIntoView({ block: "nearest" });
  }
  // Keep the keyboard where it was: the redrawn element of the same producer or cluster.
  if (key) {
    const selector = key.producer
      ? `[data-producer="${CSS.escape(key.producer)}"]${key.pid ? `[data-pid="${CSS.escape(key.pid)}"]` : ".producer-line"}`
      : `[data-cluster="${CSS.escape(key.cluster)}"] .cluster-head`;
    // Without scrolling: the element is where it was, and the panel may just have come into sight.
    document.querySelector(`#topology ${selector}`)?.focus({ preventScroll: true });
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
  // Too large to run is too large to draw: the error says which limit.
  if (drawable()) renderEditor();
  if (!keepJson && drawable()) $("#json").value = JSON.stringify(scenario, null, 2);
  const names = new Set([
    ...(scenario.producers || []).map((p) => p.id),
    ...(scenario.clusters || []).map((c) => c.id),
  ]);
  if (selection && !names.has(selection.producer ?? selection.cluster)) selection = null;
  renderView();
}

function setScenario(next, { fromJsonEditor = false, ran } = {}) {
  scenario = next;
  run(ran);
  render({ keepJson: fromJsonEditor });
  // A scenario too large to run is too large to share: writing megabytes
  // into the address costs more than the simulator's refusal.
  if (drawable()) writeUrl(scenario);
}

/**
 * Changes a copy of the scenario with `mutate`, then runs and shows it. An
 * edit that would make a running scenario fail is refused with the core's
 * error, so the form never leaves the page in a state it cannot draw.
 */
function edit(mutate) {
  const next = structuredClone(scenario);
  next.links ??= [];
  next.producers ??= [];
  next.events ??= [];
  mutate(next);
  let ran;
  if (full) {
    try {
      ran = simulate(next);
    } catch (e) {
      return showError(`Not changed: ${e.message || e}`);
    }
  }
  setScenario(next, { ran });
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
  $("#import-button").addEventListener("click", () => $("#import").click());
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
  $("#decode-pid").addEventListener("submit", (e) => decodePidForm(e, () => scenario));
  $("#decode-record").addEventListener("submit", decodeRecordForm);
  $("#plan").addEventListener("submit", planForm);
  $("#plan-from-scenario").addEventListener("click", () => {
    $("#plan-ids").value = (scenario.clusters || []).map((c) => c.id).join("\n");
    planForm();
  });
  for (const radio of document.querySelectorAll("input[name=strategy]")) {
    radio.addEventListener("change", (e) => {
      strategy = e.target.value;
      renderView();
    });
  }
  wireTimeline(step, () => at);
  $("#zoom").addEventListener("click", () => {
    const zoomed = $("#svg-wrap").classList.toggle("zoomed");
    $("#zoom").setAttribute("aria-pressed", String(zoomed));
    $("#zoom").textContent = zoomed ? "Fit to the page" : "Zoom to read";
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && selection) select(null);
  });
  $("#topology").addEventListener("click", () => selection && select(null));
  let resizing = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(() => scenario && renderView());
  });
  const fromUrl = readUrl();
  if (fromUrl.scenario) {
    $("#preset").value = "";
    setScenario(fromUrl.scenario);
    status("Loaded the scenario from the link.");
  } else {
    const known = presets.includes(fromUrl.preset);
    await loadPreset(known ? fromUrl.preset : presets[0]);
    if (fromUrl.error) showError(fromUrl.error);
    else if (fromUrl.preset !== undefined && !known) {
      showError(`There is no preset "${fromUrl.preset}" (the presets: ${presets.join(", ")}); showing ${presets[0]}.`);
    }
  }
  document.body.dataset.ready = "true";
}

main().catch((e) => {
  showError(`The playground could not start: ${e.message || e}. Build it with scripts/serve.sh.`);
});
