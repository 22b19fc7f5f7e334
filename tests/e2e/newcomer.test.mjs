// What a newcomer meets in the playground, at laptop and phone sizes in
// real headless Chromium (issue 25): edits the core refuses, long chains
// and two-way mirroring drawn readably, tables that say they scroll, a
// timeline whose numbers are labelled, the decoder's hex and origins,
// Import from the keyboard, the words explained, a bad preset named.
// Expected values come from the simulator run in Node (dist/node).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { openAt, overlaps, playground, ready, root, shots } from "./harness.mjs";

const require = createRequire(import.meta.url);
const m = require(`${root}/dist/node/mirrorpid.js`);
const presets = JSON.parse(readFileSync(`${root}/www/presets/index.json`, "utf8"));
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const env = playground();

const open = (hash, viewport = LAPTOP) => openAt(env, hash, viewport);

/** A chain of `n` clusters A -> B -> ..., each with a producer of PID 5. */
function chain(n) {
  const ids = [..."ABCDEFGH"].slice(0, n);
  return {
    name: `chain of ${n}`,
    clusters: ids.map((id) => ({ id })),
    links: ids.slice(1).map((id, i) => ({ from: ids[i], to: id })),
    producers: ids.map((c) => ({ id: `${c.toLowerCase()}5`, cluster: c, pid: "5" })),
    events: ids.map((c) => ({ type: "produce", producer: `${c.toLowerCase()}5` })),
  };
}

async function applyJson(page, scenario) {
  await page.locator("details.json-editor").evaluate((d) => (d.open = true));
  await page.getByTestId("json").fill(JSON.stringify(scenario));
  await page.getByTestId("apply-json").click();
}

/** The drawing's scale on the page (1: natural size) and its size in px. */
function drawing(page) {
  return page.evaluate(() => {
    const svg = document.querySelector("#topology");
    const r = svg.getBoundingClientRect();
    return {
      scale: r.width / svg.viewBox.baseVal.width,
      width: r.width,
      height: r.height,
      panel: document.querySelector("#svg-wrap").clientWidth,
      rows: Number(svg.dataset.rows),
      orientation: svg.dataset.orientation,
    };
  });
}

test("the editor refuses a PID the core refuses, and the page never claims there are no events", async () => {
  const page = await open("preset=seed-chain");
  const before = await page.getByTestId("producers").locator("li").count();
  await page.getByTestId("producer-id").fill("big");
  await page.getByTestId("producer-pid").fill(String(2 ** 40));
  await page.getByTestId("add-producer").click();
  const error = await page.getByTestId("error").textContent();
  assert.match(error, /^Not changed: .*PID 1099511627776 is out of range/);
  assert.equal(await page.getByTestId("producers").locator("li").count(), before, "the scenario is unchanged");
  assert.match(await page.getByTestId("time-label").textContent(), /After event \d+ of \d+/);
  // The same scenario pasted as JSON cannot run: the timeline says so.
  const bad = JSON.parse(readFileSync(`${root}/www/presets/seed-chain.json`, "utf8"));
  bad.producers[0].pid = String(2 ** 40);
  await applyJson(page, bad);
  assert.match(await page.getByTestId("error").textContent(), /out of range/);
  const label = await page.getByTestId("time-label").textContent();
  assert.match(label, /cannot run/);
  assert.doesNotMatch(label, /no events/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("chains of 5 and 8 clusters keep their text readable on a laptop and a phone", async () => {
  for (const n of [5, 8]) {
    for (const [name, viewport] of [
      ["laptop", LAPTOP],
      ["phone", PHONE],
    ]) {
      const page = await open("preset=seed-chain", viewport);
      await applyJson(page, chain(n));
      await page.waitForFunction((k) => document.querySelectorAll("#topology .cluster").length === k, n);
      const d = await drawing(page);
      assert.ok(d.scale >= 0.8, `${n} on a ${name}: scale ${d.scale}`);
      assert.ok(d.width <= d.panel + 1, `${n} on a ${name}: ${d.width} px in ${d.panel}`);
      if (name === "laptop") {
        assert.ok(d.rows >= 2, `${n}: wrapped into ${d.rows} rows`);
        assert.ok(d.width >= 0.6 * d.panel, `${n}: ${d.width} px of ${d.panel}, not a strip`);
        assert.ok(d.height < LAPTOP.height, `${n}: ${d.height} px tall`);
      }
      assert.deepEqual(await overlaps(page), [], `${n} on a ${name}`);
      // Every label is on the drawing with its PIDs, as the simulator says.
      const report = m.simulate(chain(n));
      const labels = await page.locator("#topology .link-label").count();
      assert.equal(labels, report.links.filter((l) => l.crossings.length).length);
      await page.locator(".topology-panel").screenshot({ path: `${shots}/chain-${n}-${name}.png` });
      assert.deepEqual(page.errors, []);
      await page.close();
    }
  }
});

test("two-way mirroring: both directions drawn, each carrying the other region's mapped PIDs", async () => {
  const scenario = JSON.parse(readFileSync(`${root}/www/presets/active-active.json`, "utf8"));
  const report = m.simulate(scenario);
  for (const viewport of [LAPTOP, PHONE]) {
    const page = await open("preset=active-active", viewport);
    for (const l of report.links) {
      const want = l.crossings.map((c) => [c.producer, c.pid.mirrorpid]);
      const got = await page
        .locator(`#topology .link-label[data-link="${l.from}->${l.to}"] .pid-pill`)
        .evaluateAll((ps) => ps.map((p) => [p.dataset.producer, p.dataset.pid]));
      assert.deepEqual(got, want, `${l.from}->${l.to}`);
      assert.equal(await page.locator(`#topology .link[data-link="${l.from}->${l.to}"] path[marker-end]`).count(), 1);
    }
    assert.deepEqual(await overlaps(page), []);
    assert.equal(report.totals.mirrorpid.total, 0);
    assert.ok(report.totals.verbatim.total > 0);
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});

test("every preset on a laptop and a phone: no table hides a column without saying it scrolls", async () => {
  for (const [name, viewport] of [
    ["laptop", LAPTOP],
    ["phone", PHONE],
  ]) {
    for (const p of presets) {
      const page = await open(`preset=${p}`, viewport);
      // Open every cluster's producer state too: its table is the widest.
      await page.locator("#topology .cluster-name").last().click();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const hidden = await page.evaluate(() => {
        const out = [];
        for (const table of document.querySelectorAll("main table")) {
          const box = table.closest(".scroll");
          const panel = table.closest(".panel").getBoundingClientRect();
          const cut = box
            ? table.scrollWidth > box.clientWidth + 1
            : table.getBoundingClientRect().right > panel.right + 1;
          if (!cut) continue;
          const hint = box?.previousElementSibling;
          const said = !!hint?.classList.contains("scroll-hint") && hint.getBoundingClientRect().height > 0;
          if (!said) out.push(table.className || table.closest("[data-testid]")?.dataset.testid);
        }
        return out;
      });
      assert.deepEqual(hidden, [], `${p} on a ${name}`);
      assert.ok(
        (await page.evaluate(() => document.documentElement.scrollWidth)) <= viewport.width,
        `${p} on a ${name}: the page does not scroll sideways`,
      );
      await page.screenshot({ path: `${shots}/page-${name}-${p}.png`, fullPage: true });
      assert.deepEqual(page.errors, [], `${p} on a ${name}`);
      await page.close();
    }
  }
});

test("on a phone a tapped cluster's panel comes into sight", async () => {
  const page = await open("preset=seed-chain", PHONE);
  // A, at the top of a drawing taller than the screen: its panel is far below.
  await page.locator(`#topology [data-cluster="A"] .cluster-name`).click();
  const box = await page.getByTestId("selection").boundingBox();
  assert.match(await page.getByTestId("selection").textContent(), /Partition at A/);
  assert.ok(box.y < PHONE.height && box.y + Math.min(box.height, 100) > 0, `panel at ${box.y}`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the timeline labels its numbers, and next corruption works under mirrorpid", async () => {
  const page = await open("preset=seed-chain");
  const report = m.simulate(JSON.parse(readFileSync(`${root}/www/presets/seed-chain.json`, "utf8")));
  assert.match(await page.locator("#now-counts").textContent(), /silent corruptions, per strategy/);
  assert.match(await page.getByTestId("marks-verbatim").textContent(), /^\d+ events?$/);
  assert.match(await page.locator(".tick-legend").textContent(), /events at which/);
  await page.getByTestId("time").focus();
  await page.keyboard.press("Home");
  assert.equal(await page.locator("input[name=strategy]:checked").getAttribute("value"), "mirrorpid");
  const next = page.getByTestId("time-next-corruption");
  assert.equal(await next.isDisabled(), false, "mirrorpid has none, the others do");
  await next.click();
  // The first event at which any strategy's count rose.
  let k = 0;
  while (["verbatim", "kip"].every((s) => report.timeline[k].totals[s] === 0)) k++;
  assert.match(await page.getByTestId("time-label").textContent(), new RegExp(`After event ${k + 1} of`));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the PID decoder: 64-bit hex, the origin cluster, no number broken across lines", async () => {
  const page = await open("preset=seed-chain");
  const decode = async (text) => {
    await page.getByTestId("pid-input").fill(text);
    await page.getByTestId("decode-pid").click();
    return page.getByTestId("pid-out").textContent();
  };
  assert.match(await decode("-5"), /0xfffffffffffffffb/);
  const mapped = m.mapPid("A", 5n, 0).toString();
  assert.match(await decode(mapped), /originA \(salt 0\)/);
  const resalted = m.mapPid("B", m.mapPid("A", 5n, 0), 2).toString();
  assert.match(await decode(resalted), /A \(re-salted 2\)/);
  assert.match(await decode(m.mapPid("elsewhere", 5n, 0).toString()), /none of this scenario's clusters/);
  // "bit 62" stays on one line.
  await decode(mapped);
  const lines = await page.evaluate(() => {
    const dd = [...document.querySelectorAll("#pid-out dd")].find((d) => d.textContent.includes("bit 62"));
    const node = dd.firstChild;
    const at = node.textContent.indexOf("62");
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + 2);
    return range.getClientRects().length;
  });
  assert.equal(lines, 1);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("Import works from the keyboard, the words are explained, a bad preset is named", async () => {
  const page = await env.page(LAPTOP);
  // Listening for the file chooser before anything happens: Playwright sets up
  // the interception asynchronously, and a key pressed before it would open a real dialog.
  const chooserOpens = page.waitForEvent("filechooser");
  await page.goto(`${env.base}#preset=nope`);
  await ready(page);
  assert.match(await page.getByTestId("error").textContent(), /no preset "nope".*showing seed-chain/);
  const scenario = chain(3);
  await page.getByTestId("import").focus();
  await page.keyboard.press("Enter");
  const chooser = await chooserOpens;
  await chooser.setFiles({
    name: "chain.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify(scenario)),
  });
  await page.waitForFunction(() => document.querySelectorAll("#topology .cluster").length === 3);
  const glossary = await page.getByTestId("glossary").textContent();
  for (const word of [
    "region",
    "pid40",
    "salt",
    "F v1",
    "REPLICATION",
    "-(pid+2)",
    "__mirror_state",
    "active-active",
  ]) {
    assert.ok(glossary.includes(word), word);
  }
  assert.doesNotMatch(await page.locator("body").textContent(), /docs\/DESIGN\.md|docs\/KAFKA\.md/);
  await page.getByTestId("plan-from-scenario").click();
  assert.equal(await page.locator("[data-testid=plan-probability] a").getAttribute("href"), "#g-region");
  assert.deepEqual(page.errors, []);
  await page.close();
});
