// The mirrorpid playground. All logic runs in the WASM package (../src via
// wasm-pack --target web): this file only edits a scenario, calls
// simulate(), and draws what comes back.
import init, { simulate, decodePid, decodeRecord, fVersion } from "./pkg/mirrorpid.js";

const $ = (sel) => document.querySelector(sel);
const STRATEGIES = [
  ["verbatim", "verbatim"],
  ["kip", "-(pid+2)"],
  ["mirrorpid", "mirrorpid"],
];
const KINDS = [
  ["sharedPids", "PIDs shared by different producers"],
  ["wrongSequenceAccepted", "wrong sequence accepted"],
  ["lowerEpochAccepted", "lower epoch accepted"],
  ["foreignMarker", "COMMIT/ABORT closing another producer's transaction"],
  ["psmBypass", "batches bypassing producer state (negative PID)"],
];

let presets = [];
let scenario = null;
let report = null;

// ---------- small DOM helpers ----------
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
const svgNs = "http://www.w3.org/2000/svg";
function s(tag, attrs = {}, text) {
  const node = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function showError(message) {
  const box = $("#error");
  box.textContent = message;
  box.hidden = false;
}
function clearError() {
  $("#error").hidden = true;
  $("#error").textContent = "";
}
function status(message) {
  $("#status").textContent = message;
}

// ---------- URL <-> scenario ----------
function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function fromBase64Url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "===".slice((b64.length + 3) % 4));
  return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}
function writeUrl() {
  const url = `${location.pathname}#s=${toBase64Url(JSON.stringify(scenario))}`;
  history.replaceState(null, "", url);
}
function readUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has("s")) {
    try {
      return { scenario: JSON.parse(fromBase64Url(params.get("s"))) };
    } catch (e) {
      return { error: `The shared link's scenario could not be read (${e.message}); showing a preset instead.` };
    }
  }
  if (params.has("preset")) return { preset: params.get("preset") };
  return {};
}

// ---------- scenario state ----------
function setScenario(next, { fromJsonEditor = false } = {}) {
  scenario = next;
  run();
  render({ keepJson: fromJsonEditor });
  writeUrl();
}
function run() {
  try {
    report = simulate(scenario);
    clearError();
  } catch (e) {
    report = null;
    showError(String(e.message || e));
  }
}
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

// ---------- rendering ----------
function render({ keepJson = false } = {}) {
  $("#description").textContent = scenario.description || "";
  drawTopology();
  renderEditor();
  if (!keepJson) $("#json").value = JSON.stringify(scenario, null, 2);
  renderResults();
}

function clusterIds() {
  return (scenario.clusters || []).map((c) => c.id);
}

function drawTopology() {
  const svg = $("#topology");
  svg.replaceChildren();
  const clusters = scenario.clusters || [];
  const links = (scenario.links || []).filter(
    (l) => clusters.some((c) => c.id === l.from) && clusters.some((c) => c.id === l.to),
  );
  // Column = longest mirror path from a cluster with no incoming link.
  const depth = new Map(clusters.map((c) => [c.id, 0]));
  for (let i = 0; i < clusters.length; i++) {
    for (const l of links) depth.set(l.to, Math.max(depth.get(l.to), depth.get(l.from) + 1));
  }
  const columns = [];
  for (const c of clusters) (columns[Math.min(depth.get(c.id), clusters.length)] ??= []).push(c);
  const producersOf = (id) => (scenario.producers || []).filter((p) => p.cluster === id);
  const W = 170, GAP_X = 70, GAP_Y = 26, HEAD = 30, LINE = 17;
  const boxHeight = (c) => HEAD + Math.max(1, producersOf(c.id).length) * LINE + 8;
  const pos = new Map();
  let width = 0, height = 0;
  columns.forEach((col, ci) => {
    let y = 10;
    for (const c of col || []) {
      const x = 10 + ci * (W + GAP_X);
      pos.set(c.id, { x, y, h: boxHeight(c) });
      width = Math.max(width, x + W + 10);
      height = Math.max(height, y + boxHeight(c) + 10);
      y += boxHeight(c) + GAP_Y;
    }
  });
  // Natural size (readable text); the wrapper scrolls sideways on a phone.
  svg.setAttribute("viewBox", `0 0 ${Math.max(width, 200)} ${Math.max(height, 60)}`);
  svg.setAttribute("width", Math.max(width, 200));
  svg.setAttribute("height", Math.max(height, 60));
  const defs = s("defs");
  const marker = s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  marker.append(s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
  defs.append(marker);
  svg.append(defs);
  for (const l of links) {
    const a = pos.get(l.from), b = pos.get(l.to);
    const x1 = a.x + W, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + b.h / 2;
    let d;
    if (x2 > x1) {
      const mx = (x1 + x2) / 2;
      d = `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2 - 2} ${y2}`;
    } else {
      d = `M ${a.x + W / 2} ${a.y + a.h} C ${a.x + W / 2} ${a.y + a.h + 30}, ${b.x + W / 2} ${b.y - 30}, ${b.x + W / 2} ${b.y - 2}`;
    }
    svg.append(s("path", { d, class: "link", "marker-end": "url(#arrow)" }));
  }
  const destinations = new Set(links.map((l) => l.to));
  for (const c of clusters) {
    const p = pos.get(c.id);
    const g = s("g", { class: `cluster${c.writable === false ? " readonly" : ""}${destinations.has(c.id) ? " destination" : ""}`, "data-cluster": c.id });
    g.append(s("rect", { x: p.x, y: p.y, width: W, height: p.h, rx: 8 }));
    g.append(s("text", { x: p.x + 10, y: p.y + 20, class: "cluster-name" }, c.id + (c.writable === false ? " (read-only)" : "")));
    const prods = producersOf(c.id);
    if (!prods.length) g.append(s("text", { x: p.x + 10, y: p.y + HEAD + 12, class: "producer none" }, "no local producers"));
    prods.forEach((pr, i) => {
      g.append(s("text", { x: p.x + 10, y: p.y + HEAD + 12 + i * LINE, class: "producer" }, `${pr.id} · PID ${pr.pid}${pr.epoch ? ` · epoch ${pr.epoch}` : ""}`));
    });
    svg.append(g);
  }
}

function removeButton(label, onclick) {
  return h("button", { class: "remove", "aria-label": `remove ${label}`, title: `remove ${label}`, onclick }, "✕");
}

function describeEvent(e) {
  switch (e.type) {
    case "produce": return `${e.producer} writes ${e.count ?? 1}${e.transactional ? " transactional" : ""} batch(es)`;
    case "commit": return `${e.producer} commits`;
    case "abort": return `${e.producer} aborts`;
    case "failover": return `failover: ${e.cluster} becomes writable`;
    case "addLink": return `add link ${e.from} → ${e.to}`;
    case "removeLink": return `remove link ${e.from} → ${e.to}`;
    case "election": return `leader election at ${e.cluster}${e.snapshot ? " (snapshot + replay)" : " (replay)"}`;
    case "advance": return `${e.ms} ms pass`;
    case "expire": return `expire after ${e.advanceMs ?? 0} ms`;
    default: return JSON.stringify(e);
  }
}

function renderEditor() {
  const ids = clusterIds();
  $("#clusters").replaceChildren(...(scenario.clusters || []).map((c) =>
    h("li", {}, h("span", {}, c.id, c.writable === false ? h("em", {}, " read-only") : null),
      removeButton(`cluster ${c.id}`, () => edit((n) => {
        n.clusters = n.clusters.filter((x) => x.id !== c.id);
        n.links = n.links.filter((l) => l.from !== c.id && l.to !== c.id);
        const gone = new Set(n.producers.filter((p) => p.cluster === c.id).map((p) => p.id));
        n.producers = n.producers.filter((p) => p.cluster !== c.id);
        n.events = n.events.filter((e) => !gone.has(e.producer) && e.cluster !== c.id && e.from !== c.id && e.to !== c.id);
      })))));
  $("#links").replaceChildren(...(scenario.links || []).map((l, i) =>
    h("li", {}, h("span", {}, `${l.from} → ${l.to}`),
      removeButton(`link ${l.from} to ${l.to}`, () => edit((n) => n.links.splice(i, 1))))));
  $("#producers").replaceChildren(...(scenario.producers || []).map((p) =>
    h("li", {}, h("span", {}, h("b", {}, p.id), ` on ${p.cluster}, PID ${p.pid}`),
      removeButton(`producer ${p.id}`, () => edit((n) => {
        n.producers = n.producers.filter((x) => x.id !== p.id);
        n.events = n.events.filter((e) => e.producer !== p.id);
      })))));
  $("#events").replaceChildren(...(scenario.events || []).map((e, i) =>
    h("li", {}, h("span", {}, describeEvent(e)),
      removeButton(`event ${i + 1}`, () => edit((n) => n.events.splice(i, 1))))));
  const options = (sel, values) => {
    const keep = sel.value;
    sel.replaceChildren(...values.map((v) => h("option", { value: v }, v)));
    if (values.includes(keep)) sel.value = keep;
  };
  const linkForm = $("#add-link");
  options(linkForm.from, ids);
  options(linkForm.to, ids);
  if (linkForm.to.value === linkForm.from.value && ids.length > 1) linkForm.to.value = ids.find((x) => x !== linkForm.from.value);
  options($("#add-producer").cluster, ids);
  updateEventForm();
}

function updateEventForm() {
  const f = $("#add-event");
  const type = f.type.value;
  const producers = (scenario.producers || []).map((p) => p.id);
  const ids = clusterIds();
  const byProducer = ["produce", "produceTx", "commit", "abort"].includes(type);
  const values = byProducer ? producers : type === "expire" ? [] : ids;
  const keep = f.target.value;
  f.target.replaceChildren(...values.map((v) => h("option", { value: v }, v)));
  if (values.includes(keep)) f.target.value = keep;
  f.target.hidden = type === "expire";
  const keepTo = f.to.value;
  f.to.replaceChildren(...ids.map((v) => h("option", { value: v }, v)));
  if (ids.includes(keepTo)) f.to.value = keepTo;
  f.to.hidden = !(type === "addLink" || type === "removeLink");
  f.count.hidden = !(type === "produce" || type === "produceTx" || type === "expire");
  f.count.placeholder = type === "expire" ? "ms" : "batches";
  if (type === "expire" && f.count.value === "1") f.count.value = "86400000";
  if (type !== "expire" && f.count.value === "86400000") f.count.value = "1";
}

function pidCell(pid) {
  if (pid === undefined) return h("td", { class: "na" }, "–");
  const n = BigInt(pid);
  const cell = h("td", { class: n < 0n ? "pid negative" : "pid" });
  cell.append(h("span", { class: "dec" }, pid));
  if (n >= 1n << 62n) {
    const info = decodePid(n);
    cell.append(h("span", { class: "hex" }, "0x" + n.toString(16)),
      h("span", { class: "split" }, `region 0x${info.region.toString(16).padStart(6, "0")} · pid40 ${info.pid40}`));
  } else if (n < 0n) {
    cell.append(h("span", { class: "split" }, "negative: producer state ignores it"));
  }
  return cell;
}

function corruptionTable(c, testid) {
  const table = h("table", { class: "summary", "data-testid": testid },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "silent corruption"),
      ...STRATEGIES.map(([k, label]) => h("th", { scope: "col", class: `strategy ${k}` }, label)))));
  const body = h("tbody");
  for (const [kind, label] of KINDS) {
    body.append(h("tr", {}, h("th", { scope: "row" }, label),
      ...STRATEGIES.map(([k]) => {
        const v = c[k][kind];
        return h("td", { class: v ? "bad" : "good", "data-testid": `${testid}-${k}-${kind}` }, v);
      })));
  }
  const total = (k) => KINDS.reduce((sum, [kind]) => sum + c[k][kind], 0);
  body.append(h("tr", { class: "total" }, h("th", { scope: "row" }, "total"),
    ...STRATEGIES.map(([k]) => h("td", { class: total(k) ? "bad" : "good", "data-testid": `${testid}-${k}-total` }, total(k)))));
  table.append(body);
  return table;
}

function renderResults() {
  const summary = $("#summary");
  if (!report) {
    summary.replaceChildren(h("p", { class: "error-inline", "data-testid": "results-error" },
      "This scenario cannot run: ", h("b", {}, $("#error").textContent), ". Fix it in the editor (or pick a preset) to see results."));
    $("#paths").replaceChildren();
    $("#partitions").replaceChildren();
    $("#log").replaceChildren();
    return;
  }
  summary.replaceChildren(
    h("p", { class: "muted" }, "Counted over every partition, by a model of Kafka's producer state appending with origin REPLICATION (it accepts all of these without an error)."),
    h("div", { class: "scroll" }, corruptionTable(report.totals, "totals")));

  const paths = h("table", { class: "paths" },
    h("thead", {}, h("tr", {}, h("th", {}, "producer"), h("th", {}, "at cluster"), h("th", {}, "hops"),
      ...STRATEGIES.map(([k, label]) => h("th", { class: `strategy ${k}` }, label)))));
  const body = h("tbody");
  for (const p of report.paths) {
    p.hops.forEach((hop, i) => {
      body.append(h("tr", { class: i === 0 ? "first" : "", "data-producer": p.producer },
        i === 0 ? h("th", { rowspan: p.hops.length, scope: "rowgroup" }, p.producer) : null,
        h("td", {}, hop.cluster), h("td", { class: "num" }, hop.distance === 0 ? "local" : hop.distance),
        ...STRATEGIES.map(([k]) => pidCell(hop.pid[k]))));
    });
    if (!p.hops.length) body.append(h("tr", {}, h("th", {}, p.producer), h("td", { colspan: 5, class: "muted" }, "has not written yet")));
  }
  paths.append(body);
  $("#paths").replaceChildren(paths);

  const cards = report.partitions.filter((p) => p.identities.length || p.sources.length).map((p) => {
    const rows = p.identities.map((id) => h("tr", { class: id.salt > 0 ? "salted" : "", "data-testid": "identity-row" },
      h("td", {}, id.source), h("td", { class: "mono" }, id.pid), h("td", {}, id.producers.join(", ") || "–"),
      h("td", { class: "pid" }, h("span", { class: "dec" }, id.mapped), h("span", { class: "hex" }, id.mappedHex)),
      h("td", { class: "mono" }, "0x" + id.region.toString(16).padStart(6, "0")), h("td", { class: "mono" }, id.pid40),
      h("td", { class: "num" }, id.salt),
      h("td", { class: "wrap" }, id.collidingCluster !== null && id.collidingCluster !== undefined
        ? h("span", { class: "badge" }, `collision with ${id.collidingCluster}`) : "")));
    const records = p.records.map((r, i) => h("li", {},
      h("div", { class: "rec-head" }, `#${i + 1} `, r.valueHex === null ? h("span", { class: "badge tomb" }, "tombstone") : `salt ${r.json.value.salt}`,
        ` · ${r.json.key.sourceClusterId} / PID ${r.json.key.originalPid}`),
      h("div", { class: "hexline" }, h("span", { class: "label" }, "key "), r.keyHex),
      h("div", { class: "hexline" }, h("span", { class: "label" }, "value "), r.valueHex ?? "null"),
      h("pre", {}, JSON.stringify(r.json, null, 2))));
    const totals = STRATEGIES.map(([k, label]) => {
      const t = KINDS.reduce((sum, [kind]) => sum + p.corruption[k][kind], 0);
      return h("span", { class: `chip ${t ? "bad" : "good"}` }, `${label}: ${t}`);
    });
    return h("article", { class: "partition", "data-testid": `partition-${p.cluster}` },
      h("h4", {}, `Partition at ${p.cluster}`, p.sources.length ? h("span", { class: "muted" }, ` ← mirrors ${p.sources.join(", ")}`) : null),
      h("div", { class: "chips" }, ...totals),
      p.identities.length ? h("div", { class: "scroll" }, h("table", { class: "identities" },
        h("thead", {}, h("tr", {}, ...["source", "incoming PID", "producer", "mapped PID", "region", "pid40", "salt", "collision"].map((t) => h("th", {}, t)))),
        h("tbody", {}, ...rows))) : h("p", { class: "muted" }, "No mirrored producer has reached it yet."),
      h("details", { class: "records" }, h("summary", {}, `__mirror_state records (${p.records.length})`), h("ol", {}, ...records)));
  });
  $("#partitions").replaceChildren(...(cards.length ? cards : [h("p", { class: "muted" }, "No mirror links: add one to see mapped PIDs.")]));
  $("#log").replaceChildren(...report.log.map((l) => h("li", {}, l)));
}

// ---------- decoders ----------
function parseHex(text, what) {
  const clean = text.replace(/\s+/g, "").replace(/^0x/i, "");
  if (clean.length % 2 || /[^0-9a-f]/i.test(clean)) throw new Error(`${what}: not hex (odd length or a non-hex digit)`);
  return Uint8Array.from(clean.match(/../g) || [], (b) => parseInt(b, 16));
}

function decodePidForm(event) {
  event.preventDefault();
  const out = $("#pid-out");
  const text = event.target.pid.value.trim();
  try {
    if (!/^-?\d+$|^0x[0-9a-f]+$/i.test(text)) throw new Error("Enter a PID as a decimal integer or 0x-prefixed hex.");
    const info = decodePid(BigInt(text));
    const pid = BigInt(info.pid);
    const rows = [["space", { noProducer: "no producer (pid < 0): passes untouched", local: "local PID of the source cluster: mapped by F", outOfRange: "local PID ≥ 2^40: PidOutOfRange", mirrored: "mapped by an upstream hop (bit 62 set)" }[info.space]],
      ["decimal", info.pid], ["hex", pid < 0n ? "-0x" + (-pid).toString(16) : "0x" + pid.toString(16).padStart(16, "0")]];
    if (info.region !== null) rows.push(["region", "0x" + info.region.toString(16).padStart(6, "0") + ` (${info.region})`]);
    if (info.pid40 !== null) rows.push(["pid40", info.pid40]);
    out.replaceChildren(h("dl", {}, ...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
    out.classList.remove("bad");
  } catch (e) {
    out.textContent = String(e.message || e);
    out.classList.add("bad");
  }
}

function decodeRecordForm(event) {
  event.preventDefault();
  const out = $("#record-out");
  try {
    const key = parseHex(event.target.key.value, "key");
    const valueText = event.target.value.value.trim();
    const value = valueText ? parseHex(valueText, "value") : null;
    out.textContent = JSON.stringify(decodeRecord(key, value), null, 2);
    out.classList.remove("bad");
  } catch (e) {
    out.textContent = String(e.message || e);
    out.classList.add("bad");
  }
}

// ---------- wiring ----------
function wire() {
  $("#preset").addEventListener("change", (e) => loadPreset(e.target.value).catch((err) => showError(err.message)));
  $("#add-cluster").addEventListener("submit", (e) => {
    e.preventDefault();
    const id = e.target.id.value.trim();
    if (!id) return showError("A cluster needs an ID.");
    if (clusterIds().includes(id)) return showError(`Cluster ${id} already exists.`);
    edit((n) => n.clusters.push(e.target.readonly.checked ? { id, writable: false } : { id }));
    e.target.reset();
  });
  $("#add-link").addEventListener("submit", (e) => {
    e.preventDefault();
    const from = e.target.from.value, to = e.target.to.value;
    if (!from || !to) return showError("Add two clusters first.");
    if (from === to) return showError("A cluster cannot mirror itself: pick two different clusters.");
    if ((scenario.links || []).some((l) => l.from === from && l.to === to)) return showError(`${from} → ${to} is already there.`);
    edit((n) => n.links.push({ from, to }));
  });
  $("#add-producer").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = e.target;
    const id = f.id.value.trim(), pid = f.pid.value.trim(), epoch = f.epoch.value.trim() || "0";
    if (!id) return showError("A producer needs a name.");
    if ((scenario.producers || []).some((p) => p.id === id)) return showError(`Producer ${id} already exists.`);
    if (!/^-?\d+$/.test(pid)) return showError(`PID "${pid}" is not an integer (use -1 for a non-idempotent producer).`);
    if (!/^\d+$/.test(epoch) || Number(epoch) > 32767) return showError(`Epoch "${epoch}" must be 0 to 32767.`);
    edit((n) => n.producers.push({ id, cluster: f.cluster.value, pid, epoch: Number(epoch) }));
    f.id.value = "";
    f.pid.value = "";
  });
  $("#add-event").addEventListener("change", (e) => { if (e.target.name === "type") updateEventForm(); });
  $("#add-event").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = e.target;
    const type = f.type.value, target = f.target.value, count = f.count.value.trim();
    if (type !== "expire" && !target) return showError("Pick a producer or cluster for the event (add one first).");
    if ((type === "produce" || type === "produceTx" || type === "expire") && !/^\d+$/.test(count)) return showError(`"${count}" is not a whole number.`);
    const ev = {
      produce: { type: "produce", producer: target, count: Number(count) },
      produceTx: { type: "produce", producer: target, count: Number(count), transactional: true },
      commit: { type: "commit", producer: target },
      abort: { type: "abort", producer: target },
      failover: { type: "failover", cluster: target },
      addLink: { type: "addLink", from: target, to: f.to.value },
      removeLink: { type: "removeLink", from: target, to: f.to.value },
      election: { type: "election", cluster: target },
      expire: { type: "expire", advanceMs: count },
    }[type];
    edit((n) => n.events.push(ev));
  });
  $("#apply-json").addEventListener("click", () => {
    let parsed;
    try {
      parsed = JSON.parse($("#json").value);
    } catch (e) {
      return showError(`Invalid JSON: ${e.message}`);
    }
    if (typeof parsed !== "object" || parsed === null || !Array.isArray(parsed.clusters)) {
      return showError("Invalid scenario: it must be an object with a \"clusters\" array.");
    }
    setScenario(parsed, { fromJsonEditor: true });
    if (report) status("Applied the JSON.");
  });
  $("#export").addEventListener("click", () => {
    const blob = new Blob([JSON.stringify(scenario, null, 2)], { type: "application/json" });
    const a = h("a", { href: URL.createObjectURL(blob), download: `${(scenario.name || "scenario").replace(/[^\w.-]+/g, "-")}.json` });
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
    writeUrl();
    try {
      await navigator.clipboard.writeText(location.href);
      status("Link copied: it carries the whole scenario.");
    } catch {
      status("This page's address carries the whole scenario: copy it from the address bar.");
    }
  });
  $("#decode-pid").addEventListener("submit", decodePidForm);
  $("#decode-record").addEventListener("submit", decodeRecordForm);
}

async function main() {
  await init();
  $("#fversion").textContent = `v${fVersion()}`;
  presets = await (await fetch("presets/index.json")).json();
  const titles = await Promise.all(presets.map(async (p) => (await (await fetch(`presets/${p}.json`)).json()).name));
  $("#preset").replaceChildren(h("option", { value: "", disabled: true }, "choose a preset…"),
    ...presets.map((p, i) => h("option", { value: p }, titles[i])));
  wire();
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
