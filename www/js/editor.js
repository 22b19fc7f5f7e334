// The scenario editor: lists of clusters, links, producers and events with
// remove buttons, and the forms that add them. It changes the scenario only
// through `edit`, which re-runs the simulation.
import { $, h, setOptions, showError } from "./dom.js";
import { EVENT_KINDS, describeEvent, kind } from "./events.js";

function removeButton(label, onclick) {
  return h("button", { class: "remove", "aria-label": `remove ${label}`, title: `remove ${label}`, onclick }, "✕");
}

const clusterIds = (scenario) => (scenario.clusters || []).map((c) => c.id);

/** Removes a cluster with its links, its producers and every event naming them. */
function removeCluster(n, id) {
  n.clusters = n.clusters.filter((x) => x.id !== id);
  n.links = n.links.filter((l) => l.from !== id && l.to !== id);
  const gone = new Set(n.producers.filter((p) => p.cluster === id).map((p) => p.id));
  n.producers = n.producers.filter((p) => p.cluster !== id);
  n.events = n.events.filter((e) => !gone.has(e.producer) && e.cluster !== id && e.from !== id && e.to !== id);
}

/**
 * Wires the editor's forms once; returns `render()`, which redraws the
 * lists and the forms' choices from the current scenario.
 */
export function createEditor({ scenario: current, edit }) {
  const eventForm = $("#add-event");
  eventForm.type.replaceChildren(...EVENT_KINDS.map((k) => h("option", { value: k.id }, k.label)));

  function updateEventForm() {
    const scenario = current();
    const k = kind(eventForm.type.value);
    const choices = { producer: (scenario.producers || []).map((p) => p.id), cluster: clusterIds(scenario) };
    setOptions(eventForm.target, choices[k.target] || []);
    eventForm.target.hidden = !k.target;
    setOptions(eventForm.to, clusterIds(scenario));
    eventForm.to.hidden = !k.to;
    eventForm.count.hidden = !k.amount;
    if (k.amount) {
      const [unit, initial] = k.amount;
      if (eventForm.count.placeholder !== unit) eventForm.count.value = initial;
      eventForm.count.placeholder = unit;
    }
  }

  function render() {
    const scenario = current();
    const ids = clusterIds(scenario);
    $("#clusters").replaceChildren(
      ...(scenario.clusters || []).map((c) =>
        h(
          "li",
          {},
          h("span", {}, c.id, c.writable === false ? h("em", {}, " read-only") : null),
          removeButton(`cluster ${c.id}`, () => edit((n) => removeCluster(n, c.id))),
        ),
      ),
    );
    $("#links").replaceChildren(
      ...(scenario.links || []).map((l, i) =>
        h(
          "li",
          {},
          h("span", {}, `${l.from} → ${l.to}`),
          removeButton(`link ${l.from} to ${l.to}`, () => edit((n) => n.links.splice(i, 1))),
        ),
      ),
    );
    $("#producers").replaceChildren(
      ...(scenario.producers || []).map((p) =>
        h(
          "li",
          {},
          h("span", {}, h("b", {}, p.id), ` on ${p.cluster}, PID ${p.pid}`),
          removeButton(`producer ${p.id}`, () =>
            edit((n) => {
              n.producers = n.producers.filter((x) => x.id !== p.id);
              n.events = n.events.filter((e) => e.producer !== p.id);
            }),
          ),
        ),
      ),
    );
    $("#events").replaceChildren(
      ...(scenario.events || []).map((e, i) =>
        h(
          "li",
          {},
          h("span", {}, describeEvent(e)),
          removeButton(`event ${i + 1}`, () => edit((n) => n.events.splice(i, 1))),
        ),
      ),
    );
    const linkForm = $("#add-link");
    setOptions(linkForm.from, ids);
    setOptions(linkForm.to, ids);
    if (linkForm.to.value === linkForm.from.value && ids.length > 1) {
      linkForm.to.value = ids.find((x) => x !== linkForm.from.value);
    }
    setOptions($("#add-producer").cluster, ids);
    updateEventForm();
  }

  $("#add-cluster").addEventListener("submit", (e) => {
    e.preventDefault();
    const id = e.target.id.value.trim();
    if (!id) return showError("A cluster needs an ID.");
    if (clusterIds(current()).includes(id)) return showError(`Cluster ${id} already exists.`);
    edit((n) => n.clusters.push(e.target.readonly.checked ? { id, writable: false } : { id }));
    e.target.reset();
  });
  $("#add-link").addEventListener("submit", (e) => {
    e.preventDefault();
    const from = e.target.from.value;
    const to = e.target.to.value;
    if (!from || !to) return showError("Add two clusters first.");
    if (from === to) return showError("A cluster cannot mirror itself: pick two different clusters.");
    if ((current().links || []).some((l) => l.from === from && l.to === to)) {
      return showError(`${from} → ${to} is already there.`);
    }
    edit((n) => n.links.push({ from, to }));
  });
  $("#add-producer").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = e.target;
    const id = f.id.value.trim();
    const pid = f.pid.value.trim();
    const epoch = f.epoch.value.trim() || "0";
    if (!id) return showError("A producer needs a name.");
    if ((current().producers || []).some((p) => p.id === id)) return showError(`Producer ${id} already exists.`);
    if (!/^-?\d+$/.test(pid))
      return showError(`PID "${pid}" is not an integer (use -1 for a non-idempotent producer).`);
    if (!/^\d+$/.test(epoch) || Number(epoch) > 32767) return showError(`Epoch "${epoch}" must be 0 to 32767.`);
    edit((n) => n.producers.push({ id, cluster: f.cluster.value, pid, epoch: Number(epoch) }));
    f.id.value = "";
    f.pid.value = "";
  });
  eventForm.addEventListener("change", (e) => {
    if (e.target.name === "type") updateEventForm();
  });
  eventForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const k = kind(eventForm.type.value);
    const target = eventForm.target.value;
    const count = eventForm.count.value.trim();
    if (k.target && !target) return showError(`Pick a ${k.target} for the event (add one first).`);
    if (k.amount && !/^\d+$/.test(count)) return showError(`"${count}" is not a whole number.`);
    edit((n) => n.events.push(k.build(target, eventForm.to.value, count)));
  });
  return render;
}
