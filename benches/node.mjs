// The JS API in Node beside the rewrite a Node user would write without
// it, in one Node process on the same work: for each batch, the producer ID
// mapped (the same mapper's map()), written, and the CRC-32C recomputed
// over the rest of the batch, with the fastest CRC-32C on npm
// (@node-rs/crc32, native) and with a JavaScript table as kafkajs computes
// it. Work: one batch of 256 B to 1 MiB, and a fetch of 1,000 batches of
// 1 KiB (a producer each). Medians of 101 rounds after a warm-up; each
// round times a loop, not one call, and every call first puts back the
// 12 bytes a rewrite changes.
//
//   scripts/build.sh && node benches/node.mjs [--json FILE]   (scripts/bench.sh runs it)
//
// With --json, the figures are also written to FILE, as
// `scripts/perf-doc.py collect node FILE` reads them.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const js = require(join(root, "dist/node/mirrorpid.js"));
const { crc32c: nativeCrc32c } = require("@node-rs/crc32");
const TOPIC = "bxw7Kp1OS3-KHC0-T1prfA";
const jsonAt = process.argv.indexOf("--json");
const jsonFile = jsonAt >= 0 ? process.argv[jsonAt + 1] : null;
// Each figure in ns a call, by the name docs/perf/node.json keeps it under.
const results = {};

// CRC-32C (Castagnoli, reflected 0x82F63B78) a byte at a time from a
// 256-entry table, as kafkajs computes it.
const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  TABLE[n] = c;
}
function tableCrc32c(bytes) {
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}

// The naive rewrite of every v2 batch of `bytes` in place: walk by
// batchLength, map the producer ID, write it, recompute the CRC over
// [21, end) with `crc`.
function naive(mapper, crc, bytes, view, nowMs) {
  for (let at = 0; at + 61 <= bytes.length;) {
    const end = at + 12 + view.getInt32(at + 8);
    if (end > bytes.length) break;
    const mapped = mapper.map("A", view.getBigInt64(at + 43), nowMs).mapped;
    view.setBigInt64(at + 43, mapped);
    view.setUint32(at + 17, crc(bytes.subarray(at + 21, end)));
    at = end;
  }
}

// A fetch of n v2 batches of `size` bytes, records all zero: base offsets
// and producer IDs 0..n-1, magic 2, each CRC right.
function fetchOf(n, size) {
  const buf = new Uint8Array(size * n);
  const view = new DataView(buf.buffer);
  for (let i = 0; i < n; i++) {
    const at = size * i;
    view.setBigInt64(at, BigInt(i));
    view.setInt32(at + 8, size - 12);
    buf[at + 16] = 2;
    view.setBigInt64(at + 43, BigInt(i));
    view.setUint32(at + 17, nativeCrc32c(buf.subarray(at + 21, at + size)));
  }
  return buf;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

// Nanoseconds a call of each work ([work, calls per loop]), timed side by
// side: every round times one loop of each, in turn, so a slow moment of
// the machine falls on all of them.
function measureAll(works) {
  for (const [work, loops] of works) for (let i = 0; i < loops; i++) work();
  const rounds = works.map(() => []);
  for (let r = 0; r < 101; r++) {
    works.forEach(([work, loops], k) => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < loops; i++) work();
      rounds[k].push(Number(process.hrtime.bigint() - t0) / loops);
    });
  }
  return rounds.map(median);
}

const BARE = { outcomes: false };
const us = (ns) =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
console.log(`Node ${process.version}, a call each\n`);
console.log("| work | rewriteBatchesInPlace | { outcomes: false } | naive, @node-rs/crc32 | naive, JS table |");
console.log("|---|---:|---:|---:|---:|");
for (const [name, key, n, size] of [
  ["one batch of 256 B", "256B", 1, 256],
  ["one batch of 1 KiB", "1KiB", 1, 1 << 10],
  ["one batch of 16 KiB", "16KiB", 1, 16 << 10],
  ["one batch of 64 KiB", "64KiB", 1, 64 << 10],
  ["one batch of 1 MiB", "1MiB", 1, 1 << 20],
  ["a fetch of 1,000 batches of 1 KiB", "1000x1KiB", 1000, 1 << 10],
]) {
  const original = fetchOf(n, size);
  const mapper = new js.PidMapper(TOPIC, 0, null);
  mapper.rewriteBatches("A", original, 0n, null);
  mapper.confirm();
  // Each work's own copy, and the 12 bytes a rewrite changes as they
  // were, put back before each call.
  const back = [17, 43, 47].map((k) =>
    Array.from({ length: n }, (_, i) => new DataView(original.buffer).getInt32(i * size + k)),
  );
  const copies = [0, 1, 2, 3].map(() => {
    const bytes = original.slice();
    const view = new DataView(bytes.buffer);
    const putBack = () => {
      for (let i = 0; i < n; i++) {
        view.setInt32(i * size + 17, back[0][i]);
        view.setInt32(i * size + 43, back[1][i]);
        view.setInt32(i * size + 47, back[2][i]);
      }
    };
    return { bytes, view, putBack };
  });
  const [mine, bare, fast, slow] = copies;
  const loops = Math.max(2, Math.min(200, Math.floor((1 << 22) / (n * size))));
  const [inPlace, inPlaceBare, naiveNative, naiveTable] = measureAll([
    [
      () => {
        mine.putBack();
        mapper.rewriteBatchesInPlace("A", mine.bytes, 1n, null);
      },
      loops,
    ],
    [
      () => {
        bare.putBack();
        mapper.rewriteBatchesInPlace("A", bare.bytes, 1n, BARE);
      },
      loops,
    ],
    [
      () => {
        fast.putBack();
        naive(mapper, nativeCrc32c, fast.bytes, fast.view, 1n);
      },
      loops,
    ],
    [
      () => {
        slow.putBack();
        naive(mapper, tableCrc32c, slow.bytes, slow.view, 1n);
      },
      loops,
    ],
  ]);
  // Every way wrote the same bytes.
  for (const other of [bare, fast, slow]) {
    if (Buffer.compare(mine.bytes, other.bytes) !== 0) throw new Error(`${name}: the rewrites disagree`);
  }
  if (Buffer.compare(mine.bytes, original) === 0) throw new Error(`${name}: nothing was rewritten`);
  results[`rewriteBatchesInPlace ${key}`] = inPlace;
  results[`rewriteBatchesInPlace bare ${key}`] = inPlaceBare;
  results[`naive node-rs ${key}`] = naiveNative;
  results[`naive table ${key}`] = naiveTable;
  console.log(`| ${name} | ${us(inPlace)} | ${us(inPlaceBare)} | ${us(naiveNative)} | ${us(naiveTable)} |`);
  mapper.free();
}
if (jsonFile) {
  const { writeFileSync } = await import("node:fs");
  writeFileSync(jsonFile, JSON.stringify({ node: process.version, results }, null, 1));
}
