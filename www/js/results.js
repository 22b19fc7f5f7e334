// The results: corruption per strategy, every producer's PID hop by hop,
// and each destination's bindings and __mirror_state records. Every number
// comes from the simulator's report; nothing is recomputed here.
import { decodePid } from "mirrorpid";
import { $, h } from "./dom.js";
import { pidStyle } from "./colour.js";
import { STRATEGIES } from "./strategies.js";

const KINDS = [
  ["sharedPids", "PIDs shared by different producers"],
  ["wrongSequenceAccepted", "wrong sequence accepted"],
  ["lowerEpochAccepted", "lower epoch accepted"],
  ["foreignMarker", "COMMIT/ABORT closing another producer's transaction"],
  ["psmBypass", "batches bypassing producer state (negative PID)"],
  ["lostAsDuplicate", "local writes acknowledged and not written (taken for retries)"],
  ["writtenTwice", "copies by a second path written again"],
];

const REFUSALS = [
  ["outOfOrderSequence", "local writes refused: OutOfOrderSequenceException"],
  ["invalidProducerEpoch", "local writes refused: InvalidProducerEpochException"],
  ["invalidTxnState", "refused: InvalidTxnStateException (a mirror stalls)"],
];

/** A PID as a coloured chip (its region's colour when mapped). */
export function pidChip(pid) {
  const style = pidStyle(pid);
  return h(
    "span",
    {
      class: `dec pid-chip ${style.kind}`,
      style: `--pill-bg: ${style.background}; --pill-ink: ${style.ink}; --pill-edge: ${style.edge}`,
    },
    pid,
  );
}

function pidCell(pid) {
  if (pid === undefined) return h("td", { class: "na" }, "–");
  const n = BigInt(pid);
  const cell = h("td", { class: n < 0n ? "pid negative" : "pid" });
  cell.append(pidChip(pid));
  if (n >= 1n << 62n) {
    const info = decodePid(n);
    cell.append(
      h("span", { class: "hex" }, "0x" + n.toString(16)),
      h("span", { class: "split" }, `region 0x${info.region.toString(16).padStart(6, "0")} · pid40 ${info.pid40}`),
    );
  } else if (n < 0n) {
    cell.append(h("span", { class: "split" }, "negative: producer state ignores it"));
  }
  return cell;
}

/**
 * A table of counts per strategy, one row per `[kind, label]` of `kinds` and a
 * total: the silent corruptions (`KINDS`) or the appends Kafka refused
 * (`REFUSALS`, loud, so never in the corruption total).
 */
function countTable(counts, kinds, title, testid) {
  const table = h(
    "table",
    { class: "summary", "data-testid": testid },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, title),
        ...STRATEGIES.map(([k, label]) => h("th", { scope: "col", class: `strategy ${k}` }, label)),
      ),
    ),
  );
  const body = h("tbody");
  for (const [kind, label] of [...kinds, ["total", "total"]]) {
    body.append(
      h(
        "tr",
        { class: kind === "total" ? "total" : "" },
        h("th", { scope: "row" }, label),
        ...STRATEGIES.map(([k]) => {
          const v = counts[k][kind];
          return h("td", { class: v ? "bad" : "good", "data-testid": `${testid}-${k}-${kind}` }, v);
        }),
      ),
    );
  }
  table.append(body);
  return table;
}

/** Shows `report` (or, when it is null, why the scenario cannot run). */
export function renderResults(report) {
  const summary = $("#summary");
  if (!report) {
    summary.replaceChildren(
      h(
        "p",
        { class: "error-inline", "data-testid": "results-error" },
        "This scenario cannot run: ",
        h("b", {}, $("#error").textContent),
        ". Fix it in the editor (or pick a preset) to see results.",
      ),
    );
    $("#paths").replaceChildren();
    $("#partitions").replaceChildren();
    $("#log").replaceChildren();
    return;
  }
  summary.replaceChildren(
    h(
      "p",
      { class: "muted" },
      "Counted over every partition by a model of Kafka 4.4's producer state (mirrored batches appended with ",
      h("a", { href: "#g-origin" }, "origin REPLICATION, local ones with CLIENT"),
      ", as Kafka's own log does in the project's tests): the silent corruptions Kafka accepts without an error,",
    ),
    h("div", { class: "scroll" }, countTable(report.totals, KINDS, "silent corruption", "totals")),
    h(
      "p",
      { class: "muted" },
      "and the appends Kafka refuses, which a producer's application or the mirror sees as an error:",
    ),
    h("div", { class: "scroll" }, countTable(report.refused, REFUSALS, "refused by Kafka (loud)", "refused")),
  );

  const paths = h(
    "table",
    { class: "paths" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, "producer"),
        h("th", {}, "at cluster"),
        h("th", {}, "hops"),
        ...STRATEGIES.map(([k, label]) => h("th", { class: `strategy ${k}` }, label)),
      ),
    ),
  );
  const body = h("tbody");
  for (const p of report.paths) {
    p.hops.forEach((hop, i) => {
      body.append(
        h(
          "tr",
          { class: i === 0 ? "first" : "", "data-producer": p.producer },
          i === 0 ? h("th", { rowspan: p.hops.length, scope: "rowgroup" }, p.producer) : null,
          h("td", {}, hop.cluster),
          h("td", { class: "num" }, hop.distance === 0 ? "local" : hop.distance),
          ...STRATEGIES.map(([k]) => pidCell(hop.pid[k])),
        ),
      );
    });
    if (!p.hops.length)
      body.append(h("tr", {}, h("th", {}, p.producer), h("td", { colspan: 5, class: "muted" }, "has not written yet")));
  }
  paths.append(body);
  $("#paths").replaceChildren(paths);

  const cards = report.partitions
    .filter((p) => p.identities.length || p.sources.length)
    .map((p) => {
      const rows = p.identities.map((id) =>
        h(
          "tr",
          { class: id.salt > 0 ? "salted" : "", "data-testid": "identity-row" },
          h("td", {}, id.source),
          h("td", { class: "mono" }, id.pid),
          h("td", {}, id.producers.join(", ") || "–"),
          h("td", { class: "pid" }, pidChip(id.mapped), h("span", { class: "hex" }, id.mappedHex)),
          h("td", { class: "mono" }, "0x" + id.region.toString(16).padStart(6, "0")),
          h("td", { class: "mono" }, id.pid40),
          h("td", { class: "num" }, id.salt),
          h(
            "td",
            { class: "wrap" },
            id.collidingCluster !== null && id.collidingCluster !== undefined
              ? h("span", { class: "badge" }, `collision with ${id.collidingCluster}`)
              : "",
          ),
        ),
      );
      const records = p.records.map((r, i) =>
        h(
          "li",
          {},
          h(
            "div",
            { class: "rec-head" },
            `#${i + 1} `,
            r.valueHex === null ? h("span", { class: "badge tomb" }, "tombstone") : `salt ${r.json.value.salt}`,
            ` · ${r.json.key.sourceClusterId} / PID ${r.json.key.originalPid}`,
          ),
          h("div", { class: "hexline" }, h("span", { class: "label" }, "key "), r.keyHex),
          h("div", { class: "hexline" }, h("span", { class: "label" }, "value "), r.valueHex ?? "null"),
          h("pre", {}, JSON.stringify(r.json, null, 2)),
        ),
      );
      const totals = STRATEGIES.map(([k, label]) => {
        const t = p.corruption[k].total;
        return h("span", { class: `chip ${t ? "bad" : "good"}` }, `${label}: ${t}`);
      });
      return h(
        "article",
        { class: "partition", "data-testid": `partition-${p.cluster}` },
        h(
          "h4",
          {},
          `Partition at ${p.cluster}`,
          p.sources.length ? h("span", { class: "muted" }, ` ← mirrors ${p.sources.join(", ")}`) : null,
        ),
        h("div", { class: "chips" }, ...totals),
        p.identities.length
          ? h(
              "div",
              { class: "scroll" },
              h(
                "table",
                { class: "identities" },
                h(
                  "thead",
                  {},
                  h(
                    "tr",
                    {},
                    ...["source", "incoming PID", "producer", "mapped PID", "region", "pid40", "salt", "collision"].map(
                      (t) => h("th", {}, t),
                    ),
                  ),
                ),
                h("tbody", {}, ...rows),
              ),
            )
          : h("p", { class: "muted" }, "No mirrored producer has reached it yet."),
        h(
          "details",
          { class: "records" },
          h("summary", {}, `__mirror_state records (${p.records.length})`),
          h("ol", {}, ...records),
        ),
      );
    });
  $("#partitions").replaceChildren(
    ...(cards.length ? cards : [h("p", { class: "muted" }, "No mirror links: add one to see mapped PIDs.")]),
  );
  $("#log").replaceChildren(...report.timeline.map((step) => h("li", {}, step.text)));
}
