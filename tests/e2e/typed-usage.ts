// The README's JavaScript example, typed: `npm run typecheck` compiles it
// against the generated declarations (dist/node/mirrorpid.d.ts, from
// src/js/types.d.ts and the #[wasm_bindgen] signatures). A wrong option,
// result field or int64 type here fails the test command.
import {
  PidMapper,
  decodePid,
  decodeRecord,
  encodeRecord,
  mapPid,
  planClusters,
  simulate,
  type Binding,
  type LoadResult,
  type MapResult,
  type PidInfo,
  type RecordJson,
  type RewriteResult,
} from "../../dist/node/mirrorpid.js";

const m = new PidMapper("bxw7Kp1OS3-KHC0-T1prfA", 0, { durability: "bindings" });
const r: MapResult = m.map("A", 5n, Date.now()); // PIDs are BigInt
const mapped: bigint = r.mapped;
const salt: number | null = r.salt;
if (r.collision) {
  const holder: string = r.collision.collidingClusterId;
  console.log(holder);
}
if (r.record) {
  const key: Uint8Array = r.record.key;
  const value: Uint8Array | null = r.record.value;
  console.log(key, value);
}
m.confirm(); // after the record is durable (or m.abort())
const out: RewriteResult = m.rewriteBatches("A", new Uint8Array(), Date.now(), { strictCrc: false });
const consumed: number = out.consumed;
const own = new Uint8Array(0);
const same: boolean = m.rewriteBatchesInPlace("A", own, 0n, null).bytes === own;
const forwarded: number = m.rewriteBatchesInPlace("A", own, 0n, { outcomes: false }).batches.length;
console.log(same, forwarded);
const firstMapped: bigint | undefined = out.batches[0]?.mappedPid;
const control: "commit" | "abort" | "other" | null | undefined = out.batches[0]?.control;
const copy = PidMapper.restore(m.snapshot());
const bindings: Binding[] = copy.bindings();
const lastSeen: bigint | null | undefined = bindings[0]?.lastSeenMs;
const info: PidInfo = decodePid(8373639764095533061n);
const pid40: bigint | null = info.pid40;
const space: "noProducer" | "local" | "outOfRange" | "mirrored" = info.space;
const json: RecordJson = decodeRecord(new Uint8Array(), null);
const source: string = json.key.sourceClusterId;
const bytes = encodeRecord(json);
const loaded: LoadResult = copy.loadRecord(bytes.key, bytes.value);
if (loaded.outcome === "bound") {
  const evicted: number = loaded.evicted;
  console.log(evicted);
}
const f: bigint = mapPid("A", "5", 0);
const report = simulate("{}");
const total: number = report.totals.mirrorpid.total;
// The playground's picture: PIDs across links, the timeline, producer state, the planner.
const across: string[] = report.links.flatMap((l) => l.crossings.map((c) => c.pid.mirrorpid));
const said: string[] = report.timeline.flatMap((s) => s.incidents.map((i) => `${i.strategy} ${i.kind}: ${i.text}`));
const held: number[] = report.partitions.flatMap((p) => p.producerState.verbatim.map((e) => e.lastSequence));
const plan = planClusters("cluster-2123\ncluster-2336");
const risk: number = plan.sharedRegionProbability;
const pairs: string[][] = plan.sharedRegions.map((s) => s.clusters);
console.log(across, said, held, risk, pairs);
new PidMapper("bxw7Kp1OS3-KHC0-T1prfA", 0, null);
console.log(mapped, salt, consumed, firstMapped, control, lastSeen, pid40, space, source, f, total);

// What must not compile:
// @ts-expect-error an unknown option key
new PidMapper("bxw7Kp1OS3-KHC0-T1prfA", 0, { durabilty: "collisions" });
// @ts-expect-error a misspelt rewrite option
m.rewriteBatches("A", new Uint8Array(), 0, { strictCRC: true });
// @ts-expect-error a PID is an Int64, not a boolean
m.map("A", true, 0);
// @ts-expect-error the planner takes the pasted text, not an array
planClusters(["A", "B"]);
// @ts-expect-error mapped PIDs are bigint, not number
const wrong: number = r.mapped;
console.log(wrong);
