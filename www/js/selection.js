// What the drawing's selection shows: a producer's PID at every hop, or what
// a cluster's partition's producer state holds, under the chosen strategy
// at the chosen time.
import { h } from "./dom.js";
import { pidChip } from "./results.js";
import { strategyLabel } from "./strategies.js";

function producerPanel(report, scenario, id, strategy) {
  const spec = (scenario.producers || []).find((p) => p.id === id);
  const path = report?.paths.find((p) => p.producer === id);
  const head = h(
    "h3",
    {},
    `Producer ${id}`,
    spec ? h("span", { class: "muted" }, ` of ${spec.cluster}, PID ${spec.pid}`) : null,
    h("span", { class: "muted" }, ` · under ${strategyLabel(strategy)}`),
  );
  if (!path || !path.hops.length) {
    return [head, h("p", { class: "muted" }, "It has not written yet at this point of the timeline.")];
  }
  const hops = path.hops.map((hop) =>
    h(
      "li",
      { "data-testid": "hop", "data-cluster": hop.cluster },
      h("b", {}, hop.cluster),
      h(
        "span",
        { class: "muted" },
        hop.distance === 0 ? " (local) " : ` (${hop.distance} hop${hop.distance > 1 ? "s" : ""}) `,
      ),
      pidChip(hop.pid[strategy]),
    ),
  );
  return [head, h("ol", { class: "hops" }, ...hops)];
}

function clusterPanel(report, id, strategy) {
  const part = report?.partitions.find((p) => p.cluster === id);
  const head = h(
    "h3",
    {},
    `Partition at ${id}`,
    h("span", { class: "muted" }, ` · its producer state under ${strategyLabel(strategy)}`),
  );
  const entries = part ? part.producerState[strategy] : [];
  if (!entries.length) return [head, h("p", { class: "muted" }, "Its producer state holds no entry at this point.")];
  const rows = entries.map((e) =>
    h(
      "tr",
      { class: e.producers.length > 1 ? "shared" : "", "data-testid": "state-row" },
      h("td", { class: "pid" }, pidChip(e.pid)),
      h(
        "td",
        {},
        e.producers.length > 1
          ? h("span", { class: "badge" }, `shared by ${e.producers.join(", ")}`)
          : e.producers.join(", "),
      ),
      h("td", {}, e.producer),
      h("td", { class: "num" }, e.epoch),
      h("td", { class: "num" }, e.lastSequence),
      h("td", {}, e.openTransaction ?? "–"),
    ),
  );
  return [
    head,
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "state" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["PID", "true producers", "last batch by", "epoch", "last sequence", "open transaction"].map((t) =>
              h("th", {}, t),
            ),
          ),
        ),
        h("tbody", {}, ...rows),
      ),
    ),
  ];
}

/** The panel's content for `selection` (null: a hint). */
export function selectionPanel(selection, report, scenario, strategy) {
  if (selection?.producer) return producerPanel(report, scenario, selection.producer, strategy);
  if (selection?.cluster) return clusterPanel(report, selection.cluster, strategy);
  return [
    h(
      "p",
      { class: "muted hint" },
      "Click (or Tab to and press Enter on) a producer to follow its PID hop by hop, or a cluster's name to see what its partition's producer state holds. Esc clears.",
    ),
  ];
}
