// Two builds of the Node package side by side in one Node process: one
// batch (256 B unless SIZE says) through rewriteBatches (the outcome read
// and not) and rewriteBatchesInPlace (by default and without outcomes),
// alternating loops of each build (5000 calls at 256 B, fewer as the batch
// grows; the order swapped every round), medians of the 50 rounds after 11
// of warm-up. For a change to the JS API's cost, measured against the
// build before it on the same noise; each build is a WebAssembly instance
// of its own, whose cost can differ by a tenth with nothing changed, so
// run it with the builds both ways round.
//
//   node benches/node-ab.mjs OLD_DIR NEW_DIR [SIZE]    (each a dist/node of scripts/build.sh)
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const [oldDir, newDir, sizeArg = "256"] = process.argv.slice(2);
const SIZE = Number(sizeArg);
if (!oldDir || !newDir || !Number.isInteger(SIZE) || SIZE < 61) {
  console.error("usage: node benches/node-ab.mjs OLD_DIR NEW_DIR [SIZE, at least 61]");
  process.exit(2);
}
const CALLS = Math.max(20, Math.round((5000 * 256) / SIZE));
const builds = {
  old: require(resolve(oldDir, "mirrorpid.js")),
  new: require(resolve(newDir, "mirrorpid.js")),
};
const TOPIC = "bxw7Kp1OS3-KHC0-T1prfA";

// One minimal v2 batch of `size` bytes from producer 7 (the CRC need not be valid).
function batchOf(size) {
  const b = new Uint8Array(size);
  const v = new DataView(b.buffer);
  v.setInt32(8, size - 12);
  b[16] = 2;
  v.setBigInt64(43, 7n);
  return b;
}

const input = batchOf(SIZE);
const mine = { old: input.slice(), new: input.slice() };
const mappers = {};
for (const [k, js] of Object.entries(builds)) {
  const m = new js.PidMapper(TOPIC, 0, null);
  m.rewriteBatches("A", input, 0n, null);
  m.confirm();
  mappers[k] = m;
}
let sink = 0;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
// rewriteBatchesInPlace gets its batch's original 12 bytes back before each
// call, three words through a DataView, as benches/node.mjs puts them back.
const words = [17, 43, 47].map((at) => [at, new DataView(input.buffer).getInt32(at)]);
const views = { old: new DataView(mine.old.buffer), new: new DataView(mine.new.buffer) };
const inPlace = (k, options) => {
  for (const [at, word] of words) views[k].setInt32(at, word);
  return mappers[k].rewriteBatchesInPlace("A", mine[k], 1n, options).consumed;
};
const BARE = { outcomes: false };
for (const [name, call] of [
  ["rewriteBatches, outcome read", (m) => m.rewriteBatches("A", input, 1n, null).batches[0].salt],
  ["rewriteBatches, outcome not read", (m) => m.rewriteBatches("A", input, 1n, null).consumed],
  ["rewriteBatchesInPlace, outcome not read", (m, k) => inPlace(k, null)],
  ["rewriteBatchesInPlace, { outcomes: false }", (m, k) => inPlace(k, BARE)],
]) {
  const rounds = { old: [], new: [] };
  for (let r = 0; r < 61; r++) {
    for (const k of r % 2 ? ["old", "new"] : ["new", "old"]) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) sink ^= call(mappers[k], k);
      if (r > 10) rounds[k].push(Number(process.hrtime.bigint() - t0) / CALLS);
    }
  }
  console.log(
    `one ${SIZE} B batch, ${name}: old ${median(rounds.old).toFixed(0)} ns, ` +
      `new ${median(rounds.new).toFixed(0)} ns`,
  );
}
if (sink === -1) console.log("");
