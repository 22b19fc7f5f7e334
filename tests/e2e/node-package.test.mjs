// The Node package (dist/node, wasm-pack --target nodejs) as a Node user
// loads it: require() it, map every reference vector, round-trip a record.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { root } from "./harness.mjs";

const require = createRequire(import.meta.url);
const m = require(`${root}/dist/node/mirrorpid.js`);
const vectors = JSON.parse(readFileSync(`${root}/tests/vectors/mapping.json`, "utf8"));
const records = JSON.parse(readFileSync(`${root}/tests/vectors/records.json`, "utf8"));

// A fetch of minimal v2 batches (61 bytes, no records; the CRC is patched,
// not checked), one of each producer ID in `pids`, in order.
function minimalFetch(pids) {
  const fetch = new Uint8Array(61 * pids.length);
  const view = new DataView(fetch.buffer);
  pids.forEach((pid, i) => {
    view.setInt32(61 * i + 8, 49);
    fetch[61 * i + 16] = 2;
    view.setBigInt64(61 * i + 43, pid);
  });
  return fetch;
}

test("every F vector through mapPid in Node", () => {
  assert.ok(vectors.f.length > 200);
  for (const v of vectors.f) {
    assert.equal(m.mapPid(v.source, BigInt(v.pid), v.salt), BigInt(v.mapped), `F(${v.source}, ${v.pid}, ${v.salt})`);
  }
});

test("regionOwners names the cluster and salt of every F vector's region, and refuses what is no region", () => {
  const local = vectors.f.filter((v) => BigInt(v.pid) >= 0n && BigInt(v.pid) < 1n << 40n);
  assert.ok(local.length > 100);
  for (const v of local) {
    const { region } = m.decodePid(BigInt(v.mapped));
    const owners = m.regionOwners(region, `# a fleet\nsomeone-else\n${v.source}\n`);
    assert.ok(
      owners.some((o) => o.cluster === v.source && o.salt === v.salt && o.via === "local"),
      `${v.source} at salt ${v.salt}: ${JSON.stringify(owners)}`,
    );
  }
  // A producer mirrored from A (salt 0) and re-salted by a later hop at salt 5.
  const home = m.decodePid(m.mapPid("A", 7n, 0)).region;
  const resalted = m.decodePid(m.mapPid("B", (1n << 62n) | (BigInt(home) << 40n) | 7n, 5)).region;
  assert.deepEqual(
    m.regionOwners(resalted, "A").filter((o) => o.via === "mirrored"),
    [{ cluster: "A", salt: 5, via: "mirrored" }],
  );
  assert.deepEqual(m.regionOwners(resalted, ""), []);
  for (const bad of [-1, 1 << 22, 1.5, "3", null, 3n]) {
    assert.throws(() => m.regionOwners(bad, "A"), { message: /^InvalidInput: region / }, String(bad));
  }
  assert.throws(() => m.regionOwners(0, ["A"]), { message: /^InvalidInput: ids / });
});

test("PidMapper scenarios and records in Node", () => {
  for (const s of vectors.scenarios) {
    const mapper = new m.PidMapper(records.topicIdBase64, 0, {});
    for (const step of s.steps) {
      const out = mapper.map(step.source, BigInt(step.pid), 1000);
      assert.equal(out.mapped, BigInt(step.mapped), s.name);
      assert.equal(out.salt, step.salt, s.name);
      assert.equal(out.collision ? out.collision.collidingClusterId : null, step.collidingCluster, s.name);
      // Each step is a host's call: its record made durable, then confirmed.
      mapper.confirm();
    }
  }
  for (const r of records.records) {
    const hex = (h) => Uint8Array.from(h.match(/../g), (b) => parseInt(b, 16));
    const json = m.decodeRecord(hex(r.keyHex), r.valueHex ? hex(r.valueHex) : null);
    // The vectors give the salt as a string (0.1's form); it is a number now.
    const want = r.json.value ? { ...r.json, value: { ...r.json.value, salt: Number(r.json.value.salt) } } : r.json;
    assert.deepEqual(json, want);
    const enc = m.encodeRecord(r.json);
    assert.deepEqual(Buffer.from(enc.key).toString("hex"), r.keyHex);
    assert.equal(enc.value ? Buffer.from(enc.value).toString("hex") : null, r.valueHex);
  }
  assert.throws(
    () => m.mapPid("A", 1n << 40n, 0),
    (e) => e instanceof Error && /^PidOutOfRange/.test(e.message),
  );
});

test("rewriteBatchesInPlace rewrites a Node Buffer where it lies", () => {
  // Two minimal v2 batches, producers 3 and 4, in a Buffer from Node's
  // shared pool: a view at a non-zero offset of a larger ArrayBuffer.
  const fetch = minimalFetch([3n, 4n]);
  const pooled = Buffer.from(fetch);
  const neighbours = Buffer.from(pooled.buffer, 0, pooled.byteOffset).toString("hex");
  assert.ok(pooled.byteOffset > 0 || pooled.buffer.byteLength > pooled.length, "a pooled Buffer");
  const copying = new m.PidMapper(records.topicIdBase64, 0, null);
  const inPlace = new m.PidMapper(records.topicIdBase64, 0, null);
  const expected = copying.rewriteBatches("A", fetch, 0, null);
  const out = inPlace.rewriteBatchesInPlace("A", pooled, 0, null);
  assert.equal(out.bytes, pooled);
  assert.deepEqual(Buffer.from(expected.bytes), pooled);
  assert.notDeepEqual(Buffer.from(fetch), pooled);
  assert.deepEqual(out.batches, expected.batches);
  assert.equal(out.records.length, 2);
  assert.equal(Buffer.from(pooled.buffer, 0, pooled.byteOffset).toString("hex"), neighbours);
  assert.throws(
    () => inPlace.rewriteBatchesInPlace("A", [1, 2, 3], 0, null),
    (e) => e instanceof Error && /^InvalidInput/.test(e.message),
  );
  // A detached array (its buffer transferred away) reads as empty: an
  // empty rewrite, not a trap.
  const detached = new Uint8Array(fetch);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  assert.equal(detached.length, 0);
  assert.equal(inPlace.rewriteBatchesInPlace("A", detached, 0, null).consumed, 0);
  assert.equal(copying.rewriteBatches("A", detached, 0, null).consumed, 0);
  assert.equal(copying.rewriteBatches("A", fetch, 0, null).consumed, 122, "still usable");
  inPlace.confirm();
  assert.equal(inPlace.size, 2);
});

test("rewriteBatchesInPlace's fast path: shared room, a freed mapper, a foreign this, arrays that are not what they seem", () => {
  // Two minimal v2 batches of producer `pid` and `pid + 1` (122 bytes).
  const fetchOf = (pid) => minimalFetch([pid, pid + 1n]);
  const fresh = () => new m.PidMapper(records.topicIdBase64, 0, null);
  const a = fresh();
  const b = fresh();
  // The two mappers' fast calls share the module's room: interleaved, each
  // answers as a fresh mapper's checked call would.
  const seen = new Map();
  const [boundA, boundB] = [new Set(), new Set()];
  for (const [x, source, pid] of [
    [a, "A", 3n],
    [b, "B", 4n],
    [a, "B", 5n],
    [b, "A", 3n],
    [a, "A", 3n],
  ]) {
    const bytes = fetchOf(pid);
    const out = x.rewriteBatchesInPlace(source, bytes, 1, null);
    const key = `${source}/${pid}`;
    if (!seen.has(key)) seen.set(key, fresh().rewriteBatches(source, fetchOf(pid), 1, null));
    const expected = seen.get(key);
    assert.equal(out.bytes, bytes);
    assert.deepEqual(bytes, expected.bytes, key);
    assert.deepEqual(out.batches, expected.batches, key);
    // Two new bindings the first time a mapper sees the pair, none once
    // they are confirmed.
    const bound = x === a ? boundA : boundB;
    assert.equal(out.records.length, bound.has(key) ? 0 : 2, key);
    bound.add(key);
    x.confirm();
  }
  const state = b.snapshot();
  // A freed mapper: BadHandle, and nothing of another mapper's changed.
  a.free();
  const untouched = fetchOf(3n);
  assert.throws(
    () => a.rewriteBatchesInPlace("A", untouched, 1, null),
    (e) => /^BadHandle/.test(e.message),
  );
  assert.deepEqual(untouched, fetchOf(3n), "a freed mapper's call writes nothing");
  assert.throws(
    () => m.PidMapper.prototype.rewriteBatchesInPlace.call({}, "A", fetchOf(3n), 1, null),
    (e) => /^BadHandle/.test(e.message),
  );
  assert.deepEqual(b.snapshot(), state);
  // The fast path's entry points are its own: no method, static or own
  // property of a mapper reaches them.
  const reachable = (o) => Object.getOwnPropertyNames(o).filter((k) => /fast/i.test(k));
  assert.deepEqual([m.PidMapper.prototype, m.PidMapper, b, m].flatMap(reachable), []);
  // An Int16Array whose prototype says Uint8Array: its bytes are rewritten,
  // as the checked path reads them, not its 16-bit elements.
  const odd = new Int16Array(fetchOf(4n).buffer);
  Object.setPrototypeOf(odd, Uint8Array.prototype);
  b.rewriteBatchesInPlace("B", odd, 1, null);
  assert.deepEqual(new Uint8Array(odd.buffer), seen.get("B/4").bytes);
  // A time past 64 bits, or a number that is not a safe integer: the
  // checked path's error, the array untouched.
  for (const now of [2n ** 63n, 2 ** 60, 1.5, "1"]) {
    const bytes = fetchOf(4n);
    if (now === "1") {
      assert.equal(b.rewriteBatchesInPlace("B", bytes, now, null).consumed, 122, "a decimal string");
      continue;
    }
    assert.throws(
      () => b.rewriteBatchesInPlace("B", bytes, now, null),
      (e) => /^InvalidInput: nowMs/.test(e.message),
      String(now),
    );
    assert.deepEqual(bytes, fetchOf(4n));
  }
  assert.deepEqual(b.snapshot(), state, "no binding was added");
  // Options the fast path does not read itself go to the checked path,
  // which reads them as it always has: its typed errors, the array
  // untouched; and plain options are honoured by both.
  const evil = () => {
    throw new Error("evil");
  };
  for (const [options, error] of [
    [{ outcomes: "no" }, /^InvalidInput: rewriteBatches options: /],
    [{ outcome: false }, /^InvalidInput: rewriteBatches options: unknown option "outcome"/],
    [
      {
        get outcomes() {
          return evil();
        },
      },
      /^InvalidInput: rewriteBatches options cannot be read/,
    ],
    [new Proxy({}, { getPrototypeOf: evil }), /^InvalidInput: rewriteBatches options/],
    [[], /^InvalidInput: rewriteBatches options must be a plain object/],
  ]) {
    const bytes = fetchOf(4n);
    assert.throws(
      () => b.rewriteBatchesInPlace("B", bytes, 1, options),
      (e) => error.test(e.message),
      String(error),
    );
    assert.deepEqual(bytes, fetchOf(4n));
  }
  for (const options of [{ outcomes: false }, Object.assign(Object.create(null), { outcomes: false })]) {
    const bytes = fetchOf(4n);
    const out = b.rewriteBatchesInPlace("B", bytes, 1, options);
    assert.deepEqual(out.batches, []);
    assert.deepEqual(bytes, seen.get("B/4").bytes);
  }
  for (const options of [{}, { outcomes: true }, { strictCrc: false, complete: false, outcomes: true }]) {
    assert.equal(b.rewriteBatchesInPlace("B", fetchOf(4n), 1, options).batches.length, 2, JSON.stringify(options));
  }
  b.free();
});

test("results stay right when WASM memory grows between and inside calls", () => {
  // The builders keep views of WASM memory and make them again after a
  // grow detaches the old buffer: a small rewrite (views made), then a
  // fetch larger than anything before (the module's memory grows while
  // the fetch is copied in), then small ones again, each checked against
  // its own bytes.
  const batchOf = (size, pid) => {
    const b = new Uint8Array(size);
    const v = new DataView(b.buffer);
    v.setInt32(8, size - 12);
    b[16] = 2;
    v.setBigInt64(43, pid);
    for (let i = 61; i < size; i += 4099) b[i] = i & 255; // records the rewrite must not touch
    return b;
  };
  const check = (input, out) => {
    const v = new DataView(out.bytes.buffer, out.bytes.byteOffset, out.bytes.byteLength);
    assert.equal(out.consumed, input.length);
    assert.equal(out.batches.length, 1);
    assert.equal(v.getBigInt64(43), out.batches[0].mappedPid);
    assert.notEqual(out.batches[0].mappedPid, out.batches[0].originalPid);
    const same = (from, to) =>
      Buffer.compare(Buffer.from(input.subarray(from, to)), Buffer.from(out.bytes.subarray(from, to)));
    assert.equal(same(0, 17), 0);
    assert.equal(same(21, 43), 0);
    assert.equal(same(51, input.length), 0);
  };
  const mapper = new m.PidMapper(records.topicIdBase64, 0, null);
  const small = batchOf(256, 9n);
  const first = mapper.rewriteBatches("A", small, 0, null);
  check(small, first);
  mapper.confirm();
  const big = batchOf(24 << 20, 10n);
  check(big, mapper.rewriteBatches("A", big, 0, null));
  mapper.confirm();
  const again = mapper.rewriteBatches("A", small, 0, null);
  check(small, again);
  assert.deepEqual(again.bytes, first.bytes);
  const own = small.slice();
  check(small, mapper.rewriteBatchesInPlace("A", own, 0, null));
  assert.deepEqual(own, first.bytes);
});

test("each batch's outcome names its own producer IDs, whichever came before", () => {
  // The builders share one BigInt between outcomes of the same producer
  // ID: IDs that differ only in their high or their low word, the ID 0
  // (the shared one's first value), a batch without a producer (-1), in
  // fetches built at once (up to eight batches) and when first read, by
  // both rewrites, one after another.
  const pids = [5n, 5n + (1n << 32n), 5n, 1n << 32n, 0n, -1n, 5n + (1n << 32n), 6n];
  const check = (list, out, what) => {
    const view = new DataView(out.bytes.buffer, out.bytes.byteOffset, out.bytes.byteLength);
    assert.equal(out.batches.length, list.length, what);
    list.forEach((pid, i) => {
      const batch = out.batches[i];
      assert.equal(batch.offset, 61 * i, what);
      assert.equal(batch.originalPid, pid, `${what}: batch ${i}'s original producer ID`);
      assert.equal(batch.mappedPid, view.getBigInt64(61 * i + 43), `${what}: batch ${i}'s mapped producer ID`);
      assert.equal(batch.mappedPid === pid, pid < 0n, `${what}: batch ${i} mapped unless it has no producer`);
    });
  };
  const mapper = new m.PidMapper(records.topicIdBase64, 0, null);
  for (const list of [pids, [...pids, ...pids.toReversed()], pids.toReversed()]) {
    const fetch = minimalFetch(list);
    check(list, mapper.rewriteBatches("A", fetch, 0, null), `${list.length} batches, copied`);
    check(list, mapper.rewriteBatchesInPlace("A", fetch.slice(), 0, null), `${list.length} batches, in place`);
  }
  for (const pid of [...pids, ...pids]) {
    check([pid], mapper.rewriteBatchesInPlace("A", minimalFetch([pid]), 0, null), `one batch of ${pid}`);
  }
  mapper.confirm();
});

test("a key inherited from a changed Object.prototype is no option, on any path", () => {
  // Options are the object's own keys, as Object.keys lists them: the fast
  // path passes over an inherited key, the checked path reads own keys only
  // (a copy without a prototype), for the mapper's options as for a
  // rewrite's; an inherited key that is no option is no error either. Each
  // kind of inherited key alone: an unknown one sends a fast call to the
  // checked path, where an inherited option would be read.
  const rewrites = (mapper) => {
    for (const options of [{}, { complete: false }, null]) {
      const small = mapper.rewriteBatchesInPlace("A", minimalFetch([1n, 2n]), 1, options);
      assert.equal(small.batches.length, 2, `${JSON.stringify(options)}: outcomes, as by default`);
      const large = mapper.rewriteBatchesInPlace("A", minimalFetch(Array.from({ length: 1100 }, () => 3n)), 1, options);
      assert.equal(large.batches.length, 1100, `${JSON.stringify(options)}: outcomes, through the headers`);
      mapper.confirm();
    }
  };
  const inherited = (key, value, run) => {
    Object.prototype[key] = value;
    try {
      run();
    } finally {
      delete Object.prototype[key];
    }
  };
  inherited("outcomes", false, () => rewrites(new m.PidMapper(records.topicIdBase64, 0, null)));
  inherited("strictCRC", true, () => rewrites(new m.PidMapper(records.topicIdBase64, 0, null)));
  inherited("maxBindings", 1, () => {
    const mapper = new m.PidMapper(records.topicIdBase64, 0, {});
    rewrites(mapper);
    assert.equal(mapper.size, 3, "no bound on the bindings");
  });
});

test("hostile arguments are typed errors and leave the mapper usable", () => {
  // A minimal v2 batch of producer 3 (no records; the CRC is patched).
  const fetch = new Uint8Array(61);
  new DataView(fetch.buffer).setInt32(8, 49);
  fetch[16] = 2;
  fetch[50] = 3;
  const evil = (what) => {
    throw new Error(`evil ${what}`);
  };
  class Sneaky extends Uint8Array {
    set() {
      evil("set");
    }
    subarray() {
      evil("subarray");
    }
    get length() {
      return evil("length");
    }
  }
  const calls = {
    "an options getter that throws": (x) =>
      x.rewriteBatches("A", fetch, 0, {
        get strictCrc() {
          return evil("getter");
        },
      }),
    "an options proxy that throws": (x) =>
      x.rewriteBatches("A", fetch, 0, new Proxy({}, { ownKeys: () => evil("ownKeys") })),
    "a nested options getter": () =>
      new m.PidMapper(records.topicIdBase64, 0, {
        origins: {
          A: {
            get 0() {
              return evil("item");
            },
            length: 1,
          },
        },
      }),
    "a source that is not a string": (x) => x.map({ toString: () => evil("toString") }, 1, 2),
    "a source number in a rewrite": (x) => x.rewriteBatchesInPlace(7, new Uint8Array(fetch), 0, null),
    "a topic ID that is not a string": () => new m.PidMapper({ toString: () => records.topicIdBase64 }, 0, null),
    "mapPid of a non-string": () => m.mapPid(["A"], 5n, 0),
    // Array-likes claiming a negative or huge length: wasm-bindgen's own
    // byte-slice conversion allocated that much and trapped.
    "input claiming length -1": (x) => x.rewriteBatches("A", { length: -1 }, 0, null),
    "input claiming length 1e12": (x) => x.rewriteBatches("A", { length: 1e12 }, 0, null),
    "a record key claiming length -1": (x) => x.loadRecord({ length: -1 }, null),
    "a record value claiming length 1e12": (x) => x.loadRecord(new Uint8Array(3), { length: 1e12 }),
    "a snapshot claiming length 1e12": () => m.PidMapper.restore({ length: 1e12 }),
    "decodeRecord of an array-like": () => m.decodeRecord({ length: -1 }, null),
  };
  for (const [name, call] of Object.entries(calls)) {
    const x = new m.PidMapper(records.topicIdBase64, 0, null);
    assert.throws(
      () => call(x),
      (e) => e instanceof Error && /^InvalidInput/.test(e.message),
      name,
    );
    assert.equal(x.rewriteBatches("A", fetch, 0, null).consumed, 61, `${name}: the mapper is still usable`);
  }
  // A subclass's own set, subarray and length never run: the bytes are
  // read and written through the intrinsic view.
  const x = new m.PidMapper(records.topicIdBase64, 0, null);
  const sneaky = new Sneaky(fetch);
  const out = x.rewriteBatchesInPlace("A", sneaky, 0, null);
  assert.equal(out.consumed, 61);
  const plain = new m.PidMapper(records.topicIdBase64, 0, null).rewriteBatches("A", fetch, 0, null);
  assert.deepEqual(Buffer.from(sneaky.buffer), Buffer.from(plain.bytes));
  // The same for a record's value: read, not asked its length (the key is
  // what is wrong here).
  assert.throws(
    () => x.loadRecord(new Uint8Array([0, 3, 1]), new Sneaky(3)),
    (e) => /^Truncated/.test(e.message),
  );
  assert.equal(x.rewriteBatches("A", fetch, 0, null).consumed, 61);
});

test("a mapper's last source is remembered by its string value, nothing else", () => {
  // map and the rewrites keep the last sourceClusterId's text and reuse it
  // for the same string (===): a String object, an object that converts to
  // it, or another source must never take it.
  const fetch = new Uint8Array(61);
  new DataView(fetch.buffer).setInt32(8, 49);
  fetch[16] = 2;
  fetch[50] = 3;
  const fresh = (source) => new m.PidMapper(records.topicIdBase64, 0, null).map(source, 5n, 1).mapped;
  const x = new m.PidMapper(records.topicIdBase64, 0, null);
  const a = x.map("A", 5n, 1).mapped;
  assert.equal(a, fresh("A"));
  for (const notString of [new String("A"), { toString: () => "A" }, ["A"]]) {
    assert.throws(
      () => x.map(notString, 5n, 1),
      (e) => /^InvalidInput/.test(e.message),
    );
    assert.throws(
      () => x.rewriteBatches(notString, fetch, 1, null),
      (e) => /^InvalidInput/.test(e.message),
    );
  }
  assert.equal(x.map(["A"].join(""), 5n, 1).mapped, a, "an equal string made at run time");
  const b = x.map("B", 5n, 1).mapped;
  assert.equal(b, fresh("B"));
  assert.notEqual(a, b);
  x.confirm();
  // Alternating sources in rewrites: each batch under its own source.
  for (const source of ["A", "B", "A", "B"]) {
    const out = x.rewriteBatchesInPlace(source, new Uint8Array(fetch), 1, null);
    const y = new m.PidMapper(records.topicIdBase64, 0, null);
    assert.equal(out.batches[0].mappedPid, y.rewriteBatches(source, fetch, 1, null).batches[0].mappedPid, source);
  }
});

// Issue 22: the JS API coerced instead of checking. Every value it took
// for a partition or a salt by coercion, and options that are not a plain
// object, are refused with a named error, and a mapper a failed call was
// made on is unchanged.
test("partitions, salts and options are checked as the core checks them, never coerced", () => {
  const topic = records.topicIdBase64;
  const notPartitions = [
    2 ** 32 + 3,
    2 ** 31,
    -1,
    1.5,
    true,
    false,
    NaN,
    Infinity,
    -Infinity,
    null,
    undefined,
    2 ** 53,
    -0.5,
    "0",
    0n,
    {},
    [],
  ];
  for (const p of notPartitions) {
    assert.throws(
      () => new m.PidMapper(topic, p, null),
      (e) => e instanceof Error && /^InvalidInput: partition /.test(e.message),
      `partition ${String(p)}`,
    );
  }
  for (const p of [0, 3, 2 ** 31 - 1]) {
    const mapper = new m.PidMapper(topic, p, null);
    const { record } = mapper.map("A", 5n, 1);
    assert.equal(m.decodeRecord(record.key, record.value).key.partition, p);
    mapper.free();
  }
  const notSalts = [64, -1, 255, 1.5, 2 ** 32, NaN, Infinity, 1n, "1", null, undefined, true];
  for (const salt of notSalts) {
    assert.throws(
      () => m.mapPid("A", 1n, salt),
      (e) => e instanceof Error && /^(InvalidSalt|InvalidInput): /.test(e.message),
      `salt ${String(salt)}`,
    );
  }
  assert.throws(
    () => m.mapPid("A", 1n, 64),
    (e) => /^InvalidSalt: salt 64 is outside 0 to 63/.test(e.message),
  );
  assert.equal(m.mapPid("A", 5n, 0), 0x7435250000000005n);
  assert.equal(typeof m.mapPid("A", 5n, 63), "bigint");
  class Options {}
  for (const options of [[], [1], () => ({}), new Date(0), new Map(), new Options(), 5, "{}", true]) {
    assert.throws(
      () => new m.PidMapper(topic, 0, options),
      (e) => e instanceof Error && /^InvalidInput: PidMapper options must be a plain object or null/.test(e.message),
      `options ${String(options)}`,
    );
  }
  new m.PidMapper(topic, 0, Object.create(null)).free();
  new m.PidMapper(topic, 0, {}).free();
  new m.PidMapper(topic, 0).free();
  // Rewrite options likewise, with the mapper unchanged by the refusal.
  const mapper = new m.PidMapper(topic, 0, null);
  mapper.map("A", 1n, 1);
  mapper.confirm();
  const before = Buffer.from(mapper.snapshot()).toString("hex");
  for (const options of [[], new Date(0), 7]) {
    assert.throws(
      () => mapper.rewriteBatches("A", new Uint8Array(0), 1, options),
      (e) => /^InvalidInput: rewriteBatches options must be a plain object or null/.test(e.message),
    );
  }
  assert.equal(Buffer.from(mapper.snapshot()).toString("hex"), before);
  assert.equal(mapper.size, 1);
  // A freed mapper names its error, as every other error does.
  mapper.free();
  for (const call of [
    () => mapper.map("A", 1n, 1),
    () => mapper.snapshot(),
    () => mapper.size,
    () => mapper.confirm(),
  ]) {
    assert.throws(call, (e) => e instanceof Error && /^BadHandle: this PidMapper was freed/.test(e.message));
  }
});
