// The timeline: a slider over the scenario's events with step buttons, a
// strip per strategy marking the events at which that strategy's producer
// state went silently wrong, and the sentences saying what went wrong at the
// chosen event. Everything comes from the complete run's report.
import { $, h } from "./dom.js";
import { STRATEGIES, strategyLabel } from "./strategies.js";

/** Kinds of incident that are Kafka refusing an append (loud), not silent corruption. */
const REFUSALS = new Set(["outOfOrderSequence", "invalidProducerEpoch", "invalidTxnState"]);

/** The events (1-based) at which `strategy`'s corruption count rose. */
export function corruptEvents(full, strategy) {
  const out = [];
  let before = 0;
  full.timeline.forEach((step, i) => {
    if (step.totals[strategy] > before) out.push(i + 1);
    before = step.totals[strategy];
  });
  return out;
}

/** Draws the timeline of `full` at event `at` (0: before the first). */
export function renderTimeline(full, at, strategy, onStep) {
  const n = full ? full.timeline.length : 0;
  const slider = $("#time");
  slider.max = String(n);
  slider.value = String(at);
  slider.disabled = n === 0;
  $("#time-pos").textContent = `${at}/${n}`;
  slider.setAttribute("aria-valuetext", at === 0 ? "before the first event" : `after event ${at} of ${n}`);
  $("#time-prev").disabled = at === 0;
  $("#time-next").disabled = at >= n;
  // The next event at which any strategy went wrong: under mirrorpid the
  // interesting events are where the others failed.
  const marked = full
    ? [...new Set(STRATEGIES.flatMap(([key]) => corruptEvents(full, key)))].sort((a, b) => a - b)
    : [];
  $("#time-corrupt").disabled = !marked.some((k) => k > at);
  $("#time-corrupt").onclick = () => onStep(marked.find((k) => k > at));

  const rows = STRATEGIES.map(([key, label]) => {
    const ticks = (full ? corruptEvents(full, key) : []).map((k) =>
      h("button", {
        class: `tick${k === at ? " now" : ""}`,
        style: `left: calc(${(k / Math.max(n, 1)) * 100}% - 3px)`,
        tabindex: "-1",
        title: `event ${k}: ${full.timeline[k - 1].text}`,
        "data-testid": `tick-${key}-${k}`,
        onclick: () => onStep(k),
      }),
    );
    return h(
      "div",
      { class: `tick-row ${key}` },
      h("span", { class: "tick-name" }, label),
      h("div", { class: "tick-track", "aria-hidden": "true" }, ...ticks),
      h(
        "span",
        {
          class: "tick-count",
          "data-testid": `marks-${key}`,
          title: `${label}: events at which a silent corruption happened (not the corruptions themselves, which the counts above add up)`,
        },
        ticks.length ? `${ticks.length} event${ticks.length > 1 ? "s" : ""}` : "none",
      ),
    );
  });
  $("#ticks").replaceChildren(
    h(
      "p",
      { class: "tick-legend muted" },
      "Marks: the events at which each strategy's producer state went silently wrong (",
      h("span", { class: "tick-key" }),
      "), counted at the right in events.",
    ),
    ...rows,
  );

  const step = at > 0 && full ? full.timeline[at - 1] : null;
  $("#time-label").replaceChildren(
    at === 0
      ? h(
          "span",
          {},
          !full
            ? "The scenario cannot run (the error above says why), so there is no timeline."
            : n
              ? `Before the first of ${n} events.`
              : "The scenario has no events.",
        )
      : h("span", {}, h("b", {}, `After event ${at} of ${n}: `), step.text),
  );
  // The same sentence at the same place (one per batch of the event) once, counted.
  const said = new Map();
  for (const x of step ? step.incidents : []) {
    const key = `${x.strategy}\u0000${x.cluster}\u0000${x.text}`;
    said.set(key, { ...x, times: (said.get(key)?.times ?? 0) + 1 });
  }
  const items = [...said.values()].map((x) =>
    h(
      "li",
      { class: `incident ${x.strategy}`, "data-testid": "incident" },
      h("span", { class: `chip strategy ${x.strategy}` }, strategyLabel(x.strategy)),
      REFUSALS.has(x.kind) ? h("span", { class: "chip refused", "data-testid": "refused" }, "refused") : null,
      ` at ${x.cluster}: ${x.text}`,
      x.times > 1 ? h("span", { class: "muted" }, ` (×${x.times})`) : null,
    ),
  );
  if (step?.unsaid) items.push(h("li", { class: "muted" }, `and ${step.unsaid} more at this event`));
  if (step && !items.length) items.push(h("li", { class: "muted" }, "No silent corruption at this event."));
  $("#incidents").replaceChildren(...items);
}

/** Wires the slider and buttons to `onStep(k)`; `current()` reads the position. */
export function wireTimeline(onStep, current) {
  $("#time").addEventListener("input", (e) => onStep(Number(e.target.value)));
  $("#time-prev").addEventListener("click", () => onStep(current() - 1));
  $("#time-next").addEventListener("click", () => onStep(current() + 1));
}
