// The kinds of scenario event, in one table: the editor's form (its choices,
// which fields it shows), the event it builds, and how the page describes
// an event all come from here.

/**
 * Each kind: the form's `id` and `label`; `target` is what the first field
 * picks ("producer", "cluster" or none); `to` shows a second cluster field;
 * `amount` is what the number field means ("batches", "ms" or none) with its
 * default; `build` makes the scenario event; `type`/`matches`/`describe`
 * read one back.
 */
export const EVENT_KINDS = [
  {
    id: "produce",
    label: "produce",
    target: "producer",
    amount: ["batches", "1"],
    build: (t, _to, n) => ({ type: "produce", producer: t, count: Number(n) }),
    matches: (e) => e.type === "produce" && !e.transactional,
    describe: (e) => `${e.producer} writes ${e.count ?? 1} batch(es)`,
  },
  {
    id: "produceTx",
    label: "produce (transactional)",
    target: "producer",
    amount: ["batches", "1"],
    build: (t, _to, n) => ({ type: "produce", producer: t, count: Number(n), transactional: true }),
    matches: (e) => e.type === "produce" && e.transactional,
    describe: (e) => `${e.producer} writes ${e.count ?? 1} transactional batch(es)`,
  },
  {
    id: "commit",
    label: "commit",
    target: "producer",
    build: (t) => ({ type: "commit", producer: t }),
    describe: (e) => `${e.producer} commits`,
  },
  {
    id: "abort",
    label: "abort",
    target: "producer",
    build: (t) => ({ type: "abort", producer: t }),
    describe: (e) => `${e.producer} aborts`,
  },
  {
    id: "restart",
    label: "restart (next epoch)",
    target: "producer",
    build: (t) => ({ type: "restart", producer: t }),
    describe: (e) => `${e.producer} restarts at its next epoch`,
  },
  {
    id: "failover",
    label: "failover",
    target: "cluster",
    build: (t) => ({ type: "failover", cluster: t }),
    describe: (e) => `failover: ${e.cluster} becomes writable`,
  },
  {
    id: "addLink",
    label: "add link",
    target: "cluster",
    to: true,
    build: (t, to) => ({ type: "addLink", from: t, to }),
    describe: (e) => `add link ${e.from} → ${e.to}`,
  },
  {
    id: "removeLink",
    label: "remove link",
    target: "cluster",
    to: true,
    build: (t, to) => ({ type: "removeLink", from: t, to }),
    describe: (e) => `remove link ${e.from} → ${e.to}`,
  },
  {
    id: "election",
    label: "leader election",
    target: "cluster",
    build: (t) => ({ type: "election", cluster: t }),
    describe: (e) => `leader election at ${e.cluster}${e.snapshot ? " (snapshot + replay)" : " (replay)"}`,
  },
  {
    id: "advance",
    label: "time passes",
    amount: ["ms", "60000"],
    build: (_t, _to, n) => ({ type: "advance", ms: n }),
    describe: (e) => `${e.ms} ms pass`,
  },
  {
    id: "expire",
    label: "expire",
    amount: ["ms", "86400000"],
    build: (_t, _to, n) => ({ type: "expire", advanceMs: n }),
    describe: (e) => `expire after ${e.advanceMs ?? 0} ms`,
  },
];

/** The kind with form id `id`. */
export const kind = (id) => EVENT_KINDS.find((k) => k.id === id);

/** One line about a scenario event. */
export function describeEvent(e) {
  const k = EVENT_KINDS.find((k) => (k.matches ? k.matches(e) : k.id === e.type));
  return k ? k.describe(e) : JSON.stringify(e);
}
