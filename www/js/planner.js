// The cluster-ID planner: a fleet's IDs, each one's region at salt 0 in its
// colour, the IDs that share a region, and the chance that some two of that
// many clusters would (the core's plan::plan, as `mirrorpid clusters check`).
import { planClusters } from "mirrorpid";
import { $, h, markScrollers } from "./dom.js";
import { regionColours } from "./colour.js";

const hex = (region) => "0x" + region.toString(16).padStart(6, "0");

function swatch(region) {
  const c = regionColours(region);
  return h("span", { class: "swatch", style: `background: ${c.background}; border-color: ${c.edge}` });
}

/** A probability as people read one: "1.4 × 10⁻⁶ (about 1 in 700,000)". */
function odds(p) {
  if (p === 0) return "0 (one cluster cannot share)";
  if (p >= 0.01) return `${(p * 100).toPrecision(2)} %`;
  const [mantissa, exponent] = p.toExponential(1).split("e");
  const superscript = exponent.replace(/[-0-9]/g, (c) => "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"["-0123456789".indexOf(c)]);
  const one = Number((1 / p).toPrecision(2)).toLocaleString("en");
  return `${mantissa} × 10${superscript} (about 1 in ${one})`;
}

/** Checks the pasted IDs and shows the result. */
export function planForm(e) {
  e?.preventDefault();
  const out = $("#plan-out");
  let plan;
  try {
    plan = planClusters($("#plan-ids").value);
  } catch (err) {
    out.replaceChildren(h("p", { class: "error-inline", "data-testid": "plan-error" }, String(err.message || err)));
    return;
  }
  if (!plan.clusters.length) {
    out.replaceChildren(h("p", { class: "muted" }, "Paste one cluster ID per line."));
    return;
  }
  const sharing = new Map();
  for (const s of plan.sharedRegions)
    for (const id of s.clusters)
      sharing.set(
        id,
        s.clusters.filter((c) => c !== id),
      );
  const rows = plan.clusters.map((c) =>
    h(
      "tr",
      { class: sharing.has(c.id) ? "shared" : "", "data-testid": "plan-row", "data-cluster": c.id },
      h("td", { class: "mono wrap" }, c.id),
      h("td", { class: "mono" }, swatch(c.region), hex(c.region)),
      h(
        "td",
        {},
        sharing.has(c.id)
          ? h("span", { class: "badge" }, `shares it with ${sharing.get(c.id).join(", ")}`)
          : "own region",
      ),
    ),
  );
  const verdict = plan.sharedRegions.length
    ? h(
        "p",
        { class: "error-inline", "data-testid": "plan-verdict" },
        plan.sharedRegions.length === 1
          ? "One region is shared: "
          : `${plan.sharedRegions.length} regions are shared: `,
        plan.sharedRegions.map((s) => `${s.clusters.join(" and ")} (${hex(s.region)})`).join("; "),
        ". Their producers with the same PID can merge silently if they meet in one partition by two different paths: rename one cluster, or keep them from meeting that way.",
      )
    : h(
        "p",
        { class: "ok-inline", "data-testid": "plan-verdict" },
        `No two of these ${plan.clusters.length} clusters share a region at salt 0.`,
      );
  out.replaceChildren(
    verdict,
    h(
      "p",
      { class: "muted", "data-testid": "plan-probability" },
      `The chance that some two of ${plan.clusters.length} random cluster IDs share a region is `,
      h("b", { "data-probability": plan.sharedRegionProbability }, odds(plan.sharedRegionProbability)),
      " (1 − exp(−N(N−1)/2 / 2²²): the ",
      h("a", { href: "#g-region" }, "residual risk"),
      " of regions).",
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "plan" },
        h("thead", {}, h("tr", {}, h("th", {}, "cluster ID"), h("th", {}, "region at salt 0"), h("th", {}, ""))),
        h("tbody", {}, ...rows),
      ),
    ),
  );
  markScrollers(out);
}
