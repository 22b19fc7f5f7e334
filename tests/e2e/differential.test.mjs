// The JS API (dist/node) against the broker module (dist/mirrorpid_broker.wasm),
// both in this Node process's V8: the same structured calls, the same
// answers. Records with every field bad in turn, fetches of real batch
// headers with bit flips and cuts, in random order with confirms; every
// answer compared (status or error message, rewritten bytes, records) and
// the two snapshots compared after each call. The native core against the
// module is the `differential` fuzz target (docs/RELIABILITY.md); this is
// the bounded run of the same idea for the JS API.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { countExportCalls, root } from "./harness.mjs";

// The fast path's two ways into the module, counted from before the glue
// instantiates it: `copy` (every byte copied) and `windows` (the header
// windows).
const FAST = { copy: "pidmapper___fastRewrite", windows: "pidmapper___fastRewriteHeaders" };
const exportCalls = countExportCalls(Object.values(FAST));
const require = createRequire(import.meta.url);
const js = require(`${root}/dist/node/mirrorpid.js`);
const CONFIG = { topicId: "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c", partition: 0 };
const SOURCES = ["A", "B", "cluster-2123", "cluster-2336"];
const CASES = 20000;
// The test command runs one run of CASES calls; a longer run, recorded in
// docs/RELIABILITY.md, sets MIRRORPID_DIFF_RUNS: that many runs, each from
// its own seed, on a fresh module instance and mapper.
const RUNS = Number(process.env.MIRRORPID_DIFF_RUNS ?? 1);

/** The module with a few helpers, as a host written from docs/ABI.md. */
async function module() {
  const bytes = readFileSync(`${root}/dist/mirrorpid_broker.wasm`);
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const e = instance.exports;
  const mem = () => new Uint8Array(e.memory.buffer);
  const put = (b) => {
    if (b.length === 0) return [0, 0];
    const p = e.mp_alloc(b.length);
    mem().set(b, p);
    return [p, b.length];
  };
  const error = () =>
    Buffer.from(mem().subarray(e.mp_last_error_ptr(), e.mp_last_error_ptr() + e.mp_last_error_len())).toString();
  const output = (h) => mem().slice(e.mp_output_ptr(h), e.mp_output_ptr(h) + e.mp_output_len(h));
  // mp_output_info's 12 bytes, read without a call (its address never moves).
  const infoAt = e.mp_output_info();
  const info = () => {
    const v = new DataView(e.memory.buffer, infoAt, 12);
    return { ptr: v.getInt32(0), len: v.getInt32(4), flag: v.getInt32(8) };
  };
  return { e, mem, put, error, output, info };
}

/** The ABI's record list (docs/ABI.md) as [{key, value}]. */
function recordList(bytes) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = [];
  let at = 4;
  for (let i = 0; i < v.getInt32(0); i++) {
    const kl = v.getInt32(at);
    const key = bytes.slice(at + 4, at + 4 + kl);
    at += 4 + kl;
    const vl = v.getInt32(at);
    at += 4;
    const value = vl < 0 ? null : bytes.slice(at, at + vl);
    at += Math.max(vl, 0);
    out.push({ key, value });
  }
  return out;
}

function rng(seed) {
  let s = BigInt(seed) | 1n;
  return (n) => {
    s ^= (s << 13n) & 0xffffffffffffffffn;
    s ^= s >> 7n;
    s ^= (s << 17n) & 0xffffffffffffffffn;
    return Number(s % BigInt(n));
  };
}

const hex = (h) => Uint8Array.from(h.match(/../g), (b) => parseInt(b, 16));
const KEY = "00036f1c3b2a9d4e4b7f8a1c2d3e4f5a6b7c000000000001520000000000000005";
const VALUE = "0000000000000000000202ff0000018bcfe5680000";

/** A v2 batch header with no records (61 bytes, or `pad` more of zeros), or a control marker. */
/** The fast path's calls of each way into the module from now on. */
function countFastCalls() {
  const start = { copy: exportCalls[FAST.copy], windows: exportCalls[FAST.windows] };
  return {
    get copy() {
      return exportCalls[FAST.copy] - start.copy;
    },
    get windows() {
      return exportCalls[FAST.windows] - start.windows;
    },
  };
}

/** The arrays of `parts`, one after another, in one array. */
function concat(parts) {
  const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    whole.set(p, at);
    at += p.length;
  }
  return whole;
}

// A `tight` marker ends with its key, so that the marker's type is its
// last byte (the control record's length says more: nothing reads it).
function batch(pid, { txn = false, marker = null, pad = 0, tight = false } = {}) {
  const b = new Uint8Array(marker === null ? 61 + pad : tight ? 61 + 9 : 61 + 14);
  const v = new DataView(b.buffer);
  v.setInt32(8, b.length - 12);
  b[16] = 2;
  v.setInt16(21, (txn || marker !== null ? 0x10 : 0) | (marker !== null ? 0x20 : 0));
  v.setBigInt64(43, BigInt.asIntN(64, pid));
  v.setInt32(57, marker === null ? 0 : 1);
  if (marker !== null) {
    // length 12, attributes, timestampDelta 0, offsetDelta 0, keyLength 4, key
    b.set([24, 0, 0, 0, 8, 0, 0, 0, marker, 0, 0].slice(0, b.length - 61), 61);
  }
  return b;
}

test("the JS API and the broker module give the same answer to every call", async () => {
  assert.ok(Number.isInteger(RUNS) && RUNS > 0, `MIRRORPID_DIFF_RUNS=${process.env.MIRRORPID_DIFF_RUNS}`);
  // Odd seeds, each its own (the generator sets the low bit).
  for (let run = 0; run < RUNS; run++) await differentialRun(0x5eed + 2 * run);
});

/** CASES structured calls from `seed`, each answered by both and compared. */
async function differentialRun(seed) {
  const m = await module();
  const cfg = Buffer.from(JSON.stringify(CONFIG));
  const [cp, cl] = m.put(cfg);
  const h = m.e.mp_mapper_new(cp, cl);
  assert.ok(h > 0, m.error());
  const mapper = new js.PidMapper(CONFIG.topicId, CONFIG.partition, null);
  const next = rng(seed);
  const pids = [0n, 1n, 5n, 7n, -1n, (1n << 40n) - 1n, 1n << 40n, js.mapPid("A", 3n, 0), js.mapPid("B", 2n, 1)];
  let errors = 0;
  let rewrites = 0;
  for (let i = 0; i < CASES; i++) {
    const kind = next(10);
    if (kind < 4) {
      // A record: the poison value's shape, one byte of key or value changed.
      const key = hex(KEY);
      const value = next(5) === 0 ? null : hex(VALUE);
      const target = value === null || next(2) === 0 ? key : value;
      target[next(target.length)] = [0x00, 0x01, 0x7f, 0x80, 0xc0, 0xff][next(6)];
      const [kp, kl] = m.put(key);
      const [vp, vl] = value === null ? [0, -1] : m.put(value);
      const status = m.e.mp_load_record(h, kp, kl, vp, vl);
      const moduleSays = status < 0 ? m.error() : status;
      let jsSays;
      try {
        const r = mapper.loadRecord(key, value);
        jsSays = { skipped: 0, deleted: 2 }[r.outcome] ?? (r.evicted > 0 ? 3 : 1) + (r.undeclared ? 4 : 0);
      } catch (err) {
        jsSays = err.message;
        errors += 1;
      }
      assert.deepEqual(
        jsSays,
        moduleSays,
        `record ${Buffer.from(key).toString("hex")} ${value && Buffer.from(value).toString("hex")}`,
      );
      for (const p of [kp, vp]) if (p > 0) m.e.mp_free(p);
    } else if (kind < 9) {
      const parts = [];
      for (let n = next(5); n > 0; n--) {
        const pid = pids[next(pids.length)];
        parts.push(next(4) === 0 ? batch(pid, { marker: next(2) }) : batch(pid, { txn: next(2) === 0 }));
      }
      const fetch = concat(parts);
      if (fetch.length > 0 && next(3) === 0) fetch[next(fetch.length)] ^= 1 << next(8);
      const cut = next(4) === 0 ? fetch.subarray(0, next(fetch.length + 1)) : fetch;
      const flags = next(4);
      const source = SOURCES[next(SOURCES.length)];
      const [sp, sl] = m.put(Buffer.from(source));
      const [bp, bl] = m.put(cut);
      const infoBefore = m.info();
      const status = m.e.mp_rewrite(h, sp, sl, bp, bl, 1000n, flags);
      const options = { strictCrc: (flags & 1) !== 0, complete: (flags & 2) !== 0 };
      let jsOut;
      try {
        jsOut = mapper.rewriteBatches(source, cut, 1000, options);
      } catch (err) {
        jsOut = err.message;
        errors += 1;
      }
      if (status < 0) {
        assert.equal(jsOut, m.error());
        assert.deepEqual(m.info(), infoBefore, "a failed mp_rewrite changed the output info");
      } else {
        rewrites += 1;
        assert.deepEqual(m.info(), {
          ptr: m.e.mp_output_ptr(h),
          len: m.e.mp_output_len(h),
          flag: m.e.mp_snapshot_required(h),
        });
        assert.equal(typeof jsOut, "object", `module consumed ${status}, JS threw ${jsOut}`);
        assert.equal(jsOut.consumed, status);
        assert.deepEqual(jsOut.bytes, m.mem().slice(bp, bp + bl));
        assert.deepEqual(
          jsOut.records.map((r) => ({ key: r.key, value: r.value ?? null })),
          recordList(m.output(h)),
        );
        assert.equal(jsOut.snapshotRequired, m.e.mp_snapshot_required(h) === 1);
      }
      for (const p of [sp, bp]) if (p > 0) m.e.mp_free(p);
    } else if (next(2) === 0) {
      assert.equal(mapper.confirm(), m.e.mp_confirm(h));
    } else {
      assert.equal(mapper.abort(), m.e.mp_abort(h));
    }
    assert.equal(mapper.pending, m.e.mp_pending(h));
    assert.equal(mapper.size, m.e.mp_mapper_len(h));
    const len = m.e.mp_snapshot(h);
    assert.deepEqual(mapper.snapshot(), m.output(h).subarray(0, len));
  }
  assert.ok(errors > CASES / 10, `errors were met (${errors})`);
  assert.ok(rewrites > CASES / 10, `rewrites succeeded (${rewrites})`);
  mapper.free();
  m.e.mp_mapper_free(h);
}

test("both rewrites of a large fetch, through its headers, answer as the module's mp_rewrite of the whole fetch", async () => {
  // From 64 KiB rewriteBatches copies each batch's 112-byte window into
  // the module and 12 bytes of a changed batch back into the one copy it
  // returns (src/js/mod.rs, HEADERS_FROM); rewriteBatchesInPlace's fast
  // path copies the windows where the batches average 8 KiB or more
  // (src/js/builders.js, `gather`), and every byte where they are
  // smaller, and writes back into the caller's array. The broker module's
  // mp_rewrite, given the whole fetch, is the reference. The same calls to
  // all three: the same answers, bytes, records and state, the same
  // outcomes from both JS calls, and the input array unchanged but by
  // the in-place call's success.
  const m = await module();
  const cfg = Buffer.from(JSON.stringify(CONFIG));
  const [cp, cl] = m.put(cfg);
  const h = m.e.mp_mapper_new(cp, cl);
  assert.ok(h > 0, m.error());
  const copied = new js.PidMapper(CONFIG.topicId, CONFIG.partition, null);
  const headers = new js.PidMapper(CONFIG.topicId, CONFIG.partition, null);
  const next = rng(0x64b);
  const pids = [0n, 1n, 5n, -1n, (1n << 40n) - 1n, 1n << 40n, js.mapPid("A", 3n, 0)];
  let errors = 0;
  let changed = 0;
  // The options, plain booleans, are read by the fast path's reader: every
  // in-place call goes one of its two ways.
  const fastCalls = countFastCalls();
  for (let i = 0; i < 300; i++) {
    const parts = [];
    let size = 0;
    while (size < (64 << 10) + next(32 << 10)) {
      const pid = pids[next(pids.length)];
      const pad = next(8) === 0 ? next(70000) : next(4000);
      const b = next(6) === 0 ? batch(pid, { marker: next(2) }) : batch(pid, { txn: next(3) === 0, pad });
      parts.push(b);
      size += b.length;
    }
    const whole = concat(parts);
    // A flipped bit anywhere (most often in a header), or a cut tail.
    if (next(3) === 0) whole[next(4) === 0 ? next(whole.length) : next(61)] ^= 1 << next(8);
    const fetch = next(4) === 0 ? whole.slice(0, (64 << 10) + next(whole.length - (64 << 10) + 1)) : whole;
    const options = { strictCrc: next(8) === 0, complete: next(4) === 0, outcomes: next(3) !== 0 };
    const flags = (options.strictCrc ? 1 : 0) | (options.complete ? 2 : 0);
    const source = SOURCES[next(SOURCES.length)];
    const before = fetch.slice();
    const [sp, sl] = m.put(Buffer.from(source));
    const [bp, bl] = m.put(fetch);
    const status = m.e.mp_rewrite(h, sp, sl, bp, bl, 1000n, flags);
    let a;
    let b;
    try {
      a = copied.rewriteBatches(source, fetch, 1000, options);
    } catch (err) {
      a = err.message;
    }
    assert.deepEqual(fetch, before, "rewriteBatches leaves its input as it was");
    try {
      b = headers.rewriteBatchesInPlace(source, fetch, 1000, options);
    } catch (err) {
      b = err.message;
    }
    if (status < 0) {
      errors += 1;
      assert.equal(a, m.error(), `case ${i}`);
      assert.equal(b, a, `case ${i}`);
      assert.deepEqual(fetch, before, "an error leaves the array as it was");
    } else {
      assert.equal(typeof a, "object", `case ${i}: the module consumed ${status}, rewriteBatches threw ${a}`);
      assert.equal(typeof b, "object", `case ${i}: the module consumed ${status}, in place threw ${b}`);
      assert.notEqual(a.bytes, fetch, "rewriteBatches returns a new array");
      assert.equal(b.bytes, fetch, "the caller's own array");
      const expected = m.mem().slice(bp, bp + bl);
      assert.deepEqual(a.bytes, expected, `case ${i}: the module's bytes`);
      assert.deepEqual(fetch, expected, `case ${i}: the module's bytes, in place`);
      const records = recordList(m.output(h));
      for (const r of [a, b]) {
        assert.equal(r.consumed, status);
        assert.deepEqual(
          r.records.map((x) => ({ key: x.key, value: x.value ?? null })),
          records,
        );
        assert.equal(r.snapshotRequired, m.e.mp_snapshot_required(h) === 1);
      }
      assert.deepEqual(b.batches, a.batches);
      assert.equal(b.batches.length === 0, !options.outcomes || status === 0, `case ${i}: outcomes when asked for`);
      if (!before.every((x, k) => x === fetch[k])) changed += 1;
    }
    for (const p of [sp, bp]) if (p > 0) m.e.mp_free(p);
    if (next(3) === 0) {
      const n = m.e.mp_confirm(h);
      assert.equal(copied.confirm(), n);
      assert.equal(headers.confirm(), n);
    }
    const len = m.e.mp_snapshot(h);
    const snapshot = m.output(h).subarray(0, len);
    assert.deepEqual(copied.snapshot(), snapshot);
    assert.deepEqual(headers.snapshot(), snapshot);
    assert.equal(headers.pending, m.e.mp_pending(h));
    assert.equal(copied.pending, m.e.mp_pending(h));
  }
  const { copy, windows } = fastCalls;
  assert.equal(copy + windows, 300, "every in-place call took the fast path");
  assert.ok(copy > 50 && windows > 30, `both of its ways were taken (${copy}, ${windows})`);
  assert.ok(errors > 10, `errors were met (${errors})`);
  assert.ok(changed > 20, `fetches were rewritten (${changed})`);
  copied.free();
  headers.free();
  m.e.mp_mapper_free(h);
});

test("rewriteBatchesInPlace's fast path answers as the module's mp_rewrite, and its outcomes as rewriteBatches'", async () => {
  // The common call (a string source, a plain time, plain options, fewer than
  // 64 KiB) takes the fast path (src/js/fast.rs, src/js/builders.js
  // `inPlace`): the fetch copied into the module's room, or each batch's
  // header window where the batches average 8 KiB or more (a sixth of the
  // fetches here are of such batches, whole, cut or flipped anywhere),
  // rewritten by a call of numbers, its changed bytes written back. Against the module
  // given the same fetch, and rewriteBatches on a mapper of its own (the
  // checked path, which also says the outcomes): the same answers, errors,
  // bytes, records and state, the outcomes both eager (up to eight
  // batches) and lazy (or none, when not asked for), sources that change
  // and sources the core refuses, time as a number or a BigInt, options,
  // and the array untouched by an error. MIRRORPID_DIFF_RUNS runs more,
  // each from its own seed.
  for (let run = 0; run < RUNS; run++) await fastPathRun(0xfa57 + 2 * run);
});

/** 3000 calls from `seed` through the fast path, each compared. */
async function fastPathRun(seed) {
  const m = await module();
  const cfg = Buffer.from(JSON.stringify(CONFIG));
  const [cp, cl] = m.put(cfg);
  const h = m.e.mp_mapper_new(cp, cl);
  assert.ok(h > 0, m.error());
  const fast = new js.PidMapper(CONFIG.topicId, CONFIG.partition, null);
  const checked = new js.PidMapper(CONFIG.topicId, CONFIG.partition, null);
  const next = rng(seed);
  const pids = [0n, 1n, 5n, 7n, -1n, (1n << 40n) - 1n, 1n << 40n, js.mapPid("A", 3n, 0), js.mapPid("B", 2n, 1)];
  const sources = [...SOURCES, "", "x".repeat(40000)];
  const counts = { errors: 0, eager: 0, lazy: 0, records: 0, bare: 0, windows: 0 };
  // The options the fast path reads itself (any other object goes to the
  // checked path), each as the module's flags say.
  const OPTIONS = [null, undefined, {}, { outcomes: false }, { complete: true }, { strictCrc: true, outcomes: true }];
  // Every call the fast path takes reaches the module through one of its
  // two ways.
  const fastCalls = countFastCalls();
  for (let i = 0; i < 3000; i++) {
    const parts = [];
    // Now and then a few large batches (under 64 KiB in all).
    const large = next(6) === 0;
    for (let n = large ? 1 + next(2) : next(next(3) === 0 ? 24 : 6); n > 0; n--) {
      const pid = next(3) === 0 ? BigInt(next(5000)) : pids[next(pids.length)];
      const pad = large ? 8000 + next(20000) : next(300);
      const b = next(5) === 0 ? batch(pid, { marker: next(2) }) : batch(pid, { txn: next(2) === 0, pad });
      new DataView(b.buffer).setBigInt64(0, BigInt(next(1 << 30)) * 1000n + BigInt(i));
      parts.push(b);
    }
    // A large fetch's last batch is the last window, shorter than the rest:
    // a marker read from its last byte.
    if (large && next(2) === 0) parts.push(batch(pids[next(pids.length)], { marker: next(2), tight: true }));
    const fetch = concat(parts);
    if (fetch.length > 0 && next(8) === 0) fetch[next(fetch.length)] ^= 1 << next(8);
    const cut = next(5) === 0 ? fetch.slice(0, next(fetch.length + 1)) : fetch;
    const source = next(10) === 0 ? sources[next(sources.length)] : SOURCES[next(SOURCES.length)];
    const now = next(2) === 0 ? 1000 + i : BigInt(1000 + i);
    const options = OPTIONS[next(OPTIONS.length)];
    const flags = (options?.strictCrc ? 1 : 0) | (options?.complete ? 2 : 0);
    const [sp, sl] = m.put(Buffer.from(source));
    const [bp, bl] = m.put(cut);
    const status = m.e.mp_rewrite(h, sp, sl, bp, bl, BigInt(now), flags);
    const say = (call) => {
      try {
        return call();
      } catch (err) {
        return err.message;
      }
    };
    const a = say(() => checked.rewriteBatches(source, cut, now, options));
    const own = cut.slice();
    const [copiesBefore, windowsBefore] = [fastCalls.copy, fastCalls.windows];
    const b = say(() => fast.rewriteBatchesInPlace(source, own, now, options));
    const windows = fastCalls.windows - windowsBefore;
    counts.windows += windows;
    if (options?.strictCrc) assert.equal(windows, 0, "a strict CRC check copies every byte");
    assert.equal(
      fastCalls.copy - copiesBefore + windows,
      cut.length > 0 ? 1 : 0,
      `case ${i}: the fast path took the call`,
    );
    if (options?.outcomes === false && typeof b === "object") {
      counts.bare += 1;
      assert.deepEqual(b.batches, [], "no outcomes asked for");
    }
    if (status < 0) {
      counts.errors += 1;
      assert.equal(a, m.error(), `case ${i}`);
      assert.equal(b, a, `case ${i}`);
      assert.deepEqual(own, cut, `case ${i}: an error leaves the array as it was`);
    } else {
      assert.equal(typeof b, "object", `case ${i}: the module consumed ${status}, the fast path threw ${b}`);
      assert.equal(b.bytes, own, "the caller's own array");
      assert.deepEqual(own, m.mem().slice(bp, bp + bl), `case ${i}: the module's bytes`);
      assert.equal(b.consumed, status);
      const records = recordList(m.output(h));
      counts.records += records.length > 0 ? 1 : 0;
      assert.deepEqual(
        b.records.map((r) => ({ key: r.key, value: r.value ?? null })),
        records,
      );
      assert.equal(b.snapshotRequired, m.e.mp_snapshot_required(h) === 1);
      const lazy = Object.getOwnPropertyDescriptor(b, "batches").get !== undefined;
      counts[lazy ? "lazy" : "eager"] += 1;
      assert.deepEqual(b.batches, a.batches, `case ${i}: the outcomes`);
      assert.equal(b.batches.length > 8, lazy, "lazy from nine batches");
    }
    for (const p of [sp, bp]) if (p > 0) m.e.mp_free(p);
    const end = next(6);
    if (end === 0) {
      const n = m.e.mp_confirm(h);
      assert.equal(fast.confirm(), n);
      assert.equal(checked.confirm(), n);
    } else if (end === 1) {
      const n = m.e.mp_abort(h);
      assert.equal(fast.abort(), n);
      assert.equal(checked.abort(), n);
    }
    const len = m.e.mp_snapshot(h);
    assert.deepEqual(fast.snapshot(), m.output(h).subarray(0, len), `case ${i}: the state`);
    assert.equal(fast.pending, m.e.mp_pending(h));
    assert.equal(checked.pending, m.e.mp_pending(h));
  }
  for (const [what, n] of Object.entries(counts)) assert.ok(n > 50, `${what}: ${n}`);
  fast.free();
  checked.free();
  m.e.mp_mapper_free(h);
}
