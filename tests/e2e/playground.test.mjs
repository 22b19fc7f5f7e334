// The playground in real headless Chromium: every preset's counts, editing
// through the UI, bad input, the decoders, and reloading from a shared URL.
// Screenshots go to tests/e2e/screenshots/ (git-ignored).
import { test } from "node:test";
import assert from "node:assert/strict";
import { countExportCalls, playground, ready, shots } from "./harness.mjs";

const env = playground();

// Totals per strategy (verbatim, -(pid+2), mirrorpid), silent corruptions
// then refusals: the same figures the native test tests/sim.rs pins kind by
// kind.
const PRESETS = {
  "seed-chain": [2, 14, 0, 5, 1, 0],
  failover: [0, 5, 0, 3, 1, 0],
  "fan-in": [4, 6, 0, 0, 0, 0],
  diamond: [4, 10, 0, 1, 1, 0],
  "region-collision": [3, 6, 0, 0, 0, 0],
  election: [3, 9, 0, 0, 0, 0],
  transactions: [4, 8, 0, 0, 0, 0],
  "active-active": [7, 13, 0, 2, 0, 0],
  "fleet-50": [40, 120, 0, 0, 0, 0],
};

async function totals(page) {
  const read = async (k) => Number(await page.getByTestId(`totals-${k}-total`).textContent());
  return [await read("verbatim"), await read("kip"), await read("mirrorpid")];
}

async function refused(page) {
  const read = async (k) => Number(await page.getByTestId(`refused-${k}-total`).textContent());
  return [await read("verbatim"), await read("kip"), await read("mirrorpid")];
}

test("every preset shows its corruption counts and mapping tables", async () => {
  const page = await env.page();
  await page.goto(env.base);
  await ready(page);
  const options = await page
    .locator("[data-testid=preset] option:not([disabled])")
    .evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(options, Object.keys(PRESETS));
  for (const [name, expected] of Object.entries(PRESETS)) {
    // Wait for this preset's scenario in the address (the status line
    // still says "Loaded preset" from the previous one).
    const before = await page.evaluate(() => location.hash);
    const shown = await page.getByTestId("preset").inputValue();
    await page.getByTestId("preset").selectOption(name);
    if (shown !== name) {
      await page.waitForFunction((prev) => location.hash.startsWith("#s=") && location.hash !== prev, before);
    }
    await page.waitForFunction(() => !!document.querySelector("[data-testid=totals-verbatim-total]"));
    assert.deepEqual([...(await totals(page)), ...(await refused(page))], expected, name);
    assert.equal(await page.getByTestId("error").isVisible(), false, `${name}: no error`);
    const rows = await page.getByTestId("identity-row").count();
    assert.ok(rows > 0, `${name}: mapped PID rows are shown`);
    await page.screenshot({ path: `${shots}/preset-${name}.png`, fullPage: true });
  }
  assert.deepEqual(page.errors, []);
});

test("a region collision is highlighted with its salt and record", async () => {
  const page = await env.page();
  await page.goto(env.base + "#preset=region-collision");
  await ready(page);
  const dest = page.getByTestId("partition-dest");
  const salted = dest.locator("tr.salted");
  await assert.doesNotReject(salted.first().waitFor());
  assert.equal(await salted.count(), 1);
  const text = await salted.textContent();
  assert.match(text, /cluster-2336/);
  assert.match(text, /6363006830846672901/, "the reference salt-1 PID");
  assert.match(text, /collision with cluster-2123/);
  await dest.locator("details.records summary").click();
  assert.match(await dest.locator("details.records").textContent(), /"collidingClusterId": "cluster-2123"/);
  await dest.screenshot({ path: `${shots}/collision-detail.png` });
});

test("editing through the UI: add a cluster, a link, a producer, an event", async () => {
  const page = await env.page();
  await page.goto(env.base + "#preset=fan-in");
  await ready(page);
  await page.getByTestId("cluster-id").fill("archive");
  await page.getByTestId("add-cluster").click();
  await page.locator("[data-testid=topology] [data-cluster=archive]").waitFor();
  await page.getByTestId("link-from").selectOption("central");
  await page.getByTestId("link-to").selectOption("archive");
  await page.getByTestId("add-link").click();
  await page.getByTestId("partition-archive").waitFor();
  await page.getByTestId("producer-id").fill("arch7");
  await page.getByTestId("producer-cluster").selectOption("east");
  await page.getByTestId("producer-pid").fill("7");
  await page.getByTestId("add-producer").click();
  await page.getByTestId("event-type").selectOption("produce");
  await page.getByTestId("event-target").selectOption("arch7");
  await page.getByTestId("event-count").fill("2");
  await page.getByTestId("add-event").click();
  const archive = page.getByTestId("partition-archive");
  await archive.getByText("arch7").first().waitFor();
  // At archive, east's 7 arrives mirrored through central and keeps east's region.
  const row = archive.locator("tr", { hasText: "arch7" });
  assert.match(await row.textContent(), /central/);
  const centralRow = page.getByTestId("partition-central").locator("tr", { hasText: "arch7" });
  const mappedAtCentral = (await centralRow.locator("td.pid .dec").textContent()).trim();
  assert.equal((await row.locator("td.pid .dec").textContent()).trim(), mappedAtCentral, "pass-through keeps the PID");
  // archive repeats central's mixing: verbatim 4 -> 8; -(pid+2) adds arch7's bypasses at
  // central (it is negative there), and archive's, where PIDs flip back positive.
  assert.deepEqual(await totals(page), [8, 12, 0]);
  await page.screenshot({ path: `${shots}/edited.png`, fullPage: true });
  assert.deepEqual(page.errors, []);
});

test("bad input shows clear messages instead of breaking", async () => {
  const page = await env.page();
  await page.goto(env.base + "#preset=fan-in");
  await ready(page);
  await page.locator("details.json-editor summary").click();
  await page.getByTestId("json").fill("{ not json");
  await page.getByTestId("apply-json").click();
  await assert.doesNotReject(page.getByTestId("error").waitFor());
  assert.match(await page.getByTestId("error").textContent(), /Invalid JSON/);
  const unknown = { clusters: [{ id: "A" }], links: [{ from: "A", to: "nowhere" }] };
  await page.getByTestId("json").fill(JSON.stringify(unknown));
  await page.getByTestId("apply-json").click();
  assert.match(await page.getByTestId("error").textContent(), /unknown cluster "nowhere"/);
  const big = {
    clusters: [{ id: "A" }, { id: "B" }],
    links: [{ from: "A", to: "B" }],
    producers: [{ id: "p", cluster: "A", pid: "1099511627776" }],
  };
  await page.getByTestId("json").fill(JSON.stringify(big));
  await page.getByTestId("apply-json").click();
  assert.match(await page.getByTestId("error").textContent(), /out of range/);
  assert.match(await page.getByTestId("results-error").textContent(), /out of range/);
  // The banner is in view where the user clicked (it is sticky), not only at the top.
  assert.ok(
    await page.getByTestId("error").evaluate((e) => {
      const r = e.getBoundingClientRect();
      return r.top >= 0 && r.bottom <= window.innerHeight;
    }),
    "error banner visible in the viewport",
  );
  await page.screenshot({ path: `${shots}/error.png` });
  // The page still works: a valid scenario clears the error.
  await page.getByTestId("preset").selectOption("diamond");
  await page.waitForFunction(() => document.querySelector("[data-testid=error]").hidden);
  assert.deepEqual([...(await totals(page)), ...(await refused(page))], PRESETS.diamond);
  // Bad producer PID typed in the form.
  await page.getByTestId("producer-id").fill("x");
  await page.getByTestId("producer-pid").fill("five");
  await page.getByTestId("add-producer").click();
  assert.match(await page.getByTestId("error").textContent(), /not an integer/);
  assert.deepEqual(page.errors, []);
});

test("hostile scenarios get a clear error within a second, and the page keeps working", async () => {
  const page = await env.page();
  await page.goto(env.base + "#preset=fan-in");
  await ready(page);
  await page.locator("details.json-editor summary").click();
  // Built in the page: a 100,000-cluster chain, 40 chained diamonds, a count of 2^32.
  const cases = [
    [
      "chain",
      `(() => {
        const clusters = Array.from({ length: 100000 }, (_, i) => ({ id: "c" + i }));
        const links = clusters.slice(1).map((c, i) => ({ from: "c" + i, to: c.id }));
        return { clusters, links, producers: [{ id: "p", cluster: "c0", pid: "5" }],
          events: [{ type: "produce", producer: "p" }] };
      })()`,
      /at most 500/,
    ],
    [
      "diamonds",
      `(() => {
        const clusters = [{ id: "d0" }], links = [];
        for (let i = 0; i < 40; i++) {
          for (const side of ["l", "r"]) {
            clusters.push({ id: side + i });
            links.push({ from: "d" + i, to: side + i }, { from: side + i, to: "d" + (i + 1) });
          }
          clusters.push({ id: "d" + (i + 1) });
        }
        return { clusters, links, producers: [{ id: "p", cluster: "d0", pid: "5" }],
          events: [{ type: "produce", producer: "p" }] };
      })()`,
      /250000 batch deliveries/,
    ],
    [
      "count",
      `({ clusters: [{ id: "A" }, { id: "B" }], links: [{ from: "A", to: "B" }],
          producers: [{ id: "p", cluster: "A", pid: "5" }],
          events: [{ type: "produce", producer: "p", count: 4294967296 }] })`,
      /count 4294967296 is outside/,
    ],
  ];
  for (const [name, build, expected] of cases) {
    const ms = await page.evaluate((code) => {
      const text = JSON.stringify(eval(code));
      document.querySelector("[data-testid=json]").value = text;
      const start = performance.now();
      document.querySelector("[data-testid=apply-json]").click();
      return performance.now() - start;
    }, build);
    assert.match(await page.getByTestId("error").textContent(), expected, name);
    assert.ok(ms < 1000, `${name}: ${ms} ms`);
  }
  // Still working: a preset loads and runs.
  await page.getByTestId("preset").selectOption("diamond");
  await page.waitForFunction(() => document.querySelector("[data-testid=error]").hidden);
});

test("rewriteBatchesInPlace's fast path in the browser answers as rewriteBatches", async () => {
  // The web build's glue carries the fast path too (scripts/finish-glue.py):
  // in Chromium, the package the page imports rewrites a fetch of two
  // batches in place alike through the fast path (null options, plain
  // options) and the checked path (a time as a decimal string); the fast
  // path copies two small batches whole and two of 16 KiB as their header
  // windows.
  const page = await env.page();
  // The fast path's two ways into the module, counted from before the page
  // instantiates it.
  const ways = ["pidmapper___fastRewrite", "pidmapper___fastRewriteHeaders"];
  await page.addInitScript(countExportCalls, ways);
  await page.goto(env.base);
  await ready(page);
  const out = await page.evaluate(async () => {
    const m = await import("mirrorpid");
    const fetchOf = (size) => {
      const f = new Uint8Array(2 * size);
      const v = new DataView(f.buffer);
      for (const i of [0, 1]) {
        v.setInt32(size * i + 8, size - 12);
        f[size * i + 16] = 2;
        v.setBigInt64(size * i + 43, BigInt(3 + i));
      }
      return f;
    };
    const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    const seen = (r, bytes) => ({
      bytes: hex(bytes),
      mapped: r.batches.map((b) => String(b.mappedPid)),
      records: r.records.length,
    });
    const topic = "bxw7Kp1OS3-KHC0-T1prfA";
    const before = { ...globalThis.exportCalls };
    const sizes = [];
    for (const size of [61, 16 << 10]) {
      const input = fetchOf(size);
      const expected = new m.PidMapper(topic, 0, null).rewriteBatches("A", input, 1, null);
      const runs = [];
      for (const [now, options] of [
        [1, null],
        [1n, { outcomes: true }],
        ["1", null],
      ]) {
        const bytes = fetchOf(size);
        const r = new m.PidMapper(topic, 0, null).rewriteBatchesInPlace("A", bytes, now, options);
        runs.push({ own: r.bytes === bytes, ...seen(r, bytes) });
      }
      sizes.push({ input: hex(input), expected: seen(expected, expected.bytes), runs });
    }
    const calls = {};
    for (const [name, n] of Object.entries(globalThis.exportCalls)) calls[name] = n - before[name];
    const hidden = ["__fastRewrite", "__fastSource", "__fastError"].filter((k) => k in m.PidMapper.prototype);
    return { sizes, calls, hidden };
  });
  assert.deepEqual(
    out.calls,
    { pidmapper___fastRewrite: 2, pidmapper___fastRewriteHeaders: 2 },
    "null and plain options take the fast path, a decimal-string time does not",
  );
  assert.deepEqual(out.hidden, [], "the fast path's entry points are not methods of PidMapper");
  for (const size of out.sizes) {
    assert.notEqual(size.expected.bytes, size.input, "the batches were rewritten");
    assert.equal(size.expected.records, 2);
    for (const run of size.runs) {
      assert.ok(run.own, "the caller's own array");
      assert.deepEqual({ bytes: run.bytes, mapped: run.mapped, records: run.records }, size.expected);
    }
  }
});

test("decoders: a PID and a __mirror_state record", async () => {
  const page = await env.page();
  await page.goto(env.base);
  await ready(page);
  await page.getByTestId("pid-input").fill("8373639764095533061");
  await page.getByTestId("decode-pid").click();
  const pid = await page.getByTestId("pid-out").textContent();
  assert.match(pid, /mapped by an upstream hop/);
  assert.match(pid, /0x7435250000000005/);
  assert.match(pid, /0x343525/);
  assert.match(pid, /pid40\s*5/);
  await page
    .getByTestId("record-key")
    .fill("00036f1c3b2a9d4e4b7f8a1c2d3e4f5a6b7c00000000000c636c75737465722d323333360000000000000005");
  await page.getByTestId("record-value").fill("000000000000000000010d636c75737465722d323132330000019acea0400000");
  await page.getByTestId("decode-record").click();
  const rec = JSON.parse(await page.getByTestId("record-out").textContent());
  assert.deepEqual(rec, {
    key: { topicId: "bxw7Kp1OS3-KHC0-T1prfA", partition: 0, sourceClusterId: "cluster-2336", originalPid: "5" },
    value: { salt: 1, collidingClusterId: "cluster-2123", timestampMs: "1764403200000" },
  });
  await page.getByTestId("record-key").fill("0003ff");
  await page.getByTestId("decode-record").click();
  assert.match(await page.getByTestId("record-out").textContent(), /^Truncated/);
  await page.getByTestId("pid-input").fill("12abc");
  await page.getByTestId("decode-pid").click();
  assert.match(await page.getByTestId("pid-out").textContent(), /decimal integer/);
  await page.locator(".decoders").screenshot({ path: `${shots}/decoders.png` });
});

test("a shared URL reloads the same scenario", async () => {
  const page = await env.page();
  await page.goto(env.base + "#preset=transactions");
  await ready(page);
  await page.getByTestId("event-type").selectOption("abort");
  await page.getByTestId("event-target").selectOption("east-tx");
  await page.getByTestId("add-event").click();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=events] li").length === 8);
  const url = page.url();
  assert.match(url, /#s=/);
  const counts = await totals(page);
  const other = await env.page({ width: 390, height: 844 });
  await other.goto(url);
  await ready(other);
  assert.equal(await other.locator("[data-testid=events] li").count(), 8);
  assert.deepEqual(await totals(other), counts);
  assert.match(await other.locator("#status").textContent(), /from the link/);
  await other.screenshot({ path: `${shots}/phone-shared.png`, fullPage: true });
  const overflow = await other.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling on a phone (overflow ${overflow}px)`);
  // A broken link falls back to a preset with a message.
  const broken = await env.page();
  await broken.goto(env.base + "#s=%%%not-base64");
  await ready(broken);
  assert.match(await broken.getByTestId("error").textContent(), /could not be read/);
});
