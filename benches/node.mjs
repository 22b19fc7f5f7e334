// The JS API in Node beside the broker module's C ABI, in one Node
// process on the same work: a fetch of 1000 bound producers' batches
// (rewriteBatches vs mp_rewrite), one of 1 MiB of 1 KiB batches, map() of a
// bound identity, and one batch of 256 B to 1 MiB (rewriteBatches,
// rewriteBatchesInPlace, mp_rewrite with the host's copy in). Medians of
// 101 rounds after a warm-up; each round times a loop, not one call.
//
//   scripts/build.sh && node benches/node.mjs [--json FILE]   (scripts/bench.sh runs it)
//
// With --json, the figures are also written to FILE, as
// `scripts/perf-doc.py collect node FILE` reads them.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const js = require(join(root, "dist/node/mirrorpid.js"));
const TOPIC = "bxw7Kp1OS3-KHC0-T1prfA";
const jsonAt = process.argv.indexOf("--json");
const jsonFile = jsonAt >= 0 ? process.argv[jsonAt + 1] : null;
// Each figure in ns, by the name docs/perf/node.json keeps it under.
const results = {};
const BATCHES = 1000;

// A fetch of n minimal v2 batches of `size` bytes (61, a header and no
// records, unless said): base offsets and producer IDs 0..n-1, magic 2. The
// CRC need not be valid: a rewrite patches it without checking (strictCrc
// off), as the naive approach would not.
function fetchOf(n, size = 61) {
  const buf = new Uint8Array(size * n);
  const view = new DataView(buf.buffer);
  for (let i = 0; i < n; i++) {
    const at = size * i;
    view.setBigInt64(at, BigInt(i));
    view.setInt32(at + 8, size - 12);
    buf[at + 16] = 2;
    view.setBigInt64(at + 43, BigInt(i));
    view.setInt16(at + 51, 0);
    view.setInt32(at + 53, 0);
  }
  return buf;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

// Nanoseconds per unit of each work ([work, units per call, calls per
// loop]), timed side by side: every round times one loop of each, in turn,
// so a slow moment of the machine falls on all of them.
function measureAll(works) {
  for (const [work, , loops] of works) for (let i = 0; i < loops; i++) work();
  const rounds = works.map(() => []);
  for (let r = 0; r < 101; r++) {
    works.forEach(([work, units, loops], k) => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < loops; i++) work();
      rounds[k].push(Number(process.hrtime.bigint() - t0) / (loops * units));
    });
  }
  return rounds.map(median);
}

const fetch = fetchOf(BATCHES);

// The JS API.
const mapper = new js.PidMapper(TOPIC, 0, null);
mapper.rewriteBatches("A", fetch, 0n, null);
mapper.confirm();
// The outcomes are built when first read: one work reads them all.
let sink = 0n;

// The broker module in the same process.
const { instance } = await WebAssembly.instantiate(readFileSync(join(root, "dist/mirrorpid_broker.wasm")), {});
const x = instance.exports;
x.mp_hash_seed(BigInt.asIntN(64, BigInt(Math.floor(Math.random() * 2 ** 53))));
// The host's view of the module's memory, kept between calls and made
// again when a grow detaches it (its length is then 0), as a host would.
let memory = new Uint8Array(0);
const mem = () => (memory.length === 0 ? (memory = new Uint8Array(x.memory.buffer)) : memory);
const put = (bytes) => {
  const p = x.mp_alloc(bytes.length);
  mem().set(bytes, p);
  return p;
};
const config = new TextEncoder().encode(JSON.stringify({ topicId: TOPIC, partition: 0 }));
const h = x.mp_mapper_new(put(config), config.length);
const src = put(new TextEncoder().encode("A"));
const block = put(fetch);
if (x.mp_rewrite(h, src, 1, block, fetch.length, 0n, 0) !== fetch.length) throw new Error("mp_rewrite failed");
x.mp_confirm(h);

// rewriteBatchesInPlace rewrites the caller's array, as mp_rewrite does
// the host's block: each call first puts the original bytes back.
const own = new Uint8Array(fetch.length);

// A host that forwards the bytes and records asks for no outcomes.
const BARE = { outcomes: false };
const bare = new Uint8Array(fetch.length);

const [jsRewrite, jsInPlace, jsBare, jsRewriteRead, abiRewrite, jsMap, jsMapBig] = measureAll([
  [() => mapper.rewriteBatches("A", fetch, 1n, null), BATCHES, 20],
  [
    () => {
      own.set(fetch);
      mapper.rewriteBatchesInPlace("A", own, 1n, null);
    },
    BATCHES,
    20,
  ],
  [
    () => {
      bare.set(fetch);
      mapper.rewriteBatchesInPlace("A", bare, 1n, BARE);
    },
    BATCHES,
    20,
  ],
  [
    () => {
      for (const b of mapper.rewriteBatches("A", fetch, 1n, null).batches) sink ^= b.mappedPid;
    },
    BATCHES,
    20,
  ],
  [
    () => {
      mem().set(fetch, block); // the host copies the fetch in, as a broker would
      x.mp_rewrite(h, src, 1, block, fetch.length, 1n, 0);
    },
    BATCHES,
    20,
  ],
  [
    () => {
      for (let i = 0; i < 1000; i++) mapper.map("A", i, 2);
    },
    1000,
    20,
  ],
  [
    () => {
      for (let i = 0n; i < 1000n; i++) mapper.map("A", i, 2n);
    },
    1000,
    20,
  ],
]);

results["rewriteBatches 1000"] = jsRewrite;
results["rewriteBatchesInPlace 1000"] = jsInPlace;
results["rewriteBatchesInPlace bare 1000"] = jsBare;
results["mp_rewrite 1000"] = abiRewrite;
results["map"] = jsMap;
const row = (what, ns) => `| ${what} | ${ns.toFixed(1)} ns |`;
console.log("| work (Node " + process.version + ") | cost |");
console.log("|---|---:|");
console.log(row("rewriteBatches, per batch of a 1000-batch fetch", jsRewrite));
console.log(row("rewriteBatchesInPlace (the original put back first), per batch", jsInPlace));
console.log(row("rewriteBatchesInPlace, { outcomes: false }, per batch", jsBare));
console.log(row("rewriteBatches, reading every batch outcome, per batch", jsRewriteRead));
console.log(row("mp_rewrite (same module family, C ABI), per batch", abiRewrite));
console.log(row("map() of a bound identity, per call (number arguments)", jsMap));
console.log(row("map() of a bound identity, per call (BigInt arguments)", jsMapBig));
console.log(`\nrewriteBatches / mp_rewrite: ${(jsRewrite / abiRewrite).toFixed(1)}x`);
console.log(`rewriteBatchesInPlace / mp_rewrite: ${(jsInPlace / abiRewrite).toFixed(1)}x`);
console.log(`rewriteBatchesInPlace, no outcomes / mp_rewrite: ${(jsBare / abiRewrite).toFixed(1)}x`);
console.log(`reading every outcome / mp_rewrite: ${(jsRewriteRead / abiRewrite).toFixed(1)}x`);

// A fetch as a broker hands out a partition's records (1 MiB, its default
// max.partition.fetch.bytes) of 1 KiB batches, a producer each: the in-place
// calls first put back the 12 bytes of each batch a rewrite changes, three
// words through a DataView, as the one-batch rows below do.
{
  const SMALL = 1 << 10;
  const n = (1 << 20) / SMALL;
  const many = fetchOf(n, SMALL);
  const v = new DataView(many.buffer);
  const m1 = new js.PidMapper(TOPIC, 0, null);
  m1.rewriteBatches("A", many, 0n, null);
  m1.confirm();
  const b1 = put(many);
  if (x.mp_rewrite(h, src, 1, b1, many.length, 0n, 0) !== many.length) throw new Error("mp_rewrite failed");
  x.mp_confirm(h);
  const mine = many.slice();
  const mineView = new DataView(mine.buffer);
  const original = [17, 43, 47].map((k) => Array.from({ length: n }, (_, i) => v.getInt32(i * SMALL + k)));
  const putBack = () => {
    for (let i = 0; i < n; i++) {
      mineView.setInt32(i * SMALL + 17, original[0][i]);
      mineView.setInt32(i * SMALL + 43, original[1][i]);
      mineView.setInt32(i * SMALL + 47, original[2][i]);
    }
  };
  const [inPlace, inPlaceBare, copying, abi] = measureAll([
    [
      () => {
        putBack();
        m1.rewriteBatchesInPlace("A", mine, 1n, null);
      },
      n,
      2,
    ],
    [
      () => {
        putBack();
        m1.rewriteBatchesInPlace("A", mine, 1n, BARE);
      },
      n,
      2,
    ],
    [() => m1.rewriteBatches("A", many, 1n, null), n, 2],
    [
      () => {
        mem().set(many, b1);
        x.mp_rewrite(h, src, 1, b1, many.length, 1n, 0);
      },
      n,
      2,
    ],
  ]);
  if (mine[43] === many[43]) throw new Error("the in-place call rewrote nothing");
  results["rewriteBatchesInPlace 1MiB of 1KiB"] = inPlace;
  results["rewriteBatchesInPlace bare 1MiB of 1KiB"] = inPlaceBare;
  results["rewriteBatches 1MiB of 1KiB"] = copying;
  results["mp_rewrite 1MiB of 1KiB"] = abi;
  console.log("\n| a 1 MiB fetch of 1 KiB batches, per batch | cost |");
  console.log("|---|---:|");
  console.log(row("rewriteBatchesInPlace", inPlace));
  console.log(row("rewriteBatchesInPlace, { outcomes: false }", inPlaceBare));
  console.log(row("rewriteBatches", copying));
  console.log(row("mp_rewrite (host copies it in)", abi));
  x.mp_free(b1);
  m1.free();
}

// One batch of each size, bound: what a call costs as the records grow.
// Each in-place call first puts back the 12 bytes a rewrite changes, as
// three words through a DataView (the cheapest put-back: a full copy would
// be the size-dependent cost measured); from 8 KiB rewriteBatchesInPlace
// copies only the batch's header window (src/js/fast.rs, WINDOWS_FROM).
// Two columns are floors, not calls of the API: "mp_rewrite + least JS"
// is the least any in-place JS call over the module's C ABI does (the
// copy in, mp_rewrite, the 12 bytes back into the caller's array, a result
// object with no outcome), and the last is the floor of a call that
// returns a new array, as rewriteBatches' contract does: allocating one of
// the batch's size (in V8, above 64 bytes a typed array's memory lies
// outside the heap).
console.log(
  "\n| one batch of | rewriteBatches | rewriteBatchesInPlace | the same, no outcomes | mp_rewrite (host copies it in) | mp_rewrite + least JS | new Uint8Array(size) |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|");
for (const [name, size, key] of [
  ["256 B", 256, "256B"],
  ["1 KiB", 1 << 10, "1KiB"],
  ["16 KiB", 16 << 10, "16KiB"],
  ["64 KiB", 64 << 10, "64KiB"],
  ["1 MiB", 1 << 20, "1MiB"],
]) {
  const one = new Uint8Array(size);
  const v = new DataView(one.buffer);
  v.setInt32(8, size - 12);
  one[16] = 2;
  v.setBigInt64(43, 7n);
  const m1 = new js.PidMapper(TOPIC, 0, null);
  m1.rewriteBatches("A", one, 0n, null);
  m1.confirm();
  const mine = one.slice();
  const least = one.slice();
  // The 12 bytes a rewrite changes (the CRC, the producer ID), as they
  // were: put back before each in-place call.
  const [crc, pidHigh, pidLow] = [17, 43, 47].map((at) => v.getInt32(at));
  const putBack = (view) => {
    view.setInt32(17, crc);
    view.setInt32(43, pidHigh);
    view.setInt32(47, pidLow);
  };
  const [mineView, leastView] = [new DataView(mine.buffer), new DataView(least.buffer)];
  const b1 = put(one);
  if (x.mp_rewrite(h, src, 1, b1, size, 0n, 0) !== size) throw new Error("mp_rewrite failed");
  x.mp_confirm(h);
  const b2 = put(one);
  const loops = size >= 1 << 20 ? 20 : 200;
  let fresh = null;
  let leastOut = null;
  const [copying, inPlace, inPlaceBare, abi, abiLeast, alloc] = measureAll([
    [() => m1.rewriteBatches("A", one, 1n, null), 1, loops],
    [
      () => {
        putBack(mineView);
        m1.rewriteBatchesInPlace("A", mine, 1n, null);
      },
      1,
      loops,
    ],
    [
      () => {
        putBack(mineView);
        m1.rewriteBatchesInPlace("A", mine, 1n, BARE);
      },
      1,
      loops,
    ],
    [
      () => {
        mem().set(one, b1);
        x.mp_rewrite(h, src, 1, b1, size, 1n, 0);
      },
      1,
      loops,
    ],
    [
      () => {
        putBack(leastView);
        const m = mem();
        m.set(least, b2);
        const consumed = x.mp_rewrite(h, src, 1, b2, size, 1n, 0);
        for (let at = 17; at < 21; at++) least[at] = m[b2 + at];
        for (let at = 43; at < 51; at++) least[at] = m[b2 + at];
        leastOut = { bytes: least, consumed, records: [], snapshotRequired: false, batches: [] };
      },
      1,
      loops,
    ],
    [
      () => {
        fresh = new Uint8Array(size);
      },
      1,
      loops,
    ],
  ]);
  results[`rewriteBatches ${key}`] = copying;
  results[`rewriteBatchesInPlace ${key}`] = inPlace;
  results[`rewriteBatchesInPlace bare ${key}`] = inPlaceBare;
  results[`mp_rewrite ${key}`] = abi;
  results[`mp_rewrite least JS ${key}`] = abiLeast;
  const us = (ns) => `${(ns / 1000).toFixed(2)} µs`;
  console.log(
    `| ${name} | ${us(copying)} | ${us(inPlace)} | ${us(inPlaceBare)} | ${us(abi)} | ${us(abiLeast)} | ${us(alloc)} |`,
  );
  if (fresh.length !== size) throw new Error("the allocation was optimised away");
  if (leastOut.consumed !== size || leastOut.bytes[43] === one[43])
    throw new Error("the least JS call rewrote nothing");
  x.mp_free(b1);
  x.mp_free(b2);
  m1.free();
}
if (sink === -1n) console.log(""); // keeps the reads
if (jsonFile) {
  const { writeFileSync } = await import("node:fs");
  writeFileSync(jsonFile, JSON.stringify({ node: process.version, results }, null, 1));
}
